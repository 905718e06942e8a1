import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { FolderWarehouseStore } from '../../../functions/export/publish/fs.ts'
import { listExportDates, recordExportDate } from '../../../functions/export/schema/export-dates.ts'
import { tempDir } from '../../support/cli.ts'
import { query } from '../../support/duckdb.ts'

/** The relation as Athena would read it: (dt, previous_dt) from every object, by date. */
const relation = async (root: string) =>
  (
    await query(
      `SELECT regexp_extract(filename, 'dt=([0-9-]+)', 1) AS dt, previous_dt
       FROM read_parquet('${path.join(root, '_export_dates', 'devices', '*', '*.parquet')}', filename = true) ORDER BY dt`,
    )
  ).map((row) => [row.dt, row.previous_dt])

describe('the dates relation', () => {
  it('holds one object per date naming the date before it, and lists them from the keys alone', async () => {
    const store = new FolderWarehouseStore(await tempDir())
    for (const date of ['2026-03-01', '2026-03-02', '2026-03-04']) await recordExportDate(store, 'devices', date)
    await recordExportDate(store, 'devices', '2026-03-04')
    expect(await listExportDates(store, 'devices')).toEqual(['2026-03-01', '2026-03-02', '2026-03-04'])
    expect(await relation(store.root)).toEqual([
      ['2026-03-01', null],
      ['2026-03-02', '2026-03-01'],
      ['2026-03-04', '2026-03-02'],
    ])
  })

  it('moves the next date onto a backfilled one', async () => {
    const store = new FolderWarehouseStore(await tempDir())
    for (const date of ['2026-03-01', '2026-03-04', '2026-03-02']) await recordExportDate(store, 'devices', date)
    expect(await relation(store.root)).toEqual([
      ['2026-03-01', null],
      ['2026-03-02', '2026-03-01'],
      ['2026-03-04', '2026-03-02'],
    ])
  })

  it("takes in an older registry's list of dates once, with the run's own date", async () => {
    const store = new FolderWarehouseStore(await tempDir())
    await recordExportDate(store, 'devices', '2026-03-05', ['2026-03-01', '2026-03-03'])
    expect(await relation(store.root)).toEqual([
      ['2026-03-01', null],
      ['2026-03-03', '2026-03-01'],
      ['2026-03-05', '2026-03-03'],
    ])
  })
})
