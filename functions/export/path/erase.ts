/**
 * An erasure request: every date of one table rewritten without the rows whose columns hold the given values,
 * through the table's own path (`runExport`) fed by the date's own Parquet (source/warehouse-source.ts), so each
 * object is replaced exactly as an export replaces it, or left as it was. A date is rewritten only when it holds a
 * matching row, so a rerun after a crash or a failure finishes what is left and a finished request changes nothing.
 * A date's raw bodies (`_raw/`) hold the rows as received: they are deleted before the date is rewritten. Before
 * any date, the request is recorded as keyed digests (schema/erasure-requests.ts), so every later run of the table
 * leaves its rows out while the service still has them. The values are never logged, recorded in clear or put in
 * an error: only the column names and the counts are.
 */
import type { TableCatalog } from '../catalog/table-catalog.ts'
import type { ExportConfig, TableConfig } from '../core/config.ts'
import { ColumnType, PARTITION_KEY, RAW_FOLDER, RunMode } from '../core/constants.ts'
import {
  conditionDigests,
  type DigestCondition,
  TYPED_SPELLINGS,
  type TypedSpelling,
} from '../core/digest-condition.ts'
import { ConfigError, UsageError } from '../core/errors.ts'
import { LINEAGE_COLUMN_NAMES } from '../core/lineage.ts'
import type { PseudonymizationKey } from '../core/pseudonymization-key.ts'
import type { RunRecord } from '../core/run-record.ts'
import { keyCheck, pseudonym } from '../normalize/personal-data.ts'
import { bigintAt, booleanAt, dateAt, doubleAt, parsed, timestampAt } from '../normalize/values.ts'
import type { WarehouseStore } from '../publish/store.ts'
import { type ErasureRequest, recordErasureRequest } from '../schema/erasure-requests.ts'
import { publishedPseudonyms } from '../schema/history.ts'
import { readTableSchema } from '../schema/registry.ts'
import { storedDates } from '../schema/retention.ts'
import type { TableSchema } from '../schema/table-schema.ts'
import {
  asReadBack,
  cellText,
  type HistoryColumn,
  type RowFilter,
  warehouseSource,
} from '../source/warehouse-source.ts'
import { layoutOf } from './layout-of.ts'
import { runExport } from './run.ts'
import { type HistoryLeaseClaim, type TableLease, withHistoryLease } from './table-lease.ts'
import { purgeVersions } from './table-steps.ts'
import type { RunTelemetry } from './telemetry.ts'

/** A condition with the value in clear (the CLI on the operator's machine). */
export interface ValueCondition {
  /** An exported data column of the table. */
  readonly column: string
  /** The value as the service sent it (for a pseudonymized column: in clear; its pseudonym is matched). */
  readonly value: string
}

export { type DigestCondition, TYPED_SPELLINGS, type TypedSpelling } from '../core/digest-condition.ts'

export type ErasureCondition = ValueCondition | DigestCondition

export interface ErasureDeps extends HistoryLeaseClaim {
  readonly store: WarehouseStore
  readonly telemetry: RunTelemetry
  readonly spoolDirectory: string
  readonly pseudonymizationKey?: PseudonymizationKey | undefined
  /** Told each rewritten date's schema, as an export tells it (Glue on AWS). */
  readonly catalog?: TableCatalog | undefined
}

export interface ErasedDate {
  readonly exportDate: string
  /** Rows that matched (and, unless a dry run, were removed). */
  readonly rows: number
  /** The date's rewrite, when one ran. */
  readonly record?: RunRecord
}

export interface ErasureResult {
  readonly table: string
  readonly columns: readonly string[]
  /** The request as the warehouse records it (not in a dry run), and whether this call recorded it. */
  readonly request?: { readonly recorded: ErasureRequest; readonly isNew: boolean }
  readonly dates: readonly ErasedDate[]
  /** Earlier versions of the table's objects deleted for good (a versioned bucket; none with `keepVersions`). */
  readonly versionsDeleted: number
  /** The first date whose rewrite failed: the request stopped there, and a rerun goes on from it. */
  readonly failed?: ErasedDate
}

type ErasureConfig = Pick<ExportConfig, 'export' | 'limits'>

const TEXT_OF: Record<string, (bytes: Uint8Array, start: number, end: number) => boolean> = {
  [ColumnType.BIGINT]: bigintAt,
  [ColumnType.DOUBLE]: doubleAt,
  [ColumnType.BOOLEAN]: booleanAt,
  [ColumnType.DATE]: dateAt,
  [ColumnType.TIMESTAMP]: timestampAt,
}

