import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import type { RunRecord } from '../../functions/export/core/run-record.ts'
import { retainedDates } from '../../functions/export/schema/retention.ts'
import { queryWarehouse } from '../../functions/local/warehouse-sql.ts'
import { runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'

let emulator: RunningEmulator
let out: string
let token: string
let config: string

beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: { devices: 60, software: 10, users: 10 } }) })
  out = await tempDir('retention-')
  token = await tokenFile(DEMO_TOKEN)
  config = path.join(out, '..', `${path.basename(out)}.json`)
  await writeFile(
    config,
    JSON.stringify({
      source: { baseUrl: emulator.baseUrl },
      tables: [{ id: '1001', name: 'devices', key: ['device_id'], archiveRaw: true }],
      warehouse: { retention: { days: 3, monthly: 2 } },
    }),
  )
})
afterAll(async () => {
  await emulator?.close()
})

const exportDay = async (date: string) => {
  emulator.upstream.setDate(date)
  const result = await runExportInProcess(['--config', config, '--token-file', token, '--out', out, '--date', date])
  const runId = /run (\S+) for dt=/.exec(result.stdout)?.[1]
  const record = JSON.parse(await readFile(path.join(out, '_runs', `dt=${date}`, `${runId}.json`), 'utf8')) as RunRecord
  return { ...result, table: record.tables[0]! }
}

const datesUnder = async (folder: string): Promise<string[]> =>
  (await readdir(path.join(out, folder)).catch(() => [] as string[]))
    .filter((name) => name.startsWith('dt='))
    .map((name) => name.slice(3))
    .sort()

describe('retention through the CLI', () => {
  it('keeps the dates within days of the newest and the first of each of the last months, in every folder', async () => {
    const days = ['2026-10-05', '2026-10-20', '2026-11-02', '2026-11-10', '2026-11-28', '2026-11-29', '2026-11-30']
    // From 2026-11-29 the service lists 54 of the 60 devices: a change the view must still find once dates go.
    emulator.upstream.add({ tableId: '1001', from: '2026-11-29', keepRows: 0.9 })
    let last: Awaited<ReturnType<typeof exportDay>> | undefined
    for (const day of days) {
      last = await exportDay(day)
      expect(last.exitCode, last.stderr).toBe(0)
    }
    // 2026-11-28..30 are within 3 days of the newest; 2026-11-02 is November's first date; 2026-10 is outside the
    // last two months (November and October count: October's first date, 2026-10-05, stays).
    const kept = ['2026-10-05', '2026-11-02', '2026-11-28', '2026-11-29', '2026-11-30']
    expect(await datesUnder('devices')).toEqual(kept)
    expect(await datesUnder('_export_dates/devices')).toEqual(kept)
    expect(await datesUnder('_raw/devices')).toEqual(kept)
    const { rows } = await queryWarehouse(out, 'SELECT dt, previous_dt FROM devices_export_dates ORDER BY dt')
    expect(rows.map((r) => r.map(String))).toEqual([
      ['2026-10-05', 'null'],
      ['2026-11-02', '2026-10-05'],
      ['2026-11-28', '2026-11-02'],
      ['2026-11-29', '2026-11-28'],
      ['2026-11-30', '2026-11-29'],
    ])
    // The run that removed a date says so in its record.
    expect(last?.table.expiredDates).toBeUndefined()
  })

  it('records the dates a run removed, and the oldest kept date shows no changes rather than every row added', async () => {
    const day = await exportDay('2026-12-01')
    expect(day.exitCode, day.stderr).toBe(0)
    // Newest 2026-12-01: days keeps 11-29..12-01; monthly 2 keeps the firsts of December and November.
    expect(day.table.expiredDates).toEqual(['2026-10-05', '2026-11-28'])
    expect(day.stderr).toContain('devices: removed past its retention: dt=2026-10-05, dt=2026-11-28')
    expect(await datesUnder('devices')).toEqual(['2026-11-02', '2026-11-29', '2026-11-30', '2026-12-01'])
    const { rows } = await queryWarehouse(
      out,
      "SELECT dt, change, count(*) FROM devices_changes WHERE dt IN ('2026-11-02', '2026-11-29') GROUP BY ALL ORDER BY ALL",
    )
    // 2026-11-02 is now the oldest date: nothing before it to compare with (without the relation's rewrite it would
    // pair with the removed 2026-10-05 and list all 60 rows as added). 2026-11-29 compares with 2026-11-02.
    expect(rows.map((r) => r.map(String))).toEqual([['2026-11-29', 'removed', '6']])
    const { rows: previous } = await queryWarehouse(out, 'SELECT dt, previous_dt FROM devices_export_dates ORDER BY dt')
    expect(previous.map((r) => r.map(String))[0]).toEqual(['2026-11-02', 'null'])
    expect(previous.map((r) => r.map(String))[1]).toEqual(['2026-11-29', '2026-11-02'])
  })

  it('removes a backfill older than the retention in the run that wrote it, and says so', async () => {
    const day = await exportDay('2026-11-15')
    expect(day.exitCode, day.stderr).toBe(0)
    expect(day.table.expiredDates).toEqual(['2026-11-15'])
    expect(day.stderr).toContain(
      "warning: devices: dt=2026-11-15 is past the table's retention: it was written and removed",
    )
    expect(await datesUnder('devices')).toEqual(['2026-11-02', '2026-11-29', '2026-11-30', '2026-12-01'])
  })
})

describe('which dates a retention keeps', () => {
  const dates = ['2025-12-31', '2026-01-01', '2026-01-15', '2026-02-03', '2026-02-28', '2026-03-01', '2026-03-02']

  it('keeps every date when retention is off', () => {
    expect(retainedDates(dates, false)).toEqual(dates)
  })

  it('keeps the dates less than days before the newest (newest - date < days)', () => {
    expect(retainedDates(dates, { days: 1 })).toEqual(['2026-03-02'])
    expect(retainedDates(dates, { days: 2 })).toEqual(['2026-03-01', '2026-03-02'])
    expect(retainedDates(dates, { days: 3 })).toEqual(['2026-02-28', '2026-03-01', '2026-03-02'])
  })

  it('adds the first date of each of the last months, the newest month included, across a year end', () => {
    expect(retainedDates(dates, { days: 1, monthly: 1 })).toEqual(['2026-03-01', '2026-03-02'])
    expect(retainedDates(dates, { days: 1, monthly: 3 })).toEqual([
      '2026-01-01',
      '2026-02-03',
      '2026-03-01',
      '2026-03-02',
    ])
    expect(retainedDates(dates, { days: 1, monthly: 4 })).toEqual([
      '2025-12-31',
      '2026-01-01',
      '2026-02-03',
      '2026-03-01',
      '2026-03-02',
    ])
  })
})
