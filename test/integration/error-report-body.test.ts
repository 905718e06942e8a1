/**
 * A 200 whose CSV is not the saved table: an error report in CSV (`error,message`, Spring's
 * `timestamp,status,error,message,path`) is held as ERROR_REPORT_BODY on the first export too, and a CSV none of
 * whose columns the table ever had as COLUMNS_UNMATCHED; nothing is published and the run says what to check.
 * A saved table whose own columns are `error,message`, once accepted, is exported as any table.
 */
import { readdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'

let emulator: RunningEmulator
let work: string
let config: string
let token: string

const serveAsCsv = (body: string) =>
  emulator.faults.always('1001', { kind: 'status', status: 200, body, headers: { 'Content-Type': 'text/csv' } })

const exportTo = (out: string, ...flags: string[]) =>
  runExportInProcess(['--config', config, '--token-file', token, '--out', out, '--date', '2026-11-20', ...flags])

beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: { devices: 20, software: 5, users: 5 } }) })
  work = await tempDir('error-report-')
  token = await tokenFile(DEMO_TOKEN)
  config = path.join(work, 'config.json')
  await writeFile(
    config,
    JSON.stringify({ source: { baseUrl: emulator.baseUrl }, tables: [{ id: '1001', name: 'devices' }] }),
  )
})
afterEach(() => emulator.faults.clear())
afterAll(async () => {
  await emulator?.close()
})

describe('a CSV that is not the saved table', () => {
  it.each([
    ['error,message\n401,Unauthorized: the token has expired\n', 'error, message'],
    [
      'timestamp,status,error,message,path\n2026-11-20T02:00:00Z,500,Internal Server Error,Export failed,/rest/tables/1001/csv\n',
      'timestamp, status, error, message, path',
    ],
  ])('holds an error report on a first export: %j', async (body, columns) => {
    const out = path.join(work, `first-${columns.length}`)
    serveAsCsv(body)
    const result = await exportTo(out)
    expect(result.exitCode).toBe(1)
    expect(result.stdout).toMatch(/devices\s+HELD ERROR_REPORT_BODY/)
    expect(result.stderr).toContain(
      `held: the body looks like an error report, not the saved table: its one row has only the columns ${columns}`,
    )
    expect(result.stderr).toContain(
      "the service answered 200 with an error report instead of the table: check the token's user",
    )
    expect(await readdir(out)).not.toContain('devices')
  })

  it('holds a CSV none of whose columns the table had, and keeps the last good data', async () => {
    const out = path.join(work, 'unmatched')
    expect((await exportTo(out)).exitCode).toBe(0)
    serveAsCsv('Job,State\n17,running\n18,queued\n')
    const result = await exportTo(out)
    expect(result.exitCode).toBe(1)
    expect(result.stdout).toMatch(/devices\s+HELD COLUMNS_UNMATCHED/)
    expect(result.stderr).toMatch(/none of the columns \(job, state\) is one the table had: it had device_id, /)
  })

  it('exports a saved table whose own columns look like a report once accepted, and then as any table', async () => {
    const out = path.join(work, 'real-errors')
    serveAsCsv('error,message\nE1,disk full\n')
    expect((await exportTo(out)).exitCode).toBe(1)
    const accepted = await exportTo(out, '--accept-changes')
    expect(accepted.exitCode, accepted.stderr).toBe(0)
    expect(accepted.stdout).toMatch(/devices\s+ok \(ERROR_REPORT_BODY accepted\)/)
    const again = await exportTo(out)
    expect(again.exitCode, again.stderr).toBe(0)
  })
})
