/**
 * The one configuration schema, shared by the CDK app, the Lambda and the local runner. The CDK app extends it
 * with the full `deployment` section (infra/deployment-config.ts); here that section holds what the runtime reads.
 * Every default lives here; `parseExportConfig` turns unknown input into a readonly typed object or a
 * ConfigError whose message names each offending field.
 */
import * as z from 'zod'
import { ColumnControlsSchema, columnControlProblems } from './column-controls.ts'
import { knownKeysAt, unknownKeyMessage } from './config-keys.ts'
import {
  COLUMN_TYPES,
  DELIMITERS,
  TABLE_FORMATS,
  TABLE_ID_PATTERN,
  TABLE_NAME_PATTERN,
  VIEW_SUFFIXES,
} from './constants.ts'
import { ConfigError, type ConfigProblem } from './errors.ts'
import { lambdaTimeoutProblem } from './lambda-budget.ts'
import { DEFAULT_STACK_NAME, STACK_NAME_PATTERN, stackResourceNames } from './stack-names.ts'

const isSupportedEncoding = (label: string): boolean => {
  try {
    new TextDecoder(label)
    return true
  } catch {
    return false
  }
}

export const isTimeZone = (zone: string): boolean => {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone })
    return true
  } catch {
    return false
  }
}

const isLoopbackHost = (hostname: string): boolean =>
  hostname === 'localhost' || hostname === '[::1]' || hostname === '::1' || /^127\.\d+\.\d+\.\d+$/.test(hostname)

/** A share of the previous export's row count, from 0 to 1. */
const RatioSchema = z.number().min(0, 'must be a ratio from 0 to 1').max(1, 'must be a ratio from 0 to 1')
const ratioOrOff = (description: string) =>
  z.union([RatioSchema, z.literal(false)]).describe(`${description}; \`false\` switches it off`)
const columnAction = (description: string) =>
  z
    .union([z.enum(['warn', 'hold']), z.literal(false)])
    .describe(`${description}: \`"warn"\` publishes and warns, \`"hold"\` holds the table, \`false\` says nothing`)

/** Per-table overrides of `export.guards`: every key optional; `false` switches every guard off for the table. */
export const TableGuardsSchema = z.union([
  z.strictObject({
    holdBelow: ratioOrOff('Hold the table when its row count falls below this share of the previous export').optional(),
    warnBelow: ratioOrOff(
      'Publish and warn when its row count falls below this share of the previous export',
    ).optional(),
    columnsRemoved: columnAction('A column of the previous export is missing').optional(),
    columnsAdded: columnAction('A column the previous export lacked appears').optional(),
  }),
  z.literal(false),
])

/** Upstream change guards: compare each export with the table's previous published one before publishing it. */
export const GuardsSchema = z
  .strictObject({
    holdBelow: ratioOrOff(
      'Hold a table (publish nothing, `ROW_COUNT_DROP`) whose row count falls below this share of its previous published export; zero rows after a non-empty export always holds',
    ).default(0.1),
    warnBelow: ratioOrOff('Publish and warn when the row count falls below this share of the previous export').default(
      0.5,
    ),
    columnsRemoved: columnAction('A column of the previous export is missing (`COLUMNS_REMOVED`)').default('warn'),
    columnsAdded: columnAction('A column the previous export lacked appears (`COLUMNS_ADDED`)').default('warn'),
  })
  .refine((g) => g.holdBelow === false || g.warnBelow === false || g.holdBelow <= g.warnBelow, {
    message: 'holdBelow must not exceed warnBelow',
    path: ['holdBelow'],
  })

