/**
 * A rewrite of history after a column setting changed (`columnTypes`, `columns.drop`, `columns.pseudonymize` of a
 * published column, which the export refuses until then): every date of the table read from its own Parquet
 * (source/warehouse-source.ts) and written again through the table's path (`runExport`), against the schema the
 * settings ask for (schema/history.ts), each object replaced atomically or left as it was. The registry, and so
 * the export's refusal, Glue and the views, move only once every date is in line, so a run stopped in the middle
 * leaves a state the next run finishes: a date is known to be in line from its footer alone (its columns, their
 * types, and which of them hold pseudonyms), and is skipped. No value is logged, recorded or put in an error.
 */
import type { TableCatalog } from '../catalog/table-catalog.ts'
import type { ExportConfig, TableConfig } from '../core/config.ts'
import { ColumnType, PARTITION_KEY, RAW_FOLDER, RunMode } from '../core/constants.ts'
import { UsageError } from '../core/errors.ts'
import { LINEAGE_COLUMN_NAMES } from '../core/lineage.ts'
import type { PseudonymizationKey } from '../core/pseudonymization-key.ts'
import type { RunRecord } from '../core/run-record.ts'
import { type PublishedExport, readPublishedExport } from '../parquet/published-export.ts'
import type { WarehouseStore } from '../publish/store.ts'
import { publishedPseudonyms, rewrittenSchema, withCompanions } from '../schema/history.ts'
import { withoutColumns } from '../schema/merge.ts'
import { readTableSchema, replaceTableSchema } from '../schema/registry.ts'
import { storedDates } from '../schema/retention.ts'
import { companionName, type TableSchema } from '../schema/table-schema.ts'
import { asReadBack, warehouseSource } from '../source/warehouse-source.ts'
import { layoutOf } from './layout-of.ts'
import { requireKeyWhenPseudonymizing, runExport } from './run.ts'
import { type HistoryLeaseClaim, type TableLease, withHistoryLease } from './table-lease.ts'
import { catalogWarnings, purgeVersions } from './table-steps.ts'
import type { RunTelemetry } from './telemetry.ts'

export interface RewriteDeps extends HistoryLeaseClaim {
  readonly store: WarehouseStore
  readonly telemetry: RunTelemetry
  readonly spoolDirectory: string
  /** Needed when a date has a column to pseudonymize. */
  readonly pseudonymizationKey?: PseudonymizationKey | undefined
  /** Told the table's new schema once every date is in line (Glue on AWS). */
  readonly catalog?: TableCatalog | undefined
}

export interface RewrittenDate {
  readonly exportDate: string
  /** The date's rows and its object's size before the rewrite. */
  readonly rows: number
  readonly bytes: number
  /** The date's rewrite, when one ran (not in a dry run). */
  readonly record?: RunRecord
}

export interface RewriteResult {
  readonly table: string
  /** The dates rewritten (or, in a dry run, that would be); dates already in line are left out. */
  readonly dates: readonly RewrittenDate[]
  /** The first date whose rewrite failed: the rewrite stopped there, and a rerun goes on from it. */
  readonly failed?: RewrittenDate
  /** Whether every date is in line and the registry (and the catalog) are at the new schema. */
  readonly finished: boolean
  /** Whether this call changed the registry (a finished rewrite run again changes nothing). */
  readonly registryMoved?: boolean
  /** The catalog's warnings when it was told. */
  readonly warnings: readonly string[]
  /** Earlier versions of the dates' objects deleted for good (a drop or a pseudonymize, in a versioned bucket). */
  readonly versionsDeleted: number
}

export interface RewriteOptions {
  /** List the dates, rows and bytes that would change, and write nothing. @default false */
  readonly dryRun?: boolean
  /**
   * Leave the earlier versions a versioned bucket keeps of the dates a drop or a pseudonymize rewrites (they hold the
   * values in clear) to its version expiry. @default false: they are deleted
   */
  readonly keepVersions?: boolean
  /** Only these export dates (one batch of a fanned-out rewrite). @default every stored date */
  readonly dates?: readonly string[]
  /**
   * Move the registry and the catalog once the dates are done, after checking every stored date is in line (a
   * date that is not leaves them as they are, `finished: false`). @default true without `dates`, false with them
   */
  readonly finish?: boolean
  readonly onDate?: (date: RewrittenDate) => void
}

