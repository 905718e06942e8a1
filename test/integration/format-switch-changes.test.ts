/**
 * A table switched from the CSV to the workbook (or back) with the same values shows no change: the row
 * fingerprint hashes an instant and a boolean in one notation, whichever export they came from
 * (normalize/canonical-cell.ts), so `<table>_changes` pairs every row off as unchanged; and a row whose values
 * are equal but spelt otherwise (as fingerprinted by an older version) is no `changed` row either.
 */
import { rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { runCommandInProcess, runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'

const ROWS = 500
const [D1, D2, D3] = ['2026-11-20', '2026-11-21', '2026-11-22']
/** Devices instants are written `...Z`, installed software's with offsets such as `+02:00`. */
const TABLES = [
  { id: '1001', name: 'devices', key: ['device_id'] },
  { id: '1002', name: 'installed_software', key: ['device_id', 'software_name'] },
]

let emulator: RunningEmulator
let folder: string
let out: string
let token: string

beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: { devices: ROWS, software: ROWS } }) })
  // One day of the stand-in for every export: the same values each time, only the format differs.
  emulator.upstream.setDate(D1)
  folder = await tempDir('format-switch-')
  out = path.join(folder, 'warehouse')
  token = await tokenFile(DEMO_TOKEN)
})
afterAll(async () => {
  await emulator?.close()
  await rm(folder, { recursive: true, force: true })
  await rm(path.dirname(token), { recursive: true, force: true })
})

const exportAs = async (format: 'csv' | 'xlsx', date: string, tables: readonly object[] = TABLES) => {
  const config = path.join(folder, `config-${date}-${Math.random()}.json`)
  tables = tables.map((table) => ({ ...table, format }))
  await writeFile(config, JSON.stringify({ source: { baseUrl: emulator.baseUrl }, tables }))
  const result = await runExportInProcess(['--config', config, '--token-file', token, '--out', out, '--date', date])
  expect(result.exitCode, result.stderr).toBe(0)
}

/** `npm run query` as CSV lines. */
const queryLines = async (sql: string): Promise<string[]> => {
  const result = await runCommandInProcess('query', ['--out', out, '--format', 'csv', sql])
  expect(result.exitCode, result.stderr).toBe(0)
  return result.stdout.split('\n').filter((line) => line !== '')
}

/** Each change with its count on `date`. */
const changesOn = (view: string, date: string): Promise<string[]> =>
  queryLines(`SELECT change, count(*) AS n FROM ${view} WHERE dt = '${date}' GROUP BY change ORDER BY change`)

describe('a table that switches between the CSV and the workbook', () => {
  it('shows no changed rows in its changes view, with instants in UTC and with offsets', async () => {
    await exportAs('csv', D1)
    await exportAs('xlsx', D2)
    await exportAs('csv', D3)
    for (const view of ['devices_changes', 'installed_software_changes']) {
      expect(await changesOn(view, D2)).toEqual(['change,n'])
      expect(await changesOn(view, D3)).toEqual(['change,n'])
    }
  })

  it('lists only the row whose values changed, not those whose values are spelt otherwise', async () => {
    const table = { id: 'spelt', name: 'spelt', key: ['id'] }
    const header = 'id,price,seen,note\n'
    emulator.setTable({
      id: 'spelt',
      title: 'Spelt',
      rawCsv: `${header}1,1.5,2026-11-20T10:00:00+02:00,a\n2,2.0,2026-11-20T08:00:00Z,b\n3,3.25,2026-11-20 08:00:00,c\n`,
    })
    await exportAs('csv', D1, [table])
    emulator.setTable({
      id: 'spelt',
      title: 'Spelt',
      rawCsv: `${header}1,1.50,2026-11-20T08:00:00Z,a\n2,2.0,2026-11-20T08:00:00Z,B\n3,3.25,2026-11-20T08:00:00Z,c\n`,
    })
    await exportAs('csv', D2, [table])
    const sql = `SELECT change, id, changed_columns FROM spelt_changes WHERE dt = '${D2}' ORDER BY id`
    expect(await queryLines(sql)).toEqual(['change,id,changed_columns', 'changed,2,"[""note""]"'])
  })
})
