/**
 * Crafted workbooks through the real export against the stand-in: each names a number, an offset or a size the
 * reader must not trust. Every case fails the table with its code and leaves the previous data byte for byte, or
 * (where the workbook is valid) publishes exactly what the cells hold and nothing else.
 */
import { createHash } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'
import { craftedWorkbook, type WorkbookXml } from '../support/crafted-workbook.ts'
import { readParquetTable } from '../support/fixtures.ts'

const DATE = '2026-05-01'
let emulator: RunningEmulator
let token: string
beforeAll(async () => {
  emulator = await startInventoryEmulator()
  token = await tokenFile(DEMO_TOKEN)
})
afterAll(() => emulator.close())

const GOOD: WorkbookXml = {
  sharedStrings: ['name', 'alpha', 'beta'],
  sheetData: '<row r="1"><c r="A1" t="s"><v>0</v></c></row><row r="2"><c r="A2" t="s"><v>1</v></c></row>',
}

/** Exports table `wb` from `workbook` into `out`; the run's exit status and output. */
const exportWorkbook = async (out: string, workbook: Buffer) => {
  emulator.setTable({ id: 'wb', title: 'wb', rawCsv: 'name\nalpha\n', rawXlsx: workbook })
  const config = path.join(out, '..', `${path.basename(out)}-${Math.random()}.json`)
  await writeFile(
    config,
    JSON.stringify({ source: { baseUrl: emulator.baseUrl }, tables: [{ id: 'wb', name: 'wb', format: 'xlsx' }] }),
  )
  return runExportInProcess(['--config', config, '--token-file', token, '--out', out, '--date', DATE])
}

const sha256 = async (file: string) =>
  createHash('sha256')
    .update(await readFile(file))
    .digest('hex')

/** Exports GOOD, then `workbook`: the second run must fail with `code` and keep GOOD's data. */
const expectRefused = async (workbook: Buffer, code: string) => {
  const out = await tempDir('hostile-wb-')
  const first = await exportWorkbook(out, await craftedWorkbook(GOOD))
  expect(first.exitCode, first.stderr).toBe(0)
  const data = path.join(out, 'wb', `dt=${DATE}`, 'data.parquet')
  const before = await sha256(data)
  const run = await exportWorkbook(out, workbook)
  expect(run.exitCode, run.stdout).toBe(1)
  expect(run.stdout).toMatch(new RegExp(`wb\\s+FAILED ${code}`))
  expect(await sha256(data)).toBe(before)
  return run
}

describe('a shared-string index the workbook does not have', () => {
  it.each([
    ['a fraction', '1.5'],
    ['a negative number', '-1'],
    ['past the last string', '3'],
    ['an exponent', '1e0'],
    ['hexadecimal', '0x1'],
    ['with spaces', ' 1 '],
  ])(
    '%s (%j) fails as XLSX_MALFORMED naming the cell, and publishes no byte it did not write',
    async (_what, index) => {
      const crafted = await craftedWorkbook({
        sharedStrings: ['name', 'alpha', 'beta'],
        sheetData: `<row r="1"><c r="A1" t="s"><v>0</v></c></row><row r="2"><c r="A2" t="s"><v>${index}</v></c></row>`,
      })
      const run = await expectRefused(crafted, 'XLSX_MALFORMED')
      expect(run.stderr).toMatch(/A2/)
    },
  )

  it('a valid index publishes exactly the string it names', async () => {
    const out = await tempDir('hostile-wb-ok-')
    const run = await exportWorkbook(out, await craftedWorkbook(GOOD))
    expect(run.exitCode, run.stderr).toBe(0)
    const table = await readParquetTable(path.join(out, 'wb', `dt=${DATE}`, 'data.parquet'))
    expect(table.rows.map((row) => row.name)).toEqual(['alpha'])
  })
})

describe('an empty cell is NULL whatever its type', () => {
  it.each([
    ['a shared string without <v>', '<c r="B2" t="s"/>'],
    ['a shared string with an empty <v>', '<c r="B2" t="s"><v></v></c>'],
    ['an inline string without <is>', '<c r="B2" t="inlineStr"/>'],
    ['a formula string without <v>', '<c r="B2" t="str"><f>A2</f></c>'],
    ['a boolean without <v>', '<c r="B2" t="b"/>'],
    ['a number without <v>', '<c r="B2"/>'],
  ])('%s', async (_what, cell) => {
    const out = await tempDir('hostile-wb-empty-')
    const workbook = await craftedWorkbook({
      sharedStrings: ['name', 'note', 'alpha', 'beta'],
      sheetData:
        '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>' +
        `<row r="2"><c r="A2" t="s"><v>2</v></c>${cell}</row>` +
        '<row r="3"><c r="A3" t="s"><v>3</v></c><c r="B3" t="s"><v>2</v></c></row>',
    })
    const run = await exportWorkbook(out, workbook)
    expect(run.exitCode, run.stderr).toBe(0)
    const table = await readParquetTable(path.join(out, 'wb', `dt=${DATE}`, 'data.parquet'))
    expect(table.rows.map((row) => [row.name, row.note])).toEqual([
      ['alpha', null],
      ['beta', 'alpha'],
    ])
  })
})
