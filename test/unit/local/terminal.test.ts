import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { parseExportConfig } from '../../../functions/export/core/config.ts'
import { renderSummary, terminalTelemetry } from '../../../functions/local/terminal.ts'

const [devices, users] = parseExportConfig({
  source: { baseUrl: 'http://127.0.0.1' },
  tables: [
    { id: '1001', name: 'devices' },
    { id: '1003', name: 'users' },
  ],
}).tables as [never, never]

const capture = (tty: boolean) => {
  const lines: string[] = []
  const statuses: string[] = []
  const output = {
    out: (line: string) => lines.push(`out: ${line}`),
    err: (line: string) => lines.push(line),
    ...(tty ? { status: (line: string) => statuses.push(line) } : {}),
  }
  return { lines, statuses, telemetry: terminalTelemetry(output) }
}

beforeEach(() => {
  vi.useFakeTimers()
  vi.setSystemTime(new Date('2026-11-22T10:00:00Z'))
})
afterEach(() => vi.useRealTimers())

describe('progress of a local run', () => {
  it('prints plain progress lines with bytes, rows and rate when output is not a terminal', () => {
    const { lines, telemetry } = capture(false)
    telemetry.tableStarted(devices)
    vi.advanceTimersByTime(4000)
    telemetry.tableProgress(devices, { bytes: 8_000_000, rows: 40_000 })
    telemetry.tableProgress(devices, { bytes: 9_000_000, rows: 45_000 })
    expect(lines).toEqual(['devices: downloading table 1001', 'devices: 8.0 MB received, 40,000 rows, 2.0 MB/s'])
  })

  it('keeps the tables in flight on one status line on a terminal, and prints finished tables above it', () => {
    const { lines, statuses, telemetry } = capture(true)
    telemetry.tableStarted(devices)
    telemetry.tableStarted(users)
    vi.advanceTimersByTime(2000)
    telemetry.tableProgress(devices, { bytes: 3_000_000, rows: 10_000 })
    telemetry.tableProgress(users, { bytes: 500_000, rows: 900 })
    vi.advanceTimersByTime(300)
    telemetry.tableProgress(users, { bytes: 1_000_000, rows: 1_800 })
    telemetry.tableFinished({
      tableId: '1003',
      name: 'users',
      status: 'succeeded',
      rows: 1_800,
      attempts: 1,
      bytesReceived: 1_000_000,
      objects: [],
      durationMs: 2300,
    })
    expect(statuses.at(-2)).toBe('devices: 3.0 MB, 10,000 rows, 1.3 MB/s | users: 1.0 MB, 1,800 rows, 435 KB/s')
    expect(statuses.at(-1)).toBe('devices: 3.0 MB, 10,000 rows, 1.3 MB/s')
    expect(lines).toContain('users: done, 1,800 rows')
  })
})

describe('the summary of a run', () => {
  it('counts data and lineage columns apart, and Parquet bytes apart from the archive kept beside them', () => {
    const summary = renderSummary(
      {
        runId: 'r1',
        exportDate: '2026-11-22',
        startedAt: '2026-11-22T10:00:00Z',
        finishedAt: '2026-11-22T10:00:01Z',
        status: 'succeeded',
        mode: 'export',
        tables: [
          {
            tableId: '1003',
            name: 'users',
            status: 'succeeded',
            rows: 800,
            bytesReceived: 97_400,
            columns: [
              { name: 'user_id', header: 'User ID', type: 'string' },
              { name: 'email', header: 'Email', type: 'string' },
              { name: '_export_run_id', type: 'string' },
            ],
            objects: [
              {
                key: 'users/dt=2026-11-22/data.parquet',
                location: '/w/users/dt=2026-11-22/data.parquet',
                bytes: 25_400,
              },
              { key: '_raw/users/dt=2026-11-22/body.csv.gz', location: '/w/_raw/x', bytes: 30_000 },
            ],
            durationMs: 300,
          },
        ],
      },
      '/w',
    )
    const [header, , users] = summary.split('\n')
    expect(header!.split(/ {2,}/).slice(2, 8)).toEqual([
      'rows',
      'data columns',
      'lineage columns',
      'received',
      'parquet',
      'archive',
    ])
    expect(users!.split(/ {2,}/).slice(2, 8)).toEqual(['800', '2', '1', '97.4 KB', '25.4 KB', '30.0 KB'])
  })
})
