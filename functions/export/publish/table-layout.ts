/**
 * The table layout port: where a date's data file goes, how it becomes the date's data, and how dates leave.
 * The table's path writes through it and never names a key itself, so the same steps land a date in either
 * layout: Hive-style (one object per date, replaced in place: the upload's commit is the publish), or Apache
 * Iceberg (a new file per export, made the date's data by a snapshot commit; iceberg/iceberg-layout.ts).
 */
import { DATA_OBJECT_NAME, dataObjectKey, EXPORT_DATE_PATTERN, PARTITION_KEY } from '../core/constants.ts'
import type { ColumnRecord } from '../core/run-record.ts'
import type { WarehouseStore } from './store.ts'

/** A committed upload of a date's Parquet file. */
export interface WrittenFile {
  readonly key: string
  readonly bytes: number
  readonly rows: number
}

export interface TableLayout {
  readonly format: 'hive' | 'iceberg'
  /** Where this run uploads the date's new data file. */
  newDataKey(exportDate: string, runId: string): string
  /** The dates that have data, as the layout itself records them (the dates relation aside). */
  dates(): Promise<string[]>
  /** The date's current data file, or undefined when it has none. */
  dataKey(exportDate: string): Promise<string | undefined>
  /**
   * Makes a committed upload the date's data; `columns` are the table's, in the file's order. Resolves to warnings
   * for the run record: upkeep after the data is in place (an Iceberg table's expiry) that failed, to be retried.
   */
  publish(exportDate: string, file: WrittenFile, columns: readonly ColumnRecord[]): Promise<readonly string[]>
  /** Takes the dates' data out of the table (retention); resolves to the objects deleted. */
  removeDates(dates: readonly string[]): Promise<number>
  /**
   * Once a date was written without values it held (an erasure, a rewrite that drops or pseudonymizes): removes
   * for good what still holds them. Resolves to the objects or versions deleted.
   */
  forgetReplaced(exportDate: string): Promise<number>
  /** Key prefixes the date's data files (current and replaced) are under, for their earlier versions. */
  dataPrefixes(exportDate: string): readonly string[]
}

export const hiveLayout = (store: WarehouseStore, table: string): TableLayout => ({
  format: 'hive',
  newDataKey: (exportDate) => dataObjectKey(table, exportDate),
  dates: async () => {
    const pattern = new RegExp(`^${table}/${PARTITION_KEY}=([^/]+)/${DATA_OBJECT_NAME}$`)
    const keys = await store.listKeys(`${table}/`)
    return keys.flatMap((key) => pattern.exec(key)?.[1] ?? []).filter((date) => EXPORT_DATE_PATTERN.test(date))
  },
  dataKey: async (exportDate) => dataObjectKey(table, exportDate),
  // The upload's commit replaced the object in place: nothing else makes it the date's.
  publish: async () => [],
  removeDates: async (dates) => {
    for (const date of dates) await store.deleteObject(dataObjectKey(table, date))
    return dates.length
  },
  // The object was replaced in place; a versioned bucket's earlier versions are the path's purge.
  forgetReplaced: async () => 0,
  dataPrefixes: (exportDate) => [`${table}/${PARTITION_KEY}=${exportDate}/`],
})
