/** Where the data lands and how analysts reach it: the S3 bucket, the Glue database and the Athena workgroup. */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib'
import { CfnNamedQuery, CfnWorkGroup } from 'aws-cdk-lib/aws-athena'
import { CfnDatabase } from 'aws-cdk-lib/aws-glue'
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type IBucket,
  type LifecycleRule,
  ObjectOwnership,
  StorageClass,
} from 'aws-cdk-lib/aws-s3'
import { Construct } from 'constructs'
import { ConfigError, RAW_FOLDER, RUNS_FOLDER } from '../../functions/export/index.ts'
import { DEFAULT_ATHENA_RESULTS_DAYS } from '../deployment-config.ts'
import { acknowledgeFinding } from '../nag.ts'
import { type AnalystQuery, namedQueryId } from './analyst-queries.ts'

/** Key prefix of Athena query results, at the bucket root beside the data prefix. */
export const ATHENA_RESULTS_PREFIX = 'athena-results/'

export interface WarehouseProps {
  /** Key prefix of tables, run records and schemas (config warehouse.prefix). */
  readonly prefix: string
  /** Glue database name (config warehouse.glueDatabase). */
  readonly glueDatabaseName: string
  /** Athena workgroup name (config deployment.athena.workgroup). */
  readonly workgroupName: string
  /** Per-query scan limit of the workgroup (config deployment.athena.bytesScannedCutoffPerQuery). */
  readonly bytesScannedCutoffPerQuery: number
  /** Write to this existing bucket; its lifecycle and logging stay its owner's. @default - a new bucket */
  readonly existingBucketName?: string
  /** Days a replaced or deleted object version is kept. @default 30 */
  readonly noncurrentVersionExpirationDays?: number
  /** Days run records under `<prefix>/_runs/` are kept. @default 400 */
  readonly runRecordExpirationDays?: number
  /** Days until raw CSV archives under `<prefix>/_raw/` move to Glacier Instant Retrieval. @default 30 */
  readonly rawArchiveTransitionDays?: number
  /**
   * Days Athena query results are kept: results hold what analysts selected, erased rows included, so they expire
   * soon (with their noncurrent versions a day later). @default 7
   */
  readonly athenaResultsExpirationDays?: number
  /** Days server access logs are kept. @default 365 */
  readonly accessLogExpirationDays?: number
  /** Saved queries of the workgroup made in this stack (those of each table: `addNamedQueries`). @default - none */
  readonly namedQueries?: readonly AnalystQuery[]
  /** Of the buckets; the catalog and workgroup are rebuilt by a deploy and the next run. @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy
  /**
   * Empty the buckets (every object version) when the stack is deleted, so a DESTROY removal policy can delete them.
   * For test stacks only (integ/): a deployed warehouse keeps its data. @default false
   */
  readonly autoDeleteObjects?: boolean
}

