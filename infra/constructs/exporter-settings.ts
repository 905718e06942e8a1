/**
 * Pure pieces of the exporter: the runtime configuration and environment handed to the function, the
 * esbuild options, how the secret is referenced, and the IAM statements. The construct only wires them.
 */
import { createHash } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ArnFormat, type Stack } from 'aws-cdk-lib'
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam'
import { type BundlingOptions, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs'
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager'
import {
  type ExportConfig,
  LambdaEnvironment,
  METRICS_NAMESPACE,
  NODE_RUNTIME_FLAGS,
  RAW_FOLDER,
} from '../../functions/export/index.ts'

/** Where Lambda unpacks the bundle. */
export const LAMBDA_TASK_ROOT = '/var/task'
/** File name of the extra CA certificates inside the bundle. */
export const BUNDLED_CA_CERTIFICATES = 'ca-certificates.pem'
/** File name of the runtime configuration inside the bundle: a file has no 4 KB limit, an environment variable does. */
export const BUNDLED_EXPORT_CONFIG = 'export-config.json'

/** The sections of the parsed configuration the function reads at run time. */
export type RuntimeSections = Pick<ExportConfig, 'source' | 'tables' | 'export' | 'limits' | 'warehouse'>

/** What the function reads at run time (the bundled export-config.json). */
export const runtimeConfig = (config: RuntimeSections, bundledCaCertificates: string | undefined) => ({
  source:
    bundledCaCertificates === undefined
      ? config.source
      : { ...config.source, caCertificatesFile: bundledCaCertificates },
  // A table's schedule and memory shape the stack, not the run.
  tables: config.tables.map(({ schedule: _schedule, memoryMb: _memoryMb, ...table }) => table),
  export: config.export,
  limits: config.limits,
  warehouse: config.warehouse,
})

export interface FunctionEnvironmentInput {
  readonly bucketName: string
  readonly secretArn: string
  /** The pseudonymization key's secret, when a table pseudonymizes. */
  readonly pseudonymizationSecretArn?: string | undefined
  readonly serviceName: string
  /** Path of the CA bundle inside the function, when one is bundled. */
  readonly bundledCaCertificates?: string | undefined
  /** Whether the bundle carries a source map to enable. @default false */
  readonly sourceMaps?: boolean
}

/** Every environment variable of the function. */
export const functionEnvironment = (input: FunctionEnvironmentInput): Record<string, string> => ({
  [LambdaEnvironment.EXPORT_CONFIG_FILE]: BUNDLED_EXPORT_CONFIG,
  [LambdaEnvironment.WAREHOUSE_BUCKET]: input.bucketName,
  [LambdaEnvironment.TOKEN_SECRET_ARN]: input.secretArn,
  ...(input.pseudonymizationSecretArn === undefined
    ? {}
    : { [LambdaEnvironment.PSEUDONYMIZATION_SECRET_ARN]: input.pseudonymizationSecretArn }),
  [LambdaEnvironment.SERVICE_NAME]: input.serviceName,
  [LambdaEnvironment.METRICS_NAMESPACE]: METRICS_NAMESPACE,
  NODE_OPTIONS: [...NODE_RUNTIME_FLAGS, ...(input.sourceMaps ? ['--enable-source-maps'] : [])].join(' '),
  ...(input.bundledCaCertificates === undefined ? {} : { NODE_EXTRA_CA_CERTS: input.bundledCaCertificates }),
})

/**
 * Writes the runtime configuration to `<folder>/export-config-<hash of its text>.json` and returns the path: the hash
 * keeps two configurations synthesized into one folder apart, and rewriting the same one changes nothing.
 */
export const writeRuntimeConfigFile = (folder: string, runtimeConfigJson: string): string => {
  const file = join(
    folder,
    `export-config-${createHash('sha256').update(runtimeConfigJson).digest('hex').slice(0, 16)}.json`,
  )
  mkdirSync(folder, { recursive: true })
  writeFileSync(file, runtimeConfigJson)
  return file
}

const shellQuote = (value: string): string => `'${value.replaceAll("'", `'"'"'`)}'`

export interface BundlingInput {
  /**
   * The runtime configuration as a file written at synth time (`writeRuntimeConfigFile`), copied into the bundle as
   * export-config.json (so it is part of the asset hash). A file, never an argument: 1,000 tables on one command line
   * pass the operating system's limit (spawnSync E2BIG).
   */
  readonly runtimeConfigFile: string
  /** PEM file to copy into the bundle, if any. */
  readonly caCertificatesPath?: string | undefined
  /** @default false */
  readonly sourceMaps?: boolean
}

/** esbuild options: one ESM file with every dependency (AWS SDK included, so versions are pinned), offline. */
export const bundlingOptions = ({
  runtimeConfigFile,
  caCertificatesPath,
  sourceMaps = false,
}: BundlingInput): BundlingOptions => ({
  format: OutputFormat.ESM,
  mainFields: ['module', 'main'],
  banner: "import { createRequire as __cjsRequire } from 'node:module'; const require = __cjsRequire(import.meta.url);",
  minify: true,
  sourceMap: sourceMaps,
  externalModules: [],
  forceDockerBundling: false,
  commandHooks: {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (_inputDir: string, outputDir: string) => [
      `cp ${shellQuote(runtimeConfigFile)} ${shellQuote(`${outputDir}/${BUNDLED_EXPORT_CONFIG}`)}`,
      ...(caCertificatesPath === undefined
        ? []
        : [`cp ${shellQuote(caCertificatesPath)} ${shellQuote(`${outputDir}/${BUNDLED_CA_CERTIFICATES}`)}`]),
    ],
  },
})

/** How the token secret is found: created by the stack, or imported by name, complete ARN or partial ARN. */
export type SecretReference =
  | { readonly kind: 'create' }
  | { readonly kind: 'name'; readonly name: string }
  | { readonly kind: 'completeArn' | 'partialArn'; readonly arn: string }

/** A complete secret ARN ends in "-" and the 6 characters Secrets Manager appends to the name. */
export const secretReference = (nameOrArn: string | undefined): SecretReference => {
  if (nameOrArn === undefined) return { kind: 'create' }
  if (!nameOrArn.startsWith('arn:')) return { kind: 'name', name: nameOrArn }
  return { kind: /:secret:.+-[A-Za-z0-9]{6}$/.test(nameOrArn) ? 'completeArn' : 'partialArn', arn: nameOrArn }
}

/**
 * S3 actions on objects under the prefix: read, write (conditional writes and multipart uploads need nothing more),
 * and aborting a failed multipart upload. No delete here: only a table's `retention` deletes, and only its own
 * dated objects (warehouseDeleteStatements); with the bucket's version expiry a compromised function could
 * otherwise erase the warehouse. No ListMultipartUploadParts: lib-storage
 * keeps the parts' ETags itself and never lists them (test/aws/first-run.test.ts measures what is sent).
 */
export const WAREHOUSE_OBJECT_ACTIONS = ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload'] as const

/** Glue actions that keep the table definitions in step with the data; the database is named, never read. */
export const GLUE_CATALOG_ACTIONS = ['glue:GetTable', 'glue:CreateTable', 'glue:UpdateTable'] as const

/**
 * Object rights under `<bucket>/<prefix>/*` and listing restricted to that prefix. The listing also tells a missing
 * key from a denied one: S3 answers a missing key 403 to a role that may not list the whole bucket, and the store
 * then lists the key's own name under the prefix (publish/s3.ts) instead of the role listing the whole bucket.
 */
export const warehouseStatements = (bucketArn: string, prefix: string): PolicyStatement[] => [
  new PolicyStatement({
    sid: 'WarehouseObjectsUnderPrefix',
    effect: Effect.ALLOW,
    actions: [...WAREHOUSE_OBJECT_ACTIONS],
    resources: [`${bucketArn}/${prefix}/*`],
  }),
  new PolicyStatement({
    sid: 'ListWarehousePrefix',
    effect: Effect.ALLOW,
    actions: ['s3:ListBucket'],
    resources: [bucketArn],
    conditions: { StringLike: { 's3:prefix': [prefix, `${prefix}/*`] } },
  }),
]

/**
 * DeleteObject for the Iceberg tables, on their own files only: an Iceberg commit that lost its race removes the
 * manifests it wrote, and snapshot expiry removes the data files, manifests and lists no kept snapshot reads
 * (iceberg/snapshot-commit.ts, snapshot-expiry.ts). None when no table is an Iceberg table.
 */
export const icebergFileDeleteStatements = (
  bucketArn: string,
  prefix: string,
  tables: readonly { readonly name: string; readonly tableFormat?: string | undefined }[],
): PolicyStatement[] => {
  const names = tables.filter((t) => t.tableFormat === 'iceberg').map((t) => t.name)
  if (names.length === 0) return []
  return [
    new PolicyStatement({
      sid: 'IcebergTableFiles',
      effect: Effect.ALLOW,
      actions: ['s3:DeleteObject'],
      // dt=* too: the Hive objects a conversion adopted as data files, which expiry removes once replaced.
      resources: names.flatMap((name) => [
        `${bucketArn}/${prefix}/${name}/data/*`,
        `${bucketArn}/${prefix}/${name}/metadata/*`,
        `${bucketArn}/${prefix}/${name}/dt=*`,
      ]),
    }),
  ]
}

/** Past this many tables that remove dates, their objects are named by one pattern, so the policy stays small. */
export const MAX_TABLES_NAMED_FOR_DELETE = 20

/**
 * DeleteObject for the tables whose `retention` removes dates, and only on their dated objects: the data
 * (`<table>/dt=*`), the dates relation and the raw archive (`_<folder>/<table>/dt=*`). None when no table removes
 * dates (see WAREHOUSE_OBJECT_ACTIONS). Past MAX_TABLES_NAMED_FOR_DELETE tables, any dated object under the prefix
 * but the run records, which an explicit Deny keeps.
 */
export const warehouseDeleteStatements = (
  bucketArn: string,
  prefix: string,
  tables: readonly { readonly name: string; readonly retention?: unknown }[],
): PolicyStatement[] => {
  const names = tables.filter((t) => t.retention !== undefined && t.retention !== false).map((t) => t.name)
  if (names.length === 0) return []
  if (names.length > MAX_TABLES_NAMED_FOR_DELETE) {
    return [
      new PolicyStatement({
        sid: 'DeleteExpiredDates',
        effect: Effect.ALLOW,
        actions: ['s3:DeleteObject'],
        resources: [`${bucketArn}/${prefix}/*/dt=*`],
      }),
      new PolicyStatement({
        sid: 'KeepRunRecords',
        effect: Effect.DENY,
        actions: ['s3:DeleteObject'],
        resources: [`${bucketArn}/${prefix}/_runs/*`],
      }),
    ]
  }
  return [
    new PolicyStatement({
      sid: 'DeleteExpiredDates',
      effect: Effect.ALLOW,
      actions: ['s3:DeleteObject'],
      resources: names.flatMap((name) => [
        `${bucketArn}/${prefix}/${name}/dt=*`,
        `${bucketArn}/${prefix}/_*/${name}/dt=*`,
      ]),
    }),
  ]
}

/**
 * DeleteObject on the raw bodies of the tables that archive them, for erasure requests on AWS (path/erase.ts
 * deletes a date's raw bodies before it rewrites the date). None without history operations or archiving tables.
 * Past MAX_TABLES_NAMED_FOR_DELETE tables, any table's raw bodies.
 */
export const rawBodyDeleteStatements = (
  bucketArn: string,
  prefix: string,
  tables: readonly { readonly name: string; readonly archiveRaw?: boolean }[],
): PolicyStatement[] => {
  const names = tables.filter((t) => t.archiveRaw === true).map((t) => t.name)
  if (names.length === 0) return []
  const resources =
    names.length > MAX_TABLES_NAMED_FOR_DELETE
      ? [`${bucketArn}/${prefix}/${RAW_FOLDER}/*/dt=*`]
      : names.map((name) => `${bucketArn}/${prefix}/${RAW_FOLDER}/${name}/dt=*`)
  return [new PolicyStatement({ sid: 'EraseRawBodies', effect: Effect.ALLOW, actions: ['s3:DeleteObject'], resources })]
}

/**
 * Rights on the customer managed keys of an imported secret or bucket: reading the secret needs Decrypt; writing
 * SSE-KMS objects needs GenerateDataKey, and multipart uploads Decrypt as well. Named actions only, on the one key.
 */
export const kmsStatements = (keys: { secretKeyArn?: string; bucketKeyArn?: string }): PolicyStatement[] => [
  ...(keys.secretKeyArn === undefined
    ? []
    : [
        new PolicyStatement({
          sid: 'DecryptTokenSecret',
          effect: Effect.ALLOW,
          actions: ['kms:Decrypt'],
          resources: [keys.secretKeyArn],
        }),
      ]),
  ...(keys.bucketKeyArn === undefined
    ? []
    : [
        new PolicyStatement({
          sid: 'EncryptWarehouseObjects',
          effect: Effect.ALLOW,
          actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
          resources: [keys.bucketKeyArn],
        }),
      ]),
]

/**
 * Reading the token: GetSecretValue only (CDK's grantRead adds DescribeSecret, which the function never sends).
 * `secretArn` is the complete ARN, or a name-based one ending in `-??????` for the suffix Secrets Manager appends.
 */
export const tokenSecretStatement = (secretArn: string): PolicyStatement =>
  new PolicyStatement({
    sid: 'ReadTokenSecret',
    effect: Effect.ALLOW,
    actions: ['secretsmanager:GetSecretValue'],
    resources: [secretArn],
  })

/**
 * Lambda delivering a failed asynchronous invocation to the on-failure queue, with the function's role: SendMessage
 * only (CDK's SqsDestination grants GetQueueAttributes and GetQueueUrl as well, which Lambda does not need).
 */
export const failureQueueStatement = (queueArn: string): PolicyStatement =>
  new PolicyStatement({
    sid: 'SendFailedInvocations',
    effect: Effect.ALLOW,
    actions: ['sqs:SendMessage'],
    resources: [queueArn],
  })

/** Glue rights on the catalog, the one database and its tables. */
export const glueStatements = (stack: Stack, databaseName: string): PolicyStatement[] => [
  new PolicyStatement({
    sid: 'GlueCatalogOfWarehouse',
    effect: Effect.ALLOW,
    actions: [...GLUE_CATALOG_ACTIONS],
    resources: [
      stack.formatArn({ service: 'glue', resource: 'catalog', arnFormat: ArnFormat.NO_RESOURCE_NAME }),
      stack.formatArn({ service: 'glue', resource: 'database', resourceName: databaseName }),
      stack.formatArn({ service: 'glue', resource: 'table', resourceName: `${databaseName}/*` }),
    ],
  }),
]

/** What Lambda needs to attach the function to the configured subnets (EC2 has no resource scoping for Describe*). */
export const vpcNetworkInterfaceStatement = (): PolicyStatement =>
  new PolicyStatement({
    sid: 'AttachToConfiguredSubnets',
    effect: Effect.ALLOW,
    actions: [
      'ec2:CreateNetworkInterface',
      'ec2:DescribeNetworkInterfaces',
      'ec2:DescribeSubnets',
      'ec2:DeleteNetworkInterface',
      'ec2:AssignPrivateIpAddresses',
      'ec2:UnassignPrivateIpAddresses',
    ],
    resources: ['*'],
  })

/**
 * The function's only right on the pseudonymization key's secret: GetSecretValue (no DescribeSecret, no writes).
 * A secret imported by name has no suffix in its ARN yet; Secrets Manager adds six characters.
 */
export const keySecretStatement = (secret: ISecret): PolicyStatement =>
  new PolicyStatement({
    actions: ['secretsmanager:GetSecretValue'],
    resources: [secret.secretFullArn ?? `${secret.secretArn}-??????`],
  })

/**
 * What an erasure (or a rewrite that drops or pseudonymizes) needs to delete the earlier versions of a date's data
 * and raw bodies (path/table-steps.ts purgeVersions): ListBucketVersions of those prefixes and DeleteObjectVersion on
 * those objects, for every table, and on nothing else (never the registry, the run records or the dates relation).
 * Past MAX_TABLES_NAMED_FOR_DELETE tables, any table's dated objects, with the run records and dates relation denied.
 */
export const versionPurgeStatements = (
  bucketArn: string,
  prefix: string,
  tables: readonly { readonly name: string; readonly tableFormat?: string | undefined }[],
): PolicyStatement[] => {
  const many = tables.length > MAX_TABLES_NAMED_FOR_DELETE
  // An Iceberg table's data files are dated too, one folder down (iceberg/iceberg-layout.ts).
  const dated = many
    ? [`${prefix}/*/dt=*`]
    : tables.flatMap(({ name, tableFormat }) => [
        `${prefix}/${name}/dt=*`,
        ...(tableFormat === 'iceberg' ? [`${prefix}/${name}/data/dt=*`] : []),
        `${prefix}/${RAW_FOLDER}/${name}/dt=*`,
      ])
  return [
    new PolicyStatement({
      sid: 'ListVersionsOfDatedObjects',
      effect: Effect.ALLOW,
      actions: ['s3:ListBucketVersions'],
      resources: [bucketArn],
      conditions: { StringLike: { 's3:prefix': dated } },
    }),
    new PolicyStatement({
      sid: 'PurgeEarlierVersions',
      effect: Effect.ALLOW,
      actions: ['s3:DeleteObjectVersion'],
      resources: dated.map((pattern) => `${bucketArn}/${pattern}`),
    }),
    ...(many
      ? [
          new PolicyStatement({
            sid: 'KeepVersionsOfBookkeeping',
            effect: Effect.DENY,
            actions: ['s3:DeleteObjectVersion'],
            resources: [`${bucketArn}/${prefix}/_runs/*`, `${bucketArn}/${prefix}/_export_dates/*`],
          }),
        ]
      : []),
  ]
}
