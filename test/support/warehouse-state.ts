/**
 * What a warehouse holds, as text that two warehouses can be compared by: every table's rows per date (less the
 * lineage a new run gives: its run id and export time), its registry (less the run id of its latest export), its
 * dates relation and which raw bodies it keeps. Run records, leases and uploads in progress are left out: they name
 * runs, not data. Read through the store port, so a folder and a bucket compare alike.
 */
import type { WarehouseStore } from '../../functions/export/publish/store.ts'
import { readWithHyparquet } from './hyparquet-read.ts'

const LEFT_OUT = /^(_runs|_leases|_tmp)\//
const RUN_LINEAGE = new Set(['_export_run_id', '_exported_at'])

const json = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'bigint' ? `${v}n` : v instanceof Date ? v.toISOString() : v,
  )

const rowsOf = async (bytes: Buffer): Promise<string[]> =>
  (await readWithHyparquet(bytes))
    .map((row) => json(Object.fromEntries(Object.entries(row).filter(([name]) => !RUN_LINEAGE.has(name)))))
    .sort()

/** The warehouse's state, one entry per object that holds data or the table's definition. */
export const warehouseState = async (store: WarehouseStore): Promise<Record<string, unknown>> => {
  const state: Record<string, unknown> = {}
  for (const key of await store.listKeys('')) {
    if (LEFT_OUT.test(key)) continue
    const bytes = (await store.getObject(key))!
    if (key.endsWith('.parquet')) state[key] = await rowsOf(bytes)
    else if (key.startsWith('_schemas/')) {
      const { latestExport, ...registry } = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>
      const { runId: _runId, ...baseline } = (latestExport ?? {}) as Record<string, unknown>
      state[key] = { ...registry, latestExport: baseline }
    } else state[key] = 'kept'
  }
  return state
}
