/**
 * A re-export of a date that is not the latest is guarded against the object it would replace (its footer's row
 * count and columns), as the latest date is against the one before it; a date without an object is a true
 * backfill and has nothing to compare with.
 */
import { readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import type { RunRecord } from '../../functions/export/core/run-record.ts'
import { queryWarehouse } from '../../functions/local/warehouse-sql.ts'
import { runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'
import { query } from '../support/duckdb.ts'

const DEVICES = 1000
const [D0, D1, D2, TODAY] = ['2026-11-19', '2026-11-20', '2026-11-21', '2026-11-22']

let emulator: RunningEmulator
let out: string
let token: string

beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: { devices: DEVICES } }) })
  out = await tempDir('guarded-backfill-')
  token = await tokenFile(DEMO_TOKEN)
})
afterAll(async () => {
  await emulator?.close()
  await rm(out, { recursive: true, force: true })
  await rm(path.dirname(token), { recursive: true, force: true })
})

/** `npm start --date <date>` for the devices table, with the stand-in acting out `today`. */
const exportDate = async (date: string, today: string, ...flags: string[]) => {
  emulator.upstream.setDate(today)
  const result = await runExportInProcess([
    ...['--base-url', emulator.baseUrl, '--table', '1001=devices', '--token-file', token],
    ...['--out', out, '--date', date, ...flags],
  ])
  const runId = /run (\S+) for dt=/.exec(result.stdout)?.[1]
  const record = JSON.parse(await readFile(path.join(out, '_runs', `dt=${date}`, `${runId}.json`), 'utf8')) as RunRecord
  return { ...result, table: record.tables[0]! }
}

/** Rows of the date's published object, read back from the file. */
const publishedRows = async (date: string): Promise<number> => {
  const file = path.join(out, 'devices', `dt=${date}`, 'data.parquet')
  const [row] = await query(`SELECT count(*)::INTEGER AS n FROM read_parquet('${file}')`)
  return row!.n as number
}

describe('a re-export of an earlier date', () => {
  it('holds a header-only reply that would replace an earlier date, and keeps its object', async () => {
    expect((await exportDate(D1, D1)).exitCode).toBe(0)
    expect((await exportDate(D2, D2)).exitCode).toBe(0)
    emulator.upstream.add({ tableId: '1001', from: TODAY, keepRows: 0 })

    const again = await exportDate(D1, TODAY)
    expect(again.exitCode).toBe(1)
    expect(again.table).toMatchObject({
      status: 'failed',
      rows: 0,
      error: { code: 'ROW_COUNT_DROP' },
      guards: [{ code: 'ROW_COUNT_DROP', action: 'held', previousExportDate: D1, previousRows: DEVICES, rows: 0 }],
    })
    expect(again.table.guards?.[0]?.message).toBe(
      `0 rows where the previous export (dt=${D1}) had 1,000: 0.0% of it, below holdBelow 0.1`,
    )
    expect(await publishedRows(D1)).toBe(DEVICES)
  })

  it('publishes a backfill of a date that has no object, unguarded', async () => {
    const backfill = await exportDate(D0, TODAY)
    expect(backfill.exitCode).toBe(0)
    expect(backfill.table).toMatchObject({ status: 'succeeded', rows: 0 })
    expect(backfill.table.guards).toBeUndefined()
    expect(await publishedRows(D0)).toBe(0)
  })

  it('publishes the held re-export with --accept-changes, and the latest view stays on the latest date', async () => {
    const accepted = await exportDate(D1, TODAY, '--accept-changes')
    expect(accepted.exitCode).toBe(0)
    expect(accepted.table).toMatchObject({
      status: 'succeeded',
      rows: 0,
      guards: [{ code: 'ROW_COUNT_DROP', action: 'accepted', previousRows: DEVICES, rows: 0 }],
    })
    expect(await publishedRows(D1)).toBe(0)
    const { rows } = await queryWarehouse(out, 'SELECT count(*) AS n, max(dt) AS dt FROM devices_latest')
    expect(rows[0]!.map(String)).toEqual([String(DEVICES), D2])
  })
})
