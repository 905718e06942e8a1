/**
 * The one configuration schema, shared by the CDK app, the Lambda and the local runner. The CDK app extends it
 * with the full `deployment` section (infra/deployment-config.ts); here that section holds what the runtime reads.
 * Every default lives here (a table's own settings in table-schema.ts); parse.ts turns unknown input into a
 * readonly typed object or a ConfigError.
 */
import * as z from 'zod'
import { columnControlProblems } from '../column-controls.ts'
import { VIEW_SUFFIXES } from '../constants.ts'
import { lambdaTimeoutProblem } from '../lambda-budget.ts'
import { DEFAULT_STACK_NAME, STACK_NAME_PATTERN, stackResourceNames } from '../stack-names.ts'
import {
  defaultTableName,
  ErasedRowsSchema,
  GuardsSchema,
  RetentionSchema,
  type TableConfig,
  TableConfigSchema,
  TableFormatSchema,
} from './table-schema.ts'

const isLoopbackHost = (hostname: string): boolean =>
  hostname === 'localhost' || hostname === '[::1]' || hostname === '::1' || /^127\.\d+\.\d+\.\d+$/.test(hostname)

/** The inventory service to read from. */
export const SourceConfigSchema = z
  .strictObject({
    baseUrl: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL such as https://inventory.example.com' })
      .describe('Base URL of the inventory service, e.g. `https://inventory.example.com`'),
    allowInsecureHttp: z
      .boolean()
      .default(false)
      .describe('Allow plain http to a non-loopback host (logged as a warning on every run)'),
    caCertificatesFile: z
      .string()
      .min(1)
      .optional()
      .describe('PEM file with extra CA certificates for a private TLS chain (bundled into the Lambda by the stack)'),
  })
  .superRefine((source, ctx) => {
    // zod runs this refinement even when baseUrl failed its own check; that failure is already reported.
    if (!URL.canParse(source.baseUrl)) return
    const url = new URL(source.baseUrl)
    const problem = (message: string) => ctx.addIssue({ code: 'custom', path: ['baseUrl'], message })
    if (url.username || url.password) problem('must not embed credentials; the token goes in the secret')
    if (url.search || url.hash) problem('must not have a query string or fragment')
    if (url.protocol === 'http:' && !isLoopbackHost(url.hostname) && !source.allowInsecureHttp) {
      problem('must use https (plain http is allowed for loopback, or with source.allowInsecureHttp: true)')
    }
  })

/** How hard and how long to try. */
export const ExportTuningSchema = z.strictObject({
  concurrency: z.int().min(1).max(16).default(2).describe('Tables downloaded at once; the service never sees more'),
  workerThreads: z
    .union([z.literal('auto'), z.int().min(0).max(64)])
    .default('auto')
    .describe(
      "Worker threads one table's parsing and encoding use beside the main thread. `auto`: from the vCPUs the function has (its cores, and in Lambda what its memory buys): none with one, one parsing with two, and from three one per vCPU, one of them encoding the Parquet file and the others parsing the body in chunks. A number sets them: 0 does everything on the main thread, 1 parses on a thread of its own, 2 or more adds the encoding thread",
    ),
  retry: z
    .strictObject({
      maxAttempts: z.int().min(1).max(10).default(4).describe('Attempts per request, the first included'),
      baseDelayMs: z
        .int()
        .min(0)
        .max(60_000)
        .default(1000)
        .describe('First backoff ceiling in ms; doubles per attempt, with full jitter'),
      maxDelayMs: z.int().min(0).max(600_000).default(30_000).describe('Largest backoff between two attempts, in ms'),
      maxRetryAfterSeconds: z
        .int()
        .min(0)
        .max(3600)
        .default(120)
        .describe('Largest `Retry-After` honoured; a longer one fails the request at once'),
      totalBudgetSeconds: z.int().min(1).max(3600).default(600).describe('Total time one request may spend retrying'),
    })
    .prefault({}),
  timeouts: z
    .strictObject({
      connectSeconds: z.int().min(1).max(300).default(10).describe('TCP and TLS connect timeout'),
      idleSeconds: z
        .int()
        .min(1)
        .max(900)
        .default(120)
        .describe('Longest silence while waiting for response headers or body bytes'),
      tableSeconds: z
        .int()
        .min(1)
        .max(86_400)
        .default(3600)
        .describe(
          'Longest one table may take, retries included, however steadily bytes arrive; in Lambda also capped by the time left',
        ),
      busyWaitSeconds: z
        .int()
        .min(0)
        .max(3600)
        .default(300)
        .describe(
          'Longest a run waits for another writer of the same table (an export, `npm run erase`, `npm run rewrite`, a history batch on AWS) before it fails the table with `TABLE_BUSY`, writing nothing; in Lambda also capped by the time left',
        ),
      tokenCheckSeconds: z
        .int()
        .min(1)
        .max(3600)
        .default(300)
        .describe(
          'Longest the token check (`GET /rest/usermanager/me`) may take, retries included, however steadily bytes arrive; in Lambda also capped by the time left',
        ),
    })
    .prefault({}),
  deadlineMarginSeconds: z
    .int()
    .min(5)
    .max(600)
    .default(60)
    .describe('In Lambda: no table starts when less than this remains before the timeout'),
  guards: GuardsSchema.prefault({}).describe(
    "Upstream change guards: each export is compared with the table's previous published one before it is published",
  ),
})