/** The texts a stored cell of `type` may show for `value`: the value as given, and its typed value's spelling. */
const spellings = (value: string, type: ColumnType): string[] => {
  const parse = TEXT_OF[type]
  const bytes = Buffer.from(value)
  if (parse === undefined || !parse(bytes, 0, bytes.length)) return [value]
  const typed =
    type === ColumnType.BIGINT
      ? parsed.isBig
        ? parsed.big
        : BigInt(parsed.value)
      : type === ColumnType.BOOLEAN
        ? parsed.value === 1
        : type === ColumnType.DATE
          ? new Date(parsed.value * 86_400_000)
          : type === ColumnType.TIMESTAMP
            ? new Date(parsed.value)
            : parsed.value
  return [...new Set([value, cellText(typed, type)!])]
}

/** The keyed digest of a text: its pseudonym, so that a pseudonymized column's stored cell is its own digest. */
const digestOf = (key: PseudonymizationKey, text: string): string => pseudonym(key, Buffer.from(text))

/** The value of `condition` as digests only, for an event that must not carry it in clear. */
export const digestCondition = (key: PseudonymizationKey, { column, value }: ValueCondition): DigestCondition => {
  const typed: Partial<Record<TypedSpelling, string>> = {}
  for (const type of TYPED_SPELLINGS) {
    const spelt = spellings(value, type).find((text) => text !== value)
    if (spelt !== undefined) typed[type] = digestOf(key, spelt)
  }
  return { column, digest: digestOf(key, value), ...(Object.keys(typed).length > 0 ? { typed } : {}) }
}

const keyNeeded = (column: string, why: string) =>
  new ConfigError('pseudonymization key', [
    { field: '--pseudonymization-key-file', message: `is needed: ${column} ${why}` },
  ])

/**
 * The conditions as matchers of stored texts, one per column: a row matches when each column named holds one of
 * its values (several values of one column are several people). Names the column, never the value, when it
 * cannot be matched.
 */
const rowFilters = (
  table: TableConfig,
  schema: TableSchema,
  conditions: readonly ErasureCondition[],
  key: PseudonymizationKey | undefined,
): RowFilter[] => {
  const data = schema.columns.filter((c) => c.textOf === undefined && !LINEAGE_COLUMN_NAMES.includes(c.name))
  // What the dates hold: a column newly pseudonymized is still in clear until it is rewritten.
  const pseudonyms = publishedPseudonyms(table, schema)
  const byColumn = new Map<string, ErasureCondition[]>()
  for (const condition of conditions)
    byColumn.set(condition.column, [...(byColumn.get(condition.column) ?? []), condition])
  return [...byColumn].map(([column, given]) => {
    const registered = data.find((c) => c.name === column)
    if (registered === undefined) {
      throw new UsageError(
        `--where names "${column}", which is not a data column of ${table.name} (columns: ${data.map((c) => c.name).join(', ')})`,
      )
    }
    const pseudonymized = pseudonyms.includes(column)
    const texts = new Set<string>()
    const digests = new Set<string>()
    for (const condition of given) {
      if ('value' in condition && !pseudonymized) {
        for (const text of spellings(condition.value, registered.type)) texts.add(text)
        continue
      }
      if (key === undefined) {
        throw keyNeeded(
          column,
          pseudonymized
            ? 'is pseudonymized, so the value is matched by its pseudonym'
            : 'is matched by the digest of its stored texts',
        )
      }
      const digest = 'value' in condition ? digestCondition(key, condition) : condition
      // A pseudonymized column stores the digest itself; any other is compared by the digest of each stored text.
      for (const each of pseudonymized ? [digest.digest] : conditionDigests(digest, registered.type)) digests.add(each)
    }
    const hashed = pseudonymized ? (text: string) => text : (text: string) => digestOf(key!, text)
    return {
      column,
      matches: (text) => texts.has(text) || (text !== '' && digests.size > 0 && digests.has(hashed(text))),
    }
  })
}

/**
 * The request as the warehouse records it, before any date is rewritten: the values as digests with the key
 * (the same key every later run of the table matches them with), never in clear.
 */
const recordRequest = (
  store: WarehouseStore,
  table: TableConfig,
  conditions: readonly ErasureCondition[],
  key: PseudonymizationKey | undefined,
) => {
  if (key === undefined) {
    throw new ConfigError('pseudonymization key', [
      {
        field: '--pseudonymization-key-file',
        message: `is needed: the request is recorded as digests made with the key, so that every later export of ${table.name} leaves its rows out`,
      },
    ])
  }
  const where = conditions.map((c) => ('value' in c ? digestCondition(key, c) : c))
  return recordErasureRequest(store, { table: table.name, keyCheck: keyCheck(key), where })
}

