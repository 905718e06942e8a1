/**
 * `npm run convert`: a table's history moved between the Hive layout and Apache Iceberg without downloading
 * anything, under the table's lease. To Iceberg, each date's object becomes the date's data file in a snapshot
 * of its own (no data is rewritten: the files carry no field ids, the table's name mapping reads them); back to
 * Hive, each date's current file is copied to the date's object. In both directions the table's readers switch
 * in one step (the pointer appears, or goes; on AWS the Glue table's one UpdateTable), only after every date is
 * in place, so an analyst sees the whole history before and after, never a part. A stopped conversion is
 * finished by running it again.
 */
import type { TableCatalog } from '../catalog/table-catalog.ts'
import type { ExportTuning, TableConfig } from '../core/config.ts'
import { dataObjectKey, ICEBERG_POINTERS_FOLDER } from '../core/constants.ts'
import { UsageError } from '../core/errors.ts'
import { LINEAGE_COLUMNS } from '../core/lineage.ts'
import { readPublishedExport } from '../parquet/published-export.ts'
import type { WarehouseStore } from '../publish/store.ts'
import { hiveLayout } from '../publish/table-layout.ts'
import { readTableSchema, replaceTableSchema } from '../schema/registry.ts'
import { layoutOf } from './layout-of.ts'
import { type HistoryLeaseClaim, withHistoryLease } from './table-lease.ts'
import { columnRecord } from './table-steps.ts'

export type TableFormat = 'hive' | 'iceberg'

export interface ConvertDeps extends HistoryLeaseClaim {
  readonly store: WarehouseStore
  readonly catalog?: TableCatalog | undefined
}

export interface ConvertResult {
  readonly table: string
  readonly to: TableFormat
  /** Dates moved by this run (a rerun moves only those a stopped one had not). */
  readonly moved: readonly string[]
  /** Dates the table has in the layout it is in now. */
  readonly dates: number
}

export const convertTable = (
  table: Pick<TableConfig, 'id' | 'name'>,
  tuning: Pick<ExportTuning, 'timeouts' | 'deadlineMarginSeconds'>,
  deps: ConvertDeps,
  to: TableFormat,
): Promise<ConvertResult> =>
  withHistoryLease(deps.store, table, tuning, deps, 'convert', async () => {
    const { store, catalog } = deps
    const schema = await readTableSchema(store, table.name)
    if (schema === undefined) {
      throw new UsageError(`${table.name} has no schema registry in ${store.root}: nothing of it was published there`)
    }
    const hive = hiveLayout(store, table.name)
    const iceberg = layoutOf({ name: table.name, tableFormat: 'iceberg' }, store, catalog)
    const moved: string[] = []
    if (to === 'iceberg') {
      const columns = [...schema.columns.map(columnRecord), ...LINEAGE_COLUMNS]
      const done = new Set(await iceberg.dates())
      for (const date of (await hive.dates()).sort()) {
        if (done.has(date)) continue
        const key = dataObjectKey(table.name, date)
        const published = await readPublishedExport(store, key)
        if (published === undefined) continue
        await iceberg.publish(date, { key, bytes: published.bytes, rows: published.rows }, columns)
        moved.push(date)
      }
      await replaceTableSchema(store, table.name, (current) => ({ ...current, tableFormat: 'iceberg' }))
      return { table: table.name, to, moved, dates: (await iceberg.dates()).length }
    }
    const dates = (await iceberg.dates()).sort()
    for (const date of dates) {
      const from = await iceberg.dataKey(date)
      const target = dataObjectKey(table.name, date)
      if (from === undefined || from === target) continue
      await copyObject(store, from, target)
      moved.push(date)
    }
    // The switch: every date is in place in the Hive layout before readers are told to read it.
    const { tableFormat: _iceberg, ...asHive } = await replaceTableSchema(store, table.name, (current) => {
      const { tableFormat: _, ...rest } = current
      return rest
    })
    await catalog?.publish(asHive, 'hive')
    await store.deleteObject(`${ICEBERG_POINTERS_FOLDER}/${table.name}.json`)
    for (const key of [
      ...(await store.listKeys(`${table.name}/data/`)),
      ...(await store.listKeys(`${table.name}/metadata/`)),
    ]) {
      await store.deleteObject(key)
    }
    return { table: table.name, to, moved, dates: (await hive.dates()).length }
  })

const copyObject = async (store: WarehouseStore, from: string, to: string): Promise<void> => {
  const body = await store.readObject(from)
  if (body === undefined) throw new UsageError(`${from} is missing: the Iceberg table names a file that is not there`)
  const upload = await store.openUpload(to, 'application/vnd.apache.parquet')
  try {
    for await (const chunk of body) await upload.write(chunk)
    await upload.commit()
  } catch (error) {
    await upload.abort()
    throw error
  }
}
