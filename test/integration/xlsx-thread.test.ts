/**
 * A workbook through the real export with the reading on a thread of its own (one parse thread granted, as from
 * 2,654 MB in Lambda or on two cores) and on the calling thread (none granted): the published tables answer the
 * same query row for row, in the sheet's order. A workbook too small for a thread to pay is read on the calling
 * thread.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { benchInput, benchWorkbook } from '../../bench/generate.ts'
import { parseConfigWithoutSource } from '../../functions/export/core/config.ts'
import { runExport } from '../../functions/export/path/run.ts'
import { FolderWarehouseStore } from '../../functions/export/publish/fs.ts'
import { readOnThread } from '../../functions/export/xlsx/workbook-thread.ts'
import { queryWarehouse } from '../../functions/local/warehouse-sql.ts'
import { tempDir } from '../support/cli.ts'
import { MemorySource } from '../support/memory-source.ts'
import { silentTelemetry } from '../support/telemetry.ts'

// Which path read the workbook is what this test is about; the thread's module itself runs unchanged.
vi.mock('../../functions/export/xlsx/workbook-thread.ts', async (original) => {
  const actual = await original<typeof import('../../functions/export/xlsx/workbook-thread.ts')>()
  return { ...actual, readOnThread: vi.fn(actual.readOnThread) }
})

const DATE = '2026-06-01'
/** About 22,000 rows of the device table: a 3 MB workbook, eight batches and more. */
const CSV_MEGABYTES = 5

describe('a workbook read on a thread of its own through the real export', () => {
  it('publishes the same rows in the same order as the workbook read on the calling thread', async () => {
    const input = await benchInput(await tempDir('xlsx-thread-input-'), CSV_MEGABYTES)
    const workbook = await benchWorkbook(input)
    const source = new MemorySource([{ id: 'wb', bytes: await readFile(workbook.file) }])
    const config = parseConfigWithoutSource({ tables: [{ id: 'wb', name: 'devices', format: 'xlsx' }] })
    const exportWith = async (parseThreads: number) => {
      const out = await tempDir('xlsx-thread-out-')
      const store = new FolderWarehouseStore(out)
      const deps = { source, store, telemetry: silentTelemetry, parseThreads }
      const record = await runExport(config, deps, { exportDate: DATE })
      expect(record.tables[0]).toMatchObject({ status: 'succeeded', format: 'xlsx', rows: input.rows })
      return out
    }
    const inline = await exportWith(0)
    expect(readOnThread).not.toHaveBeenCalled()
    const threaded = await exportWith(1)
    expect(readOnThread).toHaveBeenCalledTimes(1)

    // Every column but the run's own lineage, in the order the rows were published.
    const sql = `SELECT * EXCLUDE (_export_run_id, _exported_at) FROM devices`
    const [a, b] = await Promise.all([queryWarehouse(inline, sql), queryWarehouse(threaded, sql)])
    expect(b.rows.length).toBe(input.rows)
    expect(b.columns).toEqual(a.columns)
    expect(b.rows).toEqual(a.rows)
  }, 300_000)

  it('reads a workbook under 1 MiB on the calling thread even with a thread granted', async () => {
    vi.mocked(readOnThread).mockClear()
    const bytes = await readFile(path.resolve(import.meta.dirname, '../fixtures/xlsx/devices-xlsxwriter.xlsx'))
    const source = new MemorySource([{ id: 'small', bytes }])
    const config = parseConfigWithoutSource({ tables: [{ id: 'small', name: 'small', format: 'xlsx' }] })
    const store = new FolderWarehouseStore(await tempDir('xlsx-thread-small-'))
    const record = await runExport(config, { source, store, telemetry: silentTelemetry, parseThreads: 1 }, {})
    expect(record.tables[0]).toMatchObject({ status: 'succeeded', format: 'xlsx' })
    expect(readOnThread).not.toHaveBeenCalled()
  })
})