/** Lifecycle rules of a new warehouse bucket. */
export const warehouseLifecycleRules = (props: WarehouseProps): LifecycleRule[] => [
  { id: 'abort-incomplete-multipart-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
  {
    id: 'expire-noncurrent-versions',
    noncurrentVersionExpiration: Duration.days(props.noncurrentVersionExpirationDays ?? 30),
    expiredObjectDeleteMarker: true,
  },
  // Run records are small JSON objects: below S3's 128 KB transition minimum, so they expire rather than move.
  {
    id: 'expire-run-records',
    prefix: `${props.prefix}/${RUNS_FOLDER}/`,
    expiration: Duration.days(props.runRecordExpirationDays ?? 400),
  },
  {
    id: 'archive-raw-csv',
    prefix: `${props.prefix}/${RAW_FOLDER}/`,
    transitions: [
      {
        storageClass: StorageClass.GLACIER_INSTANT_RETRIEVAL,
        transitionAfter: Duration.days(props.rawArchiveTransitionDays ?? 30),
      },
    ],
  },
  {
    id: 'expire-athena-results',
    prefix: ATHENA_RESULTS_PREFIX,
    expiration: Duration.days(props.athenaResultsExpirationDays ?? DEFAULT_ATHENA_RESULTS_DAYS),
    noncurrentVersionExpiration: Duration.days(1),
  },
]

const secureBucketDefaults = {
  blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
  encryption: BucketEncryption.S3_MANAGED,
  enforceSSL: true,
  minimumTLSVersion: 1.2,
  objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
} as const

const validate = (props: WarehouseProps): void => {
  const problems = Object.entries({
    noncurrentVersionExpirationDays: props.noncurrentVersionExpirationDays,
    runRecordExpirationDays: props.runRecordExpirationDays,
    rawArchiveTransitionDays: props.rawArchiveTransitionDays,
    athenaResultsExpirationDays: props.athenaResultsExpirationDays,
    accessLogExpirationDays: props.accessLogExpirationDays,
  })
    .filter(([, days]) => days !== undefined && (!Number.isInteger(days) || days < 1))
    .map(([name, days]) => ({ field: name, message: `must be a positive whole number of days, got ${days}` }))
  if (props.prefix.startsWith('/') || props.prefix.endsWith('/'))
    problems.push({ field: 'prefix', message: 'must not start or end with "/"' })
  if (problems.length > 0) throw new ConfigError('warehouse settings', problems)
}

/** The bucket (new or imported), the Glue database, the Athena workgroup and its named queries. */
export class Warehouse extends Construct {
  readonly bucket: IBucket
  /** The bucket receiving server access logs; undefined for an imported bucket. */
  readonly accessLogBucket: Bucket | undefined
  readonly database: CfnDatabase
  readonly databaseName: string
  readonly workgroup: CfnWorkGroup
  readonly workgroupName: string
  readonly namedQueries: readonly CfnNamedQuery[]
  readonly prefix: string

  constructor(scope: Construct, id: string, props: WarehouseProps) {
    super(scope, id)
    validate(props)
    const stack = Stack.of(this)
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN
    this.prefix = props.prefix
    this.databaseName = props.glueDatabaseName
    this.workgroupName = props.workgroupName

    if (props.existingBucketName === undefined) {
      const logs = new Bucket(this, 'AccessLogs', {
        ...secureBucketDefaults,
        lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(props.accessLogExpirationDays ?? 365) }],
        removalPolicy,
        autoDeleteObjects: props.autoDeleteObjects ?? false,
      })
      acknowledgeFinding(
        logs,
        'AwsSolutions-S1',
        'This bucket is the target of the warehouse bucket access logs; logging it too would only log the log delivery.',
      )
      this.accessLogBucket = logs
      this.bucket = new Bucket(this, 'Bucket', {
        ...secureBucketDefaults,
        versioned: true,
        serverAccessLogsBucket: logs,
        serverAccessLogsPrefix: 'warehouse/',
        lifecycleRules: warehouseLifecycleRules(props),
        removalPolicy,
        autoDeleteObjects: props.autoDeleteObjects ?? false,
      })
    } else {
      this.accessLogBucket = undefined
      this.bucket = Bucket.fromBucketName(this, 'Bucket', props.existingBucketName)
    }

    this.database = new CfnDatabase(this, 'Database', {
      catalogId: stack.account,
      databaseInput: {
        name: props.glueDatabaseName,
        description:
          'Saved tables of the inventory service, exported as Parquet (one table per saved table, partitioned by dt).',
        locationUri: this.bucket.s3UrlForObject(`${props.prefix}/`),
      },
    })

    this.workgroup = new CfnWorkGroup(this, 'Workgroup', {
      name: props.workgroupName,
      description: 'Analysts querying the inventory export: enforced result location, encryption and scan limit.',
      state: 'ENABLED',
      // Without it, deleting the stack fails once the workgroup holds named queries or query history.
      recursiveDeleteOption: true,
      workGroupConfiguration: {
        enforceWorkGroupConfiguration: true,
        publishCloudWatchMetricsEnabled: true,
        bytesScannedCutoffPerQuery: props.bytesScannedCutoffPerQuery,
        engineVersion: { selectedEngineVersion: 'Athena engine version 3' },
        resultConfiguration: {
          outputLocation: this.bucket.s3UrlForObject(ATHENA_RESULTS_PREFIX),
          encryptionConfiguration: { encryptionOption: 'SSE_S3' },
          expectedBucketOwner: stack.account,
        },
      },
    })

    this.namedQueries = this.addNamedQueries(this, props.namedQueries ?? [])
  }

  /** Saved queries of the workgroup, created in `scope` (this warehouse, or a nested stack of tables). */
  addNamedQueries(scope: Construct, queries: readonly AnalystQuery[]): CfnNamedQuery[] {
    return queries.map(
      (query) =>
        new CfnNamedQuery(scope, namedQueryId(query), {
          name: query.name,
          description: query.description,
          database: this.database.ref,
          workGroup: this.workgroup.ref,
          queryString: query.sql,
        }),
    )
  }
}