interface ErasureOptions {
  readonly dryRun?: boolean
  /**
   * Leave the earlier versions a versioned bucket keeps of each date's objects, to its version expiry.
   * @default false: they are deleted, on every date, since an earlier version may hold the value where the current
   * one does not (a date exported again after the person left the service)
   */
  readonly keepVersions?: boolean
  /** Only these export dates (a batch of a fanned-out request); dates the table does not hold are skipped. */
  readonly dates?: readonly string[]
  readonly onDate?: (date: ErasedDate) => void
}

/**
 * Removes the matching rows from every date of `table` (or, with `dryRun`, counts them), under the table's lease
 * (path/table-lease.ts), so no export or other history operation writes the table meanwhile.
 */
export const eraseRows = (
  config: ErasureConfig,
  table: TableConfig,
  conditions: readonly ErasureCondition[],
  deps: ErasureDeps,
  options: ErasureOptions = {},
): Promise<ErasureResult> =>
  options.dryRun === true
    ? eraseDates(config, table, conditions, deps, options, undefined)
    : withHistoryLease(deps.store, table, config.export, deps, RunMode.ERASE, (lease) =>
        eraseDates(config, table, conditions, deps, options, lease),
      )

const eraseDates = async (
  config: ErasureConfig,
  table: TableConfig,
  conditions: readonly ErasureCondition[],
  deps: ErasureDeps,
  { dryRun = false, keepVersions = false, dates: only, onDate }: ErasureOptions,
  lease: TableLease | undefined,
): Promise<ErasureResult> => {
  const { store } = deps
  const schema = await readTableSchema(store, table.name)
  if (schema === undefined) {
    throw new UsageError(`${table.name} has no schema registry in ${store.root}: nothing of it was published there`)
  }
  const filters = rowFilters(table, schema, conditions, deps.pseudonymizationKey)
  const columns: HistoryColumn[] = schema.columns.map(({ name, header, type, textOf }) => ({
    name,
    header,
    type,
    textOf,
  }))
  // The pseudonyms it reads back stay pseudonyms, and the footer keeps saying so (a later rewrite reads it).
  const pseudonymized = publishedPseudonyms(table, schema)
  const layout = layoutOf(table, store, deps.catalog)
  const source = warehouseSource(store, {
    mode: RunMode.ERASE,
    dataKey: (exportDate) => layout.dataKey(exportDate),
    columns,
    pseudonymized,
    filters,
    spoolDirectory: deps.spoolDirectory,
  })
  const stored = asReadBack(table)
  const request = dryRun ? undefined : await recordRequest(store, table, conditions, deps.pseudonymizationKey)
  const dates: ErasedDate[] = []
  const purge = !dryRun && !keepVersions
  let versionsDeleted = 0
  const wanted = only === undefined ? undefined : new Set(only)
  for (const exportDate of await storedDates(store, table.name, layout)) {
    if (wanted !== undefined && !wanted.has(exportDate)) continue
    lease?.signal.throwIfAborted()
    const rows = await countMatches(source, stored, exportDate)
    // A date without the value now may have had it in an earlier version (or a rerun finishes its purge).
    if (rows === 0 && purge) versionsDeleted += await purgeVersions(store, layout, table.name, exportDate)
    if (rows === 0) continue
    let record: RunRecord | undefined
    if (!dryRun) {
      for (const key of await store.listKeys(`${RAW_FOLDER}/${table.name}/${PARTITION_KEY}=${exportDate}/`)) {
        await store.deleteObject(key)
      }
      record = await runExport(
        { ...config, tables: [stored] },
        // The path applies every recorded request, this one included, with the key they were made with.
        { ...deps, source, lease },
        { exportDate, acceptChanges: true, purgeVersions: purge },
      )
      versionsDeleted += record.tables[0]?.versionsDeleted ?? 0
    }
    const date = { exportDate, rows, ...(record ? { record } : {}) }
    dates.push(date)
    onDate?.(date)
    if (record?.status === 'failed')
      return { ...result(table, conditions, request), dates, versionsDeleted, failed: date }
  }
  return { ...result(table, conditions, request), dates, versionsDeleted }
}

const result = (
  table: TableConfig,
  conditions: readonly ErasureCondition[],
  request: Awaited<ReturnType<typeof recordRequest>> | undefined,
) => ({
  table: table.name,
  columns: [...new Set(conditions.map((c) => c.column))],
  ...(request ? { request: { recorded: request.request, isNew: request.recorded } } : {}),
})

/** The rows of `exportDate` that match, by reading the date through the source without writing anything. */
const countMatches = async (
  source: ReturnType<typeof warehouseSource>,
  table: TableConfig,
  exportDate: string,
): Promise<number> => {
  const bytes = await source.open(table, { exportDate, attempt: 1 })
  try {
    for await (const _ of bytes.body);
    return bytes.erasure?.().rowsRemoved ?? 0
  } finally {
    bytes.cancel()
  }
}