type RewriteConfig = Pick<ExportConfig, 'export' | 'limits'>

/** What a date's rewrite does, from its footer. */
interface PendingWork {
  /** Its columns still in clear that are to be pseudonymized. */
  readonly toHash: readonly string[]
  /** Whether it removes personal data (a dropped column, a clear value): its raw bodies go then. */
  readonly personal: boolean
}

/** What `exportDate`'s file needs, or undefined when it already is as `target` wants. */
const pendingWork = (
  published: PublishedExport | undefined,
  target: TableSchema,
  table: TableConfig,
  pseudonyms: readonly string[],
): PendingWork | undefined => {
  if (published === undefined) return { toHash: [], personal: false }
  const typeOf = new Map(target.columns.map((c) => [c.name, c.type]))
  const typed = target.columns.filter((c) => c.textOf === undefined && c.type !== ColumnType.STRING)
  const allowed = new Set(typed.map((c) => companionName(c.name)))
  const fieldsInLine = published.fields.every(
    ({ name, type }) =>
      LINEAGE_COLUMN_NAMES.includes(name) || (typeOf.has(name) ? typeOf.get(name) === type : allowed.has(name)),
  )
  const hashed = published.pseudonymized ?? pseudonyms
  const present = new Set(published.fields.map((f) => f.name))
  const toHash = table.columns.pseudonymize.filter((c) => present.has(c) && !hashed.includes(c))
  if (fieldsInLine && toHash.length === 0) return undefined
  const dropped = published.fields.some(({ name }) => table.columns.drop.includes(name))
  return { toHash, personal: dropped || toHash.length > 0 }
}

/**
 * The table as the path reads its own Parquet back: a plain UTF-8 CSV; only `toHash` still to pseudonymize. The
 * types come from the rewritten schema, as published types: a value the new type cannot hold is kept in the
 * column's `__text` companion, where a `columnTypes` entry would fail the date (VALUE_OUT_OF_RANGE).
 */
const asStored = (table: TableConfig, toHash: readonly string[]): TableConfig => {
  const readBack = asReadBack(table)
  return { ...readBack, columnTypes: {}, columns: { ...readBack.columns, pseudonymize: [...toHash] } }
}

/**
 * Brings every date of `table` (or of `dates`) in line with its column settings, then moves the registry; under the
 * table's lease (path/table-lease.ts), so no export or other history operation writes the table meanwhile.
 */
export const rewriteHistory = (
  config: RewriteConfig,
  table: TableConfig,
  deps: RewriteDeps,
  options: RewriteOptions = {},
): Promise<RewriteResult> =>
  options.dryRun === true
    ? rewriteDates(config, table, deps, options, undefined)
    : withHistoryLease(deps.store, table, config.export, deps, RunMode.REWRITE, (lease) =>
        rewriteDates(config, table, deps, options, lease),
      )

