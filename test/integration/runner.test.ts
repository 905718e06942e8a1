import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { parse } from 'csv-parse/sync'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import type { RunRecord } from '../../functions/export/core/run-record.ts'
import { runCliProcess, runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'
import { query } from '../support/duckdb.ts'

let emulator: RunningEmulator
let token: string

beforeAll(async () => {
  emulator = await startInventoryEmulator()
  token = await tokenFile(DEMO_TOKEN)
})
afterAll(() => emulator.close())

const readRunRecord = async (out: string): Promise<RunRecord> => {
  const folder = path.join(out, '_runs')
  const [partition] = (await readdir(folder)).filter((name) => name.startsWith('dt='))
  const [file] = await readdir(path.join(folder, partition!))
  return JSON.parse(await readFile(path.join(folder, partition!, file!), 'utf8')) as RunRecord
}

const servedCsv = async (tableId: string): Promise<string[][]> => {
  const response = await fetch(`${emulator.baseUrl}/rest/tables/${tableId}/csv`, { headers: { token: DEMO_TOKEN } })
  return parse(await response.text()) as string[][]
}

describe('the local runner', () => {
  it('exports the demo data with no arguments and exits 0', async () => {
    const out = await tempDir()
    const result = await runCliProcess(['export', '--demo', '--out', out, '--date', '2026-01-15'])
    expect(result.exitCode).toBe(0)
    for (const name of ['devices', 'installed_software', 'users', 'payroll_devices']) {
      expect(await readdir(path.join(out, name, 'dt=2026-01-15'))).toEqual(['data.parquet'])
    }
    expect(result.stdout).toMatch(/devices\s+ok\s+2,500\s+20\s+5\s/)
    expect(result.stdout).toContain('4 of 4 tables exported')
  })

  it('reads back every row and cell the service served, commas, quotes, line breaks and non-ASCII text included', async () => {
    const out = await tempDir()
    const result = await runExportInProcess([
      '--base-url',
      emulator.baseUrl,
      '--table',
      '1001=devices',
      '--token-file',
      token,
      '--out',
      out,
    ])
    expect(result.exitCode).toBe(0)
    const [header, ...rows] = await servedCsv('1001')
    const glob = path.join(out, 'devices/*/data.parquet')
    const names = (await readRunRecord(out)).tables[0]!.columns!.filter((c) => c.header !== undefined)
    const selectList = names.map((c) => `CAST("${c.name}" AS VARCHAR) AS "${c.name}"`).join(', ')
    const read = await query(`SELECT ${selectList}, _source_row_number FROM '${glob}' ORDER BY _source_row_number`)
    expect(read).toHaveLength(rows.length)
    expect(names.map((c) => c.header)).toEqual(header)
    const typeOf = Object.fromEntries(names.map((c) => [c.name, c.type]))
    read.forEach((row, i) => {
      names.forEach((column, c) => {
        expect({ row: i + 1, column: column.name, value: meaning(typeOf[column.name]!, row[column.name]) }).toEqual({
          row: i + 1,
          column: column.name,
          value: meaning(typeOf[column.name]!, rows[i]![c] === '' ? null : rows[i]![c]),
        })
      })
    })
    const tricky = rows.flat().filter((cell) => /[,"\n]/.test(cell) || /[^\x00-\x7f]/.test(cell))
    expect(tricky.length).toBeGreaterThan(10)
  })

  it('exits 1 when a table fails, still exporting the others, and says which table and what to do', async () => {
    const out = await tempDir()
    const result = await runExportInProcess([
      '--base-url',
      emulator.baseUrl,
      '--table',
      '1003=users',
      '--table',
      '424242=missing',
      '--token-file',
      token,
      '--out',
      out,
    ])
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toContain('missing: FAILED [TABLE_NOT_FOUND] table 424242')
    expect(result.stderr).toMatch(/next step: check the table id/)
    expect(await readdir(path.join(out, 'users'))).toHaveLength(1)
    await expect(readdir(path.join(out, 'missing'))).rejects.toThrow()
    const record = await readRunRecord(out)
    expect(record.status).toBe('failed')
    expect(record.tables.map((t) => [t.name, t.status, t.error?.code, t.httpStatus])).toEqual([
      ['users', 'succeeded', undefined, 200],
      ['missing', 'failed', 'TABLE_NOT_FOUND', 404],
    ])
  })

  it.each([
    ['an unknown flag', ['--bogus'], /unknown flag --bogus/],
    [
      'a table name that is not a safe path segment',
      ['--table', '1001=../etc'],
      /tables\[0\]\.name: must be lowercase/,
    ],
    [
      'a base URL with embedded credentials',
      ['--base-url', 'https://user:pw@inventory.example.com'],
      /source\.baseUrl: must not embed credentials/,
    ],
    ['plain http to a remote host', ['--base-url', 'http://inventory.example.com'], /source\.baseUrl: must use https/],
    ['an impossible date', ['--date', '2026-02-30'], /--date must be a calendar date/],
    ['no table', [], /tables: /],
  ])('exits 2 on %s, naming the problem', async (_, extra, message) => {
    const base = extra.includes('--base-url') ? [] : ['--base-url', emulator.baseUrl]
    const tables = extra.includes('--table') || extra.length === 0 ? [] : ['--table', '1001']
    const result = await runCliProcess(['export', ...base, ...tables, '--token-file', token, ...extra])
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toMatch(message)
  })

  it('exits 2 when no token is given', async () => {
    const result = await runCliProcess(['export', '--base-url', emulator.baseUrl, '--table', '1001'], {
      INVENTORY_TOKEN: '',
    })
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toContain('the API token could not be read from --token-file or INVENTORY_TOKEN')
  })

  it('takes the token from INVENTORY_TOKEN', async () => {
    const out = await tempDir()
    const result = await runCliProcess(['export', '--base-url', emulator.baseUrl, '--table', '1003', '--out', out], {
      INVENTORY_TOKEN: DEMO_TOKEN,
    })
    expect(result.exitCode).toBe(0)
    expect(await readdir(path.join(out, 'table_1003'))).toHaveLength(1)
  })

  it('documents every flag in --help', async () => {
    const result = await runCliProcess(['export', '--help'])
    expect(result.exitCode).toBe(0)
    for (const flag of ['--base-url', '--table', '--token-file', '--config', '--out', '--date', '--concurrency']) {
      expect(result.stdout).toContain(flag)
    }
  })
})

/** A cell's meaning, for comparing what DuckDB read with the CSV text. */
const meaning = (type: string, value: unknown): unknown => {
  if (value === null || value === undefined) return null
  const text = String(value)
  switch (type) {
    case 'bigint':
      return BigInt(text).toString()
    case 'double':
      return Number(text)
    case 'boolean':
      return text.toLowerCase() === 'true'
    case 'timestamp':
      return new Date(text.replace(' ', 'T').replace(/\+00$/, 'Z')).getTime()
    default:
      return text
  }
}
