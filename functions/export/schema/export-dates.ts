/**
 * The dates relation of a table: one tiny Parquet object per export date, `_export_dates/<table>/dt=<date>/
 * dates.parquet`, whose one row names the table's export date before it (`previous_dt`, NULL for the first).
 * `<table>_changes` joins each date's rows with the previous date's through it, so the view's text stays the same
 * size however many dates there are, and no state read or rewritten on every run grows with them: a run writes
 * its own date's object (and, for a backfill, rewrites the next date's), and lists the prefix once.
 *
 * Written right after the date's data object commits and before the registry and the catalog, with a one-step
 * put that replaces the object whole: a run that fails in between fails the table, and its rerun writes the
 * object again. Until then that date shows no changes; it never shows wrong ones.
 */
import { parquetWriteBuffer } from 'hyparquet-writer'
import {
  EXPORT_DATE_PATTERN,
  EXPORT_DATES_FOLDER,
  EXPORT_DATES_OBJECT_NAME,
  PARTITION_KEY,
  PREVIOUS_DATE_COLUMN,
} from '../core/constants.ts'
import type { WarehouseStore } from '../publish/store.ts'

const PARQUET_CONTENT_TYPE = 'application/vnd.apache.parquet'

/** The table's folder of the dates relation, relative to the warehouse root (ends with `/`). */
export const exportDatesFolder = (table: string): string => `${EXPORT_DATES_FOLDER}/${table}/`

const exportDateObjectKey = (table: string, date: string): string =>
  `${exportDatesFolder(table)}${PARTITION_KEY}=${date}/${EXPORT_DATES_OBJECT_NAME}`

/** The one-row object of `date`: its previous export date, or NULL. */
const exportDateObject = (previous: string | undefined): Uint8Array =>
  new Uint8Array(
    parquetWriteBuffer({
      columnData: [{ name: PREVIOUS_DATE_COLUMN, data: [previous ?? null], type: 'STRING', nullable: true }],
    }),
  )

/** The export dates the relation holds, sorted: one key per date, read from the listing alone. */
export const listExportDates = async (store: WarehouseStore, table: string): Promise<string[]> => {
  const folder = exportDatesFolder(table)
  const dates = new Set<string>()
  for (const key of await store.listKeys(folder)) {
    const relative = key.startsWith(folder) ? key.slice(folder.length) : key
    const match = new RegExp(`^${PARTITION_KEY}=([^/]+)/${EXPORT_DATES_OBJECT_NAME}$`).exec(relative)
    if (match && EXPORT_DATE_PATTERN.test(match[1]!)) dates.add(match[1]!)
  }
  return [...dates].sort()
}

/**
 * Adds `date` to the table's dates relation. `legacy` are the dates an older registry listed (`exportDates`):
 * those not yet in the relation are written once, which is the whole migration. A date new to the relation that
 * lands before a later one (a backfill) also rewrites that later date's object, whose previous date it now is.
 */
export const recordExportDate = async (
  store: WarehouseStore,
  table: string,
  date: string,
  legacy: readonly string[] = [],
): Promise<void> => {
  const listed = await listExportDates(store, table)
  const known = new Set(listed)
  const dates = [...new Set([...listed, ...legacy, date])].sort()
  const previousOf = (at: number) => (at > 0 ? dates[at - 1] : undefined)
  const write = (at: number) =>
    store.putObject(exportDateObjectKey(table, dates[at]!), exportDateObject(previousOf(at)), PARQUET_CONTENT_TYPE)
  const listedPrevious = new Map(listed.map((each, at) => [each, at > 0 ? listed[at - 1] : undefined]))
  for (const [at, each] of dates.entries()) {
    // The run's own date is written every time, so a rerun heals an object a failed run left out; another date
    // only when it is new (migration) or its previous date changed (a backfill landed just before it).
    if (each === date || !known.has(each) || listedPrevious.get(each) !== previousOf(at)) await write(at)
  }
}

/**
 * Takes `dates` out of the table's dates relation: first every remaining date whose previous date changes is
 * rewritten (the oldest remaining one gets NULL), then the dates' own objects are deleted. Returns the objects
 * deleted. Repeating it after a crash finishes what is left.
 */
export const forgetExportDates = async (
  store: WarehouseStore,
  table: string,
  dates: readonly string[],
): Promise<number> => {
  const gone = new Set(dates)
  const listed = await listExportDates(store, table)
  const remaining = listed.filter((date) => !gone.has(date))
  const listedPrevious = new Map(listed.map((each, at) => [each, at > 0 ? listed[at - 1] : undefined]))
  for (const [at, each] of remaining.entries()) {
    const previous = at > 0 ? remaining[at - 1] : undefined
    if (listedPrevious.get(each) !== previous) {
      await store.putObject(exportDateObjectKey(table, each), exportDateObject(previous), PARQUET_CONTENT_TYPE)
    }
  }
  const present = listed.filter((date) => gone.has(date))
  for (const date of present) await store.deleteObject(exportDateObjectKey(table, date))
  return present.length
}