const rewriteDates = async (
  config: RewriteConfig,
  table: TableConfig,
  deps: RewriteDeps,
  { dryRun = false, keepVersions = false, dates, finish = dates === undefined, onDate }: RewriteOptions,
  lease: TableLease | undefined,
): Promise<RewriteResult> => {
  const { store } = deps
  const stored = await readTableSchema(store, table.name)
  if (stored === undefined) {
    throw new UsageError(`${table.name} has no schema registry in ${store.root}: nothing of it was published there`)
  }
  const target = rewrittenSchema(table, stored)
  // Checked before any date moves: a schema the catalog would refuse leaves the whole history as it is.
  deps.catalog?.check(target)
  const pseudonyms = publishedPseudonyms(table, stored)
  // The columns as stored (a dropped one is not read); the companions too, so a misfit's text is carried over.
  const columns = withoutColumns(stored, table.columns.drop).columns.map(({ name, header, type, textOf }) => ({
    name,
    header,
    type,
    textOf,
  }))
  const layout = layoutOf(table, store, deps.catalog)
  const source = warehouseSource(store, {
    mode: RunMode.REWRITE,
    dataKey: (exportDate) => layout.dataKey(exportDate),
    columns,
    pseudonymized: pseudonyms,
    spoolDirectory: deps.spoolDirectory,
  })
  const all = await storedDates(store, table.name, layout)
  const unknown = (dates ?? []).filter((d) => !all.includes(d))
  if (unknown.length > 0) throw new UsageError(`${table.name} has no export date ${unknown.join(', ')}`)
  const done: RewrittenDate[] = []
  // Until the registry moves, a date in line may be one a killed run rewrote before it purged: purged again then.
  const purge = !dryRun && !keepVersions && removesPersonalData(table, stored, pseudonyms)
  let versionsDeleted = 0
  for (const exportDate of dates ? all.filter((d) => dates.includes(d)) : all) {
    lease?.signal.throwIfAborted()
    const key = await layout.dataKey(exportDate)
    const published = key === undefined ? undefined : await readPublishedExport(store, key)
    const work = pendingWork(published, target, table, pseudonyms)
    if (work === undefined && purge) versionsDeleted += await purgeVersions(store, layout, table.name, exportDate)
    if (work === undefined) continue
    let record: RunRecord | undefined
    if (!dryRun) {
      // Before anything of the date moves (its raw bodies): without the key the date could not be rewritten.
      const stored = asStored(table, work.toHash)
      requireKeyWhenPseudonymizing([stored], [stored], deps.pseudonymizationKey)
      // As an erasure does: the raw bodies hold in clear what the date no longer has (reprocess needs none of it).
      if (work.personal) {
        for (const key of await store.listKeys(`${RAW_FOLDER}/${table.name}/${PARTITION_KEY}=${exportDate}/`)) {
          await store.deleteObject(key)
        }
      }
      record = await runExport(
        { ...config, tables: [stored] },
        { ...deps, source, catalog: deps.catalog, lease },
        {
          exportDate,
          acceptChanges: true,
          history: { schema: target },
          purgeVersions: purge && work.personal,
        },
      )
      versionsDeleted += record.tables[0]?.versionsDeleted ?? 0
    }
    const date = { exportDate, rows: published?.rows ?? 0, bytes: published?.bytes ?? 0, ...(record ? { record } : {}) }
    done.push(date)
    onDate?.(date)
    if (record?.status === 'failed')
      return { table: table.name, dates: done, failed: date, finished: false, warnings: [], versionsDeleted }
  }
  if (dryRun || !finish) return { table: table.name, dates: done, finished: false, warnings: [], versionsDeleted }
  return {
    table: table.name,
    dates: done,
    versionsDeleted,
    ...(await moveRegistry(table, deps, target, pseudonyms, all)),
  }
}

/** Whether the settings drop or newly pseudonymize a column the registry has: the dates hold it in clear until then. */
const removesPersonalData = (table: TableConfig, stored: TableSchema, pseudonyms: readonly string[]): boolean =>
  stored.columns.some(
    ({ name, textOf }) =>
      textOf === undefined &&
      (table.columns.drop.includes(name) || (table.columns.pseudonymize.includes(name) && !pseudonyms.includes(name))),
  )

/** Once every date is in line: the registry, with the companions the dates have, then the catalog. */
const moveRegistry = async (
  table: TableConfig,
  deps: RewriteDeps,
  target: TableSchema,
  pseudonyms: readonly string[],
  all: readonly string[],
): Promise<{ finished: boolean; registryMoved?: boolean; warnings: readonly string[] }> => {
  const layout = layoutOf(table, deps.store, deps.catalog)
  const companions = new Map<string, string[]>()
  for (const exportDate of all) {
    const key = await layout.dataKey(exportDate)
    const published = key === undefined ? undefined : await readPublishedExport(deps.store, key)
    if (pendingWork(published, target, table, pseudonyms) !== undefined) return { finished: false, warnings: [] }
    for (const { name } of published?.fields ?? []) {
      if (target.columns.some((c) => c.textOf === undefined && companionName(c.name) === name)) {
        companions.set(name, [...(companions.get(name) ?? []), exportDate])
      }
    }
  }
  let before: TableSchema | undefined
  const registered = await replaceTableSchema(deps.store, table.name, (current) => {
    before = current
    return withCompanions(rewrittenSchema(table, current), companions)
  })
  const registryMoved = JSON.stringify(before) !== JSON.stringify(registered)
  const warnings = await catalogWarnings(deps.catalog, registered, deps.store.root, layout.format)
  return { finished: true, registryMoved, warnings }
}
