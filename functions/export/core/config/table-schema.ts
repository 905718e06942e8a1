/**
 * The configuration of one saved table and its upstream change guards: the `tables[]` entries and `export.guards`.
 * Every default of a table's settings lives here.
 */
import * as z from 'zod'
import { ColumnControlsSchema } from '../column-controls.ts'
import { COLUMN_TYPES, DELIMITERS, TABLE_FORMATS, TABLE_ID_PATTERN, TABLE_NAME_PATTERN } from '../constants.ts'

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

/**
 * How long a table's history is kept: the export dates within `days` of its newest one, and with `monthly` also the
 * first export date of each of the last `monthly` months; `false` keeps every date.
 */
export const RetentionSchema = z.union([
  z.strictObject({
    days: z
      .int()
      .min(1)
      .max(36_500)
      .describe('Keep the export dates less than this many days before the newest one (1: the newest only)'),
    monthly: z
      .int()
      .min(1)
      .max(1200)
      .optional()
      .describe("Also keep the first export date of each of the last this-many months (the newest's month included)"),
  }),
  z.literal(false),
])

/** What an export does with a row that a recorded erasure request (`npm run erase`) matches. */
export const ErasedRowsSchema = z.enum(['drop', 'hold'])
/** How a table's dates are laid out: Hive-style `dt=` folders of one object each, or an Apache Iceberg table. */
export const TableFormatSchema = z.enum(['hive', 'iceberg'])

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
      'Which export to read: `csv`, or `xlsx` (the workbook: typed cells, its first visible worksheet is the table); both land the same',
    ),
  sheet: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe(
      'Worksheet an `xlsx` table reads, by its name in the workbook (hidden ones too); default the first visible worksheet',
    ),
  encoding: z
    .string()
    .refine(isSupportedEncoding, 'is not an encoding this runtime can decode (try "utf-8" or "windows-1252")')
    .optional()
    .describe(
      'Character encoding of the CSV when it has no byte-order mark (a WHATWG label, e.g. `windows-1252`), over the `charset` the service declares; default: that charset, else `utf-8`',
    ),
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
    .describe(
      'Types forced by column name, e.g. `{"serial_number": "string"}`; another type for a published column needs `npm run rewrite` first',
    ),
  archiveRaw: z
    .boolean()
    .default(false)
    .describe('Keep the CSV (or workbook) exactly as received (gzip) under `_raw/`, for `npm run reprocess`'),
  retention: RetentionSchema.optional().describe(
    'Which export dates this table keeps (`{"days": 400}`, `{"days": 90, "monthly": 24}`, or `false`: all); default `warehouse.retention`',
  ),
  erasedRows: ErasedRowsSchema.optional().describe(
    'What an export does with rows a recorded erasure request matches (`npm run erase`): `"drop"` leaves them out and counts them, `"hold"` publishes nothing of the table (`ERASED_ROWS_HELD`) until the service no longer has them or `--accept-changes`; default `warehouse.erasedRows`',
  ),
  tableFormat: TableFormatSchema.optional().describe(
    'How the table is laid out for Athena: `"hive"` (one Parquet object per date under `dt=`) or `"iceberg"` (an Apache Iceberg v2 table: one snapshot per export, `dt` an identity partition, time travel for 7 days; docs/iceberg.md); default `warehouse.tableFormat`',
  ),
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
    'Personal data: columns to drop or pseudonymize before anything is written (`npm run check` lists the columns that look personal); adding a published column needs `npm run rewrite` first',
  ),
})

type ParsedTableConfig = z.output<typeof TableConfigSchema>

/** A table's configuration with its name resolved. */
export type TableConfig = Readonly<Omit<ParsedTableConfig, 'name'> & { name: string }>
export type GuardsConfig = Readonly<z.output<typeof GuardsSchema>>
export type TableGuardsConfig = z.output<typeof TableGuardsSchema>
export type RetentionConfig = z.output<typeof RetentionSchema>
export type ErasedRowsAction = z.output<typeof ErasedRowsSchema>
export type TableFormat = z.output<typeof TableFormatSchema>

/** The warehouse name of a table whose configuration gives none. */
export const defaultTableName = (id: string): string => `table_${id.toLowerCase().replace(/-/g, '_')}`
