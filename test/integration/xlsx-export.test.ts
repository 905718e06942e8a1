/**
 * Workbooks through the real runner against the stand-in: the same table read from its CSV and from its workbook
 * lands with the same names, types and values; a workbook that cannot be read fails with its code and the
 * previous data stays; a table may switch format; the raw archive and reprocess work for workbooks.
 */
import { createHash } from 'node:crypto'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Fault } from '../../emulator/index.ts'
import { DEMO_TOKEN, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import type { RunRecord, TableOutcome } from '../../functions/export/core/run-record.ts'
import { runCommandInProcess, runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'
import { readParquetTable } from '../support/fixtures.ts'

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/xlsx')
const fixture = (name: string) => readFile(path.join(FIXTURES, name))
const RUN_COLUMNS = ['_export_run_id', '_exported_at']

let emulator: RunningEmulator
let token: string
beforeAll(async () => {
  emulator = await startInventoryEmulator()
  token = await tokenFile(DEMO_TOKEN)
  for (const name of ['devices-xlsxwriter', 'times-openpyxl-1904']) {
    emulator.setTable({
      id: name,
      title: name,
      rawCsv: await fixture(`${name}.csv`),
      rawXlsx: await fixture(`${name}.xlsx`),
    })
  }
})
afterAll(() => emulator.close())

interface Run {
  readonly exitCode: number
  readonly stdout: string
  readonly stderr: string
  readonly tables: readonly TableOutcome[]
}

/** `npm start` with a config of `tables` into `out` for `date`; the newest run record of that date. */
const exportTables = async (out: string, date: string, tables: readonly Record<string, unknown>[]): Promise<Run> => {
  const config = path.join(out, '..', `${path.basename(out)}-${date}-${Math.random()}.json`)
  await writeFile(config, JSON.stringify({ source: { baseUrl: emulator.baseUrl }, tables }))
  const cli = await runExportInProcess(['--config', config, '--token-file', token, '--out', out, '--date', date])
  const folder = path.join(out, '_runs', `dt=${date}`)
  const files = (await readdir(folder)).sort()
  const records = await Promise.all(
    files.map(async (f) => JSON.parse(await readFile(path.join(folder, f), 'utf8')) as RunRecord),
  )
  const newest = records.sort((a, b) => a.startedAt.localeCompare(b.startedAt)).at(-1)!
  return { ...cli, tables: newest.tables }
}

/**
 * The fingerprint hashes each cell's text as read, and a workbook spells some values differently from the CSV
 * (docs/analysts.md, "Lineage columns", says what that means for `_changes`), so it is left out of the comparison.
 */
const NOT_COMPARED = [...RUN_COLUMNS, '_row_fingerprint']

const landed = async (out: string, name: string, date: string) => {
  const table = await readParquetTable(path.join(out, name, `dt=${date}`, 'data.parquet'))
  return {
    columns: table.columns.filter((c) => !NOT_COMPARED.includes(c.name)),
    rows: table.rows.map((row) => Object.fromEntries(Object.entries(row).filter(([k]) => !NOT_COMPARED.includes(k)))),
  }
}

const sha256 = async (file: string) =>
  createHash('sha256')
    .update(await readFile(file))
    .digest('hex')

describe('a table lands the same from its workbook as from its CSV', () => {
  it('the demo tables: same names, types and values', async () => {
    const csvOut = await tempDir('xlsx-demo-csv-')
    const xlsxOut = await tempDir('xlsx-demo-xlsx-')
    const csv = await runExportInProcess(['--demo', '--out', csvOut, '--date', '2026-02-01'])
    const xlsx = await runExportInProcess(['--demo', '--out', xlsxOut, '--date', '2026-02-01', '--format', 'xlsx'])
    expect(csv.exitCode, csv.stderr).toBe(0)
    expect(xlsx.exitCode, xlsx.stderr).toBe(0)
    expect(xlsx.stderr).toMatch(/devices: done, 2,500 rows from worksheet "Devices" of the xlsx/)
    expect(xlsx.stdout).toMatch(/devices\s+ok\s+2,500\s.*\sxlsx\s/)
    for (const name of ['devices', 'installed_software', 'users', 'payroll_devices']) {
      const fromCsv = await landed(csvOut, name, '2026-02-01')
      expect(await landed(xlsxOut, name, '2026-02-01'), name).toEqual(fromCsv)
    }
  }, 120_000)

  it.each(['devices-xlsxwriter', 'times-openpyxl-1904'])('the committed workbook %s and its CSV twin', async (id) => {
    const csvOut = await tempDir('xlsx-twin-csv-')
    const xlsxOut = await tempDir('xlsx-twin-xlsx-')
    const csv = await exportTables(csvOut, '2026-02-02', [{ id, name: 'twin' }])
    const xlsx = await exportTables(xlsxOut, '2026-02-02', [{ id, name: 'twin', format: 'xlsx' }])
    expect(csv.tables[0]).toMatchObject({ status: 'succeeded', format: 'csv', delimiter: ',' })
    expect(xlsx.tables[0]).toMatchObject({ status: 'succeeded', format: 'xlsx', encoding: 'utf-8' })
    expect(xlsx.tables[0]!.columns).toEqual(csv.tables[0]!.columns)
    expect(await landed(xlsxOut, 'twin', '2026-02-02')).toEqual(await landed(csvOut, 'twin', '2026-02-02'))
  })

  it('counts error cells in the run record with a warning', async () => {
    const out = await tempDir('xlsx-errors-')
    const run = await exportTables(out, '2026-02-03', [{ id: 'devices-xlsxwriter', name: 'd', format: 'xlsx' }])
    expect(run.tables[0]).toMatchObject({
      sheet: 'Devices',
      warnings: ['1 error cell (#N/A) of worksheet "Devices" exported as NULL'],
    })
    expect(run.tables[0]!.columns?.find((c) => c.name === 'last_seen')?.type).toBe('timestamp')
    expect(run.tables[0]!.columns?.find((c) => c.name === 'purchased')?.type).toBe('date')
  })
})

describe('a workbook that cannot be read fails the table and the previous data stays', () => {
  const cases: readonly [string, string, () => Promise<void>][] = [
    [
      'cut short',
      'BODY_TRUNCATED',
      async () => emulator.faults.always('wb', { kind: 'truncate', afterBytes: 3000 } as Fault),
    ],
    ['an HTML page with status 200', 'NOT_XLSX', async () => emulator.faults.always('wb', { kind: 'html200' })],
    ['a server error', 'SERVER_ERROR', async () => emulator.faults.always('wb', { kind: 'status', status: 503 })],
    [
      'encrypted',
      'XLSX_ENCRYPTED',
      async () => setWorkbook(Buffer.concat([Buffer.from('d0cf11e0a1b11ae1', 'hex'), Buffer.alloc(8192)])),
    ],
    ['without a worksheet', 'XLSX_NO_WORKSHEET', async () => setWorkbook(await fixture('no-worksheet.xlsx'))],
    ['without a header row', 'XLSX_NO_HEADER', async () => setWorkbook(await fixture('no-header.xlsx'))],
    ['a zip bomb', 'XLSX_TOO_LARGE', async () => setWorkbook(await fixture('zip-bomb.xlsx'))],
  ]
  const setWorkbook = async (bytes: Buffer) =>
    emulator.setTable({ id: 'wb', title: 'wb', rawCsv: 'a\n1\n', rawXlsx: bytes })

  it.each(cases)('%s: %s', async (_what, code, arrange) => {
    await setWorkbook(await fixture('devices-xlsxwriter.xlsx'))
    const out = await tempDir('xlsx-fail-')
    const table = [{ id: 'wb', name: 'wb', format: 'xlsx' }]
    expect((await exportTables(out, '2026-02-04', table)).exitCode).toBe(0)
    const data = path.join(out, 'wb', 'dt=2026-02-04', 'data.parquet')
    const before = await sha256(data)
    await arrange()
    try {
      const run = await exportTables(out, '2026-02-04', table)
      expect(run.exitCode).toBe(1)
      expect(run.tables[0]).toMatchObject({ status: 'failed', format: 'xlsx', objects: [], error: { code } })
      expect(run.tables[0]!.error!.message).toMatch(/^table wb: /)
      expect(await sha256(data)).toBe(before)
    } finally {
      emulator.faults.clear()
    }
  })
})

describe('a table that switches format', () => {
  it('keeps its registry and types', async () => {
    const out = await tempDir('xlsx-switch-')
    const first = await exportTables(out, '2026-02-05', [{ id: '1001', name: 'devices' }])
    const registered = async () => {
      const schema = JSON.parse(await readFile(path.join(out, '_schemas', 'devices.json'), 'utf8'))
      return schema.columns.map(({ name, type, firstSeen }: Record<string, string>) => ({ name, type, firstSeen }))
    }
    const before = await registered()
    const second = await exportTables(out, '2026-02-06', [{ id: '1001', name: 'devices', format: 'xlsx' }])
    expect(second.tables[0]).toMatchObject({ status: 'succeeded', format: 'xlsx' })
    expect(second.tables[0]!.columns).toEqual(first.tables[0]!.columns)
    expect(await registered()).toEqual(before)
  })
})

describe('archiveRaw and reprocess for a workbook', () => {
  it('keeps the workbook as received and rebuilds the date from it', async () => {
    const out = await tempDir('xlsx-archive-')
    const table = { id: 'devices-xlsxwriter', name: 'archived', format: 'xlsx', archiveRaw: true }
    const run = await exportTables(out, '2026-02-07', [table])
    expect(run.exitCode, run.stderr).toBe(0)
    const archive = path.join(out, '_raw', 'archived', 'dt=2026-02-07', 'body.xlsx.gz')
    expect(gunzipSync(await readFile(archive))).toEqual(await fixture('devices-xlsxwriter.xlsx'))
    const before = await landed(out, 'archived', '2026-02-07')
    const config = path.join(out, '..', `${path.basename(out)}-reprocess.json`)
    await writeFile(config, JSON.stringify({ source: { baseUrl: emulator.baseUrl }, tables: [table] }))
    const reprocess = await runCommandInProcess('reprocess', ['--config', config, '--out', out, '--date', '2026-02-07'])
    expect(reprocess.exitCode, reprocess.stderr).toBe(0)
    expect(await landed(out, 'archived', '2026-02-07')).toEqual(before)
  })
})

describe('the --format flag', () => {
  it('makes check read the workbooks and say so', async () => {
    const result = await runCommandInProcess('check', ['--format', 'xlsx'])
    expect(result.exitCode, result.stdout).toBe(0)
    expect(result.stdout).toMatch(
      /table 1001 -> devices: OK, 20 data columns, and 5 lineage columns the export adds \(types judged from the first \d+ rows of its xlsx\)/,
    )
    expect(result.stdout).toMatch(/ram_gb\s+bigint/)
    expect(result.stdout).toMatch(/purchase_date\s+date/)
  })

  it.each([
    [
      ['--base-url', 'http://127.0.0.1:9', '--format', 'ods', '--table', '1001'],
      /--format must be one of csv, xlsx, got "ods"/,
    ],
    [['--format', 'xlsx', '--config', 'config.json'], /--format applies to --table flags/],
  ])('refuses %j', async (argv, message) => {
    const result = await runExportInProcess(argv)
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toMatch(message)
  })
})