/** One saved table of the inventory service and how to land it. */
export const TableConfigSchema = z.strictObject({
  id: z
    .string()
    .regex(TABLE_ID_PATTERN, 'must be the saved table id (letters, digits, "-" or "_")')
    .describe("Saved-table id: the last segment of the table's permalink"),
  name: z
    .string()
    .regex(
      TABLE_NAME_PATTERN,
      'must be lowercase letters, digits and "_", starting with a letter (it is a path segment)',
    )
    .optional()
    .describe('Table name in the warehouse, Glue and Athena; default `table_<id>`'),
  format: z
    .enum(TABLE_FORMATS)
    .default('csv')
    .describe(
      'Which export to read: `csv`, or `xlsx` (the workbook: typed cells, its first worksheet is the table); both land the same',
    ),
  encoding: z
    .string()
    .refine(isSupportedEncoding, 'is not an encoding this runtime can decode (try "utf-8" or "windows-1252")')
    .default('utf-8')
    .describe('Character encoding of the CSV when it has no byte-order mark (a WHATWG label, e.g. `windows-1252`)'),
  invalidBytes: z
    .enum(['fail', 'replace'])
    .default('fail')
    .describe('Bytes invalid in the encoding: fail the table, or replace them with U+FFFD'),
  delimiter: z.enum(DELIMITERS).optional().describe('Field delimiter; detected from the header line when absent'),
  shortRows: z
    .enum(['fail', 'pad'])
    .default('fail')
    .describe(
      'Rows with fewer fields than the header: fail the table, or pad them with NULLs (longer rows always fail)',
    ),
  columnTypes: z
    .record(z.string(), z.enum(COLUMN_TYPES))
    .superRefine((types, ctx) => {
      // Keys are matched against exported column names; header text here would silently force nothing.
      for (const key of Object.keys(types)) {
        if (!/^[a-z][a-z0-9_]{0,254}$/.test(key)) {
          ctx.addIssue({
            code: 'custom',
            path: [key],
            message:
              'must be a column name as exported (lowercase snake_case such as "serial_number"), not the header text',
          })
        }
      }
    })
    .default({})
    .describe('Types forced by column name when a column is first published, e.g. `{"serial_number": "string"}`'),
  archiveRaw: z
    .boolean()
    .default(false)
    .describe('Keep the CSV (or workbook) exactly as received (gzip) under `_raw/`, for `npm run reprocess`'),
  guards: TableGuardsSchema.optional().describe(
    'Overrides of `export.guards` for this table (`false`: no guards); unset keys take the defaults',
  ),
  schedule: z
    .strictObject({
      expression: z
        .string()
        .min(1)
        .describe('EventBridge Scheduler expression of this table, e.g. `rate(1 hour)` or `cron(0 6 ? * MON-FRI *)`'),
      timeZone: z
        .string()
        .refine(isTimeZone, 'must be an IANA time zone such as "Europe/Berlin" or "UTC"')
        .optional()
        .describe('IANA time zone of this cron expression; default `deployment.schedule.timeZone`'),
      periodHours: z
        .number()
        .positive()
        .max(24 * 31)
        .optional()
        .describe(
          'Length of this schedule period in hours (staleness counts in it); derived from a rate(), required with cron()',
        ),
    })
    .optional()
    .describe('Own schedule of this table (AWS); default `deployment.schedule`'),
  memoryMb: z
    .int()
    .min(256)
    .max(10_240)
    .optional()
    .describe('Memory of the function that exports this table (AWS); default `deployment.lambda.memoryMb`'),
  key: z
    .array(
      z
        .string()
        .regex(
          /^[a-z][a-z0-9_]{0,254}$/,
          'must be a column name as exported (lowercase snake_case such as "device_id")',
        ),
    )
    .min(1)
    .refine((names) => new Set(names).size === names.length, 'names a column twice')
    .optional()
    .describe(
      'Exported column names that identify a row, e.g. `["device_id"]`; gives the table a `<table>_changes` view (`npm run check` suggests one)',
    ),
  columns: ColumnControlsSchema.prefault({}).describe(
    'Personal data: columns to drop or pseudonymize before anything is written (`npm run check` lists the columns that look personal)',
  ),
})

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
export const WarehouseConfigSchema = z.strictObject({
  prefix: z
    .string()
    .regex(
      /^([a-z0-9][a-z0-9_.-]*)(\/[a-z0-9][a-z0-9_.-]*)*$/,
      'must be path segments of lowercase letters, digits, ".", "-", "_"',
    )
    .default('inventory')
    .describe('S3 key prefix under which tables, run records and schemas live (no leading or trailing slash)'),
  glueDatabase: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,254}$/)
    .optional()
    .describe(
      'Glue database holding one table (and one `_latest` view) per saved table; default `inventory` for the default stack name, else the stack name in snake_case (`InventoryExport-Prod` -> `inventory_export_prod`)',
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
export const ExportConfigObject = z
  .strictObject({
    source: SourceConfigSchema,
    tables: z.array(TableConfigSchema).min(1, 'must list at least one table').describe('The saved tables to export'),
    export: ExportTuningSchema.prefault({}),
    limits: LimitsConfigSchema.prefault({}),
    warehouse: WarehouseConfigSchema.prefault({}),
    deployment: RuntimeDeploymentSchema.prefault({}),
  })
  .superRefine((config, ctx) => {
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
  })

/** Fills the names left to the stack name, so every consumer (stack, Lambda, CLI) sees the same ones. */
export const withDerivedNames = <C extends Omit<z.output<typeof ExportConfigObject>, 'source'>>(config: C) => {
  const names = stackResourceNames(config.deployment.stackName)
  return {
    ...config,
    warehouse: { ...config.warehouse, glueDatabase: config.warehouse.glueDatabase ?? names.glueDatabase },
  }
}

export const ExportConfigSchema = ExportConfigObject.transform(withDerivedNames)

/**
 * For a run whose table source is not the service (`npm run reprocess` reads the raw archive), `source` may be left
 * out; every other section and check is the export's own (the object's checks are reused as they are).
 */
const SourcelessConfigObject = z
  .strictObject({ ...ExportConfigObject.shape, source: SourceConfigSchema.optional() })
  .check(...((ExportConfigObject._zod.def.checks ?? []) as z.core.$ZodCheck<unknown>[]))

export type ExportConfigInput = z.input<typeof ExportConfigSchema>
type ParsedExportConfig = z.output<typeof ExportConfigSchema>
type ParsedTableConfig = z.output<typeof TableConfigSchema>

/** A table's configuration with its name resolved. */
export type TableConfig = Readonly<Omit<ParsedTableConfig, 'name'> & { name: string }>
export type SourceConfig = Readonly<z.output<typeof SourceConfigSchema>>
export type ExportTuning = Readonly<z.output<typeof ExportTuningSchema>>
export type WarehouseConfig = ExportConfig['warehouse']
export type LimitsConfig = Readonly<z.output<typeof LimitsConfigSchema>>
export type GuardsConfig = Readonly<z.output<typeof GuardsSchema>>
export type TableGuardsConfig = z.output<typeof TableGuardsSchema>
export type ExportConfig = Readonly<Omit<ParsedExportConfig, 'tables'> & { tables: readonly TableConfig[] }>

export const defaultTableName = (id: string): string => `table_${id.toLowerCase().replace(/-/g, '_')}`

/** Validates unknown input (a parsed JSON file, CLI flags) into the typed configuration. */
export const parseExportConfig = (input: unknown, origin = 'configuration'): ExportConfig => {
  const result = ExportConfigSchema.safeParse(input)
  if (!result.success) {
    throw new ConfigError(origin, configProblems(ExportConfigSchema, result.error.issues))
  }
  const parsed: ParsedExportConfig = result.data
  return deepFreeze({
    ...parsed,
    tables: parsed.tables.map((table) => ({ ...table, name: table.name ?? defaultTableName(table.id) })),
  })
}

/** The configuration of a run that reads no service (reprocess): as an export's, with `source` optional. */
export type ConfigWithoutSource = Omit<ExportConfig, 'source'> & { readonly source?: SourceConfig | undefined }

/** Validates a configuration that may leave out `source` (see SourcelessConfigObject), e.g. `npm run reprocess`'s. */
export const parseConfigWithoutSource = (input: unknown, origin = 'configuration'): ConfigWithoutSource => {
  const result = SourcelessConfigObject.safeParse(input)
  if (!result.success) throw new ConfigError(origin, configProblems(SourcelessConfigObject, result.error.issues))
  const parsed = withDerivedNames(result.data)
  return deepFreeze({
    ...parsed,
    tables: parsed.tables.map((table) => ({ ...table, name: table.name ?? defaultTableName(table.id) })),
  })
}

/** One problem per issue; an unknown key is named at its own path, with the closest known key. */
export const configProblems = (schema: z.ZodType, issues: readonly z.core.$ZodIssue[]): ConfigProblem[] =>
  issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({
          field: formatPath([...issue.path, key]),
          message: unknownKeyMessage(key, knownKeysAt(schema, issue.path)),
        }))
      : [{ field: formatPath(issue.path), message: issue.message }],
  )

export const formatPath = (path: readonly PropertyKey[]): string =>
  path.reduce<string>(
    (out, key) => (typeof key === 'number' ? `${out}[${key}]` : out ? `${out}.${String(key)}` : String(key)),
    '',
  ) || '(root)'

export const deepFreeze = <T>(value: T): T => {
  if (value && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}