const MiB = 1024 * 1024

/** How large one table's rows may be: what bounds the parser's memory, whatever the service sends. */
export const LimitsConfigSchema = z
  .strictObject({
    maxColumns: z
      .int()
      .min(1)
      .max(10_000)
      .default(2000)
      .describe(
        'Fields in any record, header included; a wider table fails (Glue and Athena slow down well before their own limits)',
      ),
    maxRecordBytes: z
      .int()
      .min(1024)
      .max(512 * MiB)
      .default(64 * MiB)
      .describe('Bytes in one record (one row of the CSV, line breaks inside quotes included)'),
    maxFieldBytes: z
      .int()
      .min(1024)
      .max(256 * MiB)
      .default(16 * MiB)
      .describe('Bytes in one field; also catches a quote that is never closed'),
  })
  .refine((limits) => limits.maxFieldBytes <= limits.maxRecordBytes, {
    path: ['maxFieldBytes'],
    message: 'must not be more than maxRecordBytes',
  })

/** Where data lands, for the Lambda (S3) and the local runner (folder). */
/** `warehouse.prefix`, and the prefix of the CLI's `--out s3://BUCKET/PREFIX`. */
export const WAREHOUSE_PREFIX_PATTERN = /^([a-z0-9][a-z0-9_.-]*)(\/[a-z0-9][a-z0-9_.-]*)*$/
export const WAREHOUSE_PREFIX_RULE = 'must be path segments of lowercase letters, digits, ".", "-", "_"'
/** `warehouse.glueDatabase`, and the CLI's `--glue-database`. */
export const GLUE_DATABASE_PATTERN = /^[a-z][a-z0-9_]{0,254}$/

export const WarehouseConfigSchema = z.strictObject({
  prefix: z
    .string()
    .regex(WAREHOUSE_PREFIX_PATTERN, WAREHOUSE_PREFIX_RULE)
    .default('inventory')
    .describe('S3 key prefix under which tables, run records and schemas live (no leading or trailing slash)'),
  glueDatabase: z
    .string()
    .regex(GLUE_DATABASE_PATTERN)
    .optional()
    .describe(
      'Glue database holding one table (and one `_latest` view) per saved table; default `inventory` for the default stack name, else the stack name in snake_case (`InventoryExport-Prod` -> `inventory_export_prod`)',
    ),
  retention: RetentionSchema.default(false).describe(
    'Which export dates every table keeps unless it sets its own `retention`: `{"days": N}` keeps the dates less than N days before the newest, `"monthly": M` also the first date of each of the last M months; `false` keeps every date',
  ),
  erasedRows: ErasedRowsSchema.default('drop').describe(
    'What an export does with rows a recorded erasure request matches, unless the table sets its own `erasedRows`: `"drop"` leaves them out, `"hold"` holds the table',
  ),
  tableFormat: TableFormatSchema.default('hive').describe(
    'How every table is laid out unless it sets its own `tableFormat`: `"hive"` (Parquet objects under `dt=` folders) or `"iceberg"` (Apache Iceberg v2 tables)',
  ),
})

/** The stack's name: the runtime needs it too, since the default Glue database name derives from it. */
export const StackNameSchema = z
  .string()
  .regex(STACK_NAME_PATTERN, 'must be a CloudFormation stack name (a letter, then letters, digits and "-")')
  .default(DEFAULT_STACK_NAME)
  .describe(
    'CloudFormation stack name; the Glue database, workgroup, token secret and alarm names derive from it, so one file per environment deploys side by side',
  )

/**
 * The runtime's view of `deployment`: only `stackName` is read here. The deploy-only settings are CDK's; the stack
 * validates them strictly with the full schema (infra/deployment-config.ts), so they pass through untouched here and
 * the CLI reads the same file the deploy does.
 */
export const RuntimeDeploymentSchema = z.looseObject({ stackName: StackNameSchema })
/** The sections of the configuration; `deployment` as the runtime sees it. */
const exportConfigShape = {
  source: SourceConfigSchema,
  tables: z.array(TableConfigSchema).min(1, 'must list at least one table').describe('The saved tables to export'),
  export: ExportTuningSchema.prefault({}),
  limits: LimitsConfigSchema.prefault({}),
  warehouse: WarehouseConfigSchema.prefault({}),
  deployment: RuntimeDeploymentSchema.prefault({}),
}

/** The checks across sections and tables, shared by the export's schema and the sourceless one. */
const checkAcrossSections = (
  config: Omit<z.output<z.ZodObject<typeof exportConfigShape>>, 'source'>,
  ctx: z.RefinementCtx,
): void => {
  const seenIds = new Map<string, number>()
  const seenNames = new Map<string, number>()
  config.tables.forEach((table, index) => {
    const name = table.name ?? defaultTableName(table.id)
    if (seenIds.has(table.id)) {
      ctx.addIssue({
        code: 'custom',
        path: ['tables', index, 'id'],
        message: `duplicates tables[${seenIds.get(table.id)}]`,
      })
    }
    if (seenNames.has(name)) {
      ctx.addIssue({
        code: 'custom',
        path: ['tables', index, 'name'],
        message: `"${name}" duplicates tables[${seenNames.get(name)}]`,
      })
    }
    if (table.sheet !== undefined && table.format !== 'xlsx') {
      // Accepted on a CSV table it would do nothing, and say nothing about it.
      ctx.addIssue({
        code: 'custom',
        path: ['tables', index, 'sheet'],
        message: 'names a worksheet, which only a workbook has: set "format": "xlsx", or remove it',
      })
    }
    const viewSuffix = VIEW_SUFFIXES.find((suffix) => name.endsWith(suffix))
    if (viewSuffix !== undefined) {
      // `x_latest` would be the name of table x's view in Glue and Athena.
      ctx.addIssue({
        code: 'custom',
        path: ['tables', index, table.name === undefined ? 'id' : 'name'],
        message: `"${name}" ends in "${viewSuffix}", which is kept for the views of a table; choose another name`,
      })
    }
    for (const problem of columnControlProblems(table)) {
      ctx.addIssue({ code: 'custom', path: ['tables', index, ...problem.path], message: problem.message })
    }
    seenIds.set(table.id, index)
    seenNames.set(name, index)
    const overrides = table.guards === false ? undefined : table.guards
    const guards = { ...config.export.guards, ...overrides }
    if (
      (overrides?.holdBelow !== undefined || overrides?.warnBelow !== undefined) &&
      guards.holdBelow !== false &&
      guards.warnBelow !== false &&
      guards.holdBelow > guards.warnBelow
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['tables', index, 'guards', 'holdBelow'],
        message: `holdBelow ${guards.holdBelow} must not exceed warnBelow ${guards.warnBelow} (with export.guards)`,
      })
    }
  })
  const timeout = lambdaTimeoutProblem(config.deployment, config.export.deadlineMarginSeconds)
  if (timeout) ctx.addIssue({ code: 'custom', path: ['deployment', 'lambda', 'timeoutSeconds'], message: timeout })
}

export const ExportConfigObject = z.strictObject(exportConfigShape).superRefine(checkAcrossSections)

/** Fills the names left to the stack name, so every consumer (stack, Lambda, CLI) sees the same ones. */
export const withDerivedNames = <C extends Omit<z.output<typeof ExportConfigObject>, 'source'>>(config: C) => {
  const names = stackResourceNames(config.deployment.stackName)
  return {
    ...config,
    // Each table's retention, erasedRows and tableFormat resolved once: the table's path reads its own setting, never the warehouse's.
    tables: config.tables.map((table) => ({
      ...table,
      retention: table.retention ?? config.warehouse.retention,
      erasedRows: table.erasedRows ?? config.warehouse.erasedRows,
      tableFormat: table.tableFormat ?? config.warehouse.tableFormat,
    })),
    warehouse: { ...config.warehouse, glueDatabase: config.warehouse.glueDatabase ?? names.glueDatabase },
  }
}

export const ExportConfigSchema = ExportConfigObject.transform(withDerivedNames)
/**
 * For a run whose table source is not the service (`npm run reprocess` reads the raw archive), `source` may be left
 * out; every other section and check is the export's own.
 */
export const SourcelessConfigObject = z
  .strictObject({ ...exportConfigShape, source: SourceConfigSchema.optional() })
  .superRefine(checkAcrossSections)

export type ExportConfigInput = z.input<typeof ExportConfigSchema>
export type ParsedExportConfig = z.output<typeof ExportConfigSchema>
export type SourceConfig = Readonly<z.output<typeof SourceConfigSchema>>
export type ExportTuning = Readonly<z.output<typeof ExportTuningSchema>>
export type WarehouseConfig = ExportConfig['warehouse']
export type LimitsConfig = Readonly<z.output<typeof LimitsConfigSchema>>
export type ExportConfig = Readonly<Omit<ParsedExportConfig, 'tables'> & { tables: readonly TableConfig[] }>
/** The configuration of a run that reads no service (reprocess): as an export's, with `source` optional. */
export type ConfigWithoutSource = Omit<ExportConfig, 'source'> & { readonly source?: SourceConfig | undefined }
