/**
 * Crafted workbooks through the real export against the stand-in: each names a number, an offset or a size the
 * reader must not trust. Every case fails the table with its code and leaves the previous data byte for byte, or
 * (where the workbook is valid) publishes exactly what the cells hold and nothing else.
 */
import { createHash } from 'node:crypto'
import { readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'
import { craftedWorkbook, fillerText, type WorkbookXml, writeCraftedWorkbook } from '../support/crafted-workbook.ts'
import { readParquetTable } from '../support/fixtures.ts'

const DATE = '2026-05-01'
let emulator: RunningEmulator
let token: string
beforeAll(async () => {
  emulator = await startInventoryEmulator()
  token = await tokenFile(DEMO_TOKEN)
})
/** Every folder and configuration file a case makes, removed when the file's cases are done. */
const made: string[] = []
const scratch = async (prefix: string): Promise<string> => {
  const folder = await tempDir(prefix)
  made.push(folder)
  return folder
}
afterAll(async () => {
  await emulator.close()
  await Promise.all([...made, path.dirname(token)].map((entry) => rm(entry, { recursive: true, force: true })))
})

const GOOD: WorkbookXml = {
  sharedStrings: ['name', 'alpha', 'beta'],
  sheetData: '<row r="1"><c r="A1" t="s"><v>0</v></c></row><row r="2"><c r="A2" t="s"><v>1</v></c></row>',
}

type Served = Buffer | { readonly file: string }

/**
 * Exports table `wb` from `workbook` into `out`, `settings` added to the configuration and `table` to the table's;
 * exit status and output.
 */
const exportWorkbook = async (out: string, workbook: Served, settings: object = {}, table: object = {}) => {
  emulator.setTable({ id: 'wb', title: 'wb', rawCsv: 'name\nalpha\n', rawXlsx: workbook })
  const config = path.join(out, '..', `${path.basename(out)}-${Math.random()}.json`)
  made.push(config)
  await writeFile(
    config,
    JSON.stringify({
      source: { baseUrl: emulator.baseUrl },
      tables: [{ id: 'wb', name: 'wb', format: 'xlsx', ...table }],
      ...settings,
    }),
  )
  return runExportInProcess(['--config', config, '--token-file', token, '--out', out, '--date', DATE])
}

const sha256 = async (file: string) =>
  createHash('sha256')
    .update(await readFile(file))
    .digest('hex')

/** Exports GOOD, then `workbook`: the second run must fail with `code` and keep GOOD's data. */
const expectRefused = async (workbook: Served, code: string, settings: object = {}, table: object = {}) => {
  const out = await scratch('hostile-wb-')
  const first = await exportWorkbook(out, await craftedWorkbook(GOOD))
  expect(first.exitCode, first.stderr).toBe(0)
  const data = path.join(out, 'wb', `dt=${DATE}`, 'data.parquet')
  const before = await sha256(data)
  const run = await exportWorkbook(out, workbook, settings, table)
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
    const out = await scratch('hostile-wb-ok-')
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
    const out = await scratch('hostile-wb-empty-')
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

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main'
/** A styles part with `xfs` and `numFmts` inside; the default is two styles: General and a custom date. */
const styles = (
  xfs = '<xf numFmtId="0"/><xf numFmtId="164"/>',
  numFmts = '<numFmt numFmtId="164" formatCode="yyyy-mm-dd"/>',
): string =>
  `<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="${MAIN}"><numFmts>${numFmts}</numFmts><cellXfs>${xfs}</cellXfs></styleSheet>`
/** A header `n` and one row whose cell B2 is `cell`, named by `row` (the row's attributes). */
const sheetWith = (cell: string, row = 'r="2"') =>
  `<row r="1"><c r="A1" t="inlineStr"><is><t>n</t></is></c></row><row ${row}><c r="A2"><v>1</v></c>${cell}</row>`

describe('a number in the worksheet or its styles that the sheet cannot have', () => {
  it.each([
    ['a fractional style', '<c r="B2" s="1.5"><v>1</v></c>', /B2 with style "1\.5"/],
    ['a negative style', '<c r="B2" s="-1"><v>1</v></c>', /B2 with style "-1"/],
    [
      'a style past the last',
      '<c r="B2" s="2"><v>1</v></c>',
      /B2 with style "2", which the workbook does not have \(it has 2\)/,
    ],
    ['a column past XFD', '<c r="XFE2"><v>1</v></c>', /reference "XFE2"/],
    ['a row past 1,048,576 in a reference', '<c r="B1048577"><v>1</v></c>', /reference "B1048577"/],
    ['a reference without a row', '<c r="B"><v>1</v></c>', /reference "B"/],
    ['a fractional reference', '<c r="B2.5"><v>1</v></c>', /reference "B2\.5"/],
  ])('%s fails as XLSX_MALFORMED naming the cell', async (_what, cell, message) => {
    const workbook = await craftedWorkbook({ sheetData: sheetWith(cell), styles: styles() })
    const run = await expectRefused(workbook, 'XLSX_MALFORMED')
    expect(run.stderr).toMatch(message)
  })

  it.each([
    ['numbered 0', 'r="0"', '"0"'],
    ['numbered past 1,048,576', 'r="1048577"', '"1048577"'],
    ['with a fractional number', 'r="2.5"', '"2.5"'],
    ['with a negative number', 'r="-2"', '"-2"'],
  ])('a row %s fails as XLSX_MALFORMED naming it', async (_what, row, quoted) => {
    const run = await expectRefused(await craftedWorkbook({ sheetData: sheetWith('', row) }), 'XLSX_MALFORMED')
    expect(run.stderr).toContain(`a row numbered ${quoted}`)
  })

  it.each([
    ['a fractional numFmtId on a style', styles('<xf numFmtId="0"/><xf numFmtId="14.5"/>'), /numFmtId "14\.5"/],
    ['a numFmtId that is no number', styles(undefined, '<numFmt numFmtId="x" formatCode="0"/>'), /numFmtId "x"/],
    ['a custom numFmtId no <numFmt> defines', styles('<xf numFmtId="0"/><xf numFmtId="200"/>'), /format 200/],
    [
      'a format code past 1,024 characters',
      styles(undefined, `<numFmt numFmtId="164" formatCode="${'['.repeat(100_000)}"/>`),
      /code of 100000 characters/,
    ],
  ])('%s fails as XLSX_MALFORMED', async (_what, part, message) => {
    const workbook = await craftedWorkbook({ sheetData: sheetWith('<c r="B2" s="1"><v>1</v></c>'), styles: part })
    const run = await expectRefused(workbook, 'XLSX_MALFORMED')
    expect(run.stderr).toMatch(message)
  })

  it('a valid style and custom date format still publish the date', async () => {
    const out = await scratch('hostile-wb-style-')
    const workbook = await craftedWorkbook({
      sheetData:
        '<row r="1"><c r="A1" t="inlineStr"><is><t>day</t></is></c></row><row r="2"><c r="A2" s="1"><v>46143</v></c></row>',
      styles: styles(),
    })
    const run = await exportWorkbook(out, workbook)
    expect(run.exitCode, run.stderr).toBe(0)
    const table = await readParquetTable(path.join(out, 'wb', `dt=${DATE}`, 'data.parquet'))
    expect(table.rows.map((row) => String(row.day))).toEqual(['2026-05-01'])
  })
})

describe('a date cell (t="d") with text that is no date', () => {
  it('keeps its characters past U+00FF rather than cutting them to a byte', async () => {
    const out = await scratch('hostile-wb-d-')
    const workbook = await craftedWorkbook({
      sheetData: sheetWith('', 'r="2"').replace('<c r="A2"><v>1</v></c>', '<c r="A2" t="d"><v>2026-05-01 €</v></c>'),
    })
    const run = await exportWorkbook(out, workbook)
    expect(run.exitCode, run.stderr).toBe(0)
    const table = await readParquetTable(path.join(out, 'wb', `dt=${DATE}`, 'data.parquet'))
    expect(table.rows.map((row) => row.n)).toEqual(['2026-05-01 €'])
  })
})

describe('the styles part is bounded as it streams', () => {
  /** `count` elements made by `element(i)`, streamed in pieces. */
  function* repeated(count: number, element: (i: number) => string): Generator<string> {
    for (let at = 0; at < count; at += 10_000) {
      let piece = ''
      for (let i = at; i < Math.min(count, at + 10_000); i++) piece += element(i)
      yield piece
    }
  }
  const cases: [string, () => Iterable<string>, () => Iterable<string>, RegExp][] = [
    [
      'over 256,000 cell styles',
      () => repeated(300_000, (i) => `<xf numFmtId="${i % 50}" fontId="${i}" fillId="${(i * 7919) % 1000}"/>`),
      () => [],
      /more than 256,000 cell styles/,
    ],
    [
      'over 4,096 number formats',
      () => ['<xf numFmtId="0"/>'],
      () => repeated(5_000, (i) => `<numFmt numFmtId="${164 + i}" formatCode="0.${'0'.repeat(i % 20)}"/>`),
      /more than 4,096 number formats/,
    ],
  ]
  it.each(cases)('%s fail as XLSX_TOO_LARGE', async (_what, xfs, numFmts, message) => {
    async function* part(): AsyncGenerator<string> {
      yield `<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="${MAIN}"><numFmts>`
      yield* numFmts()
      yield '</numFmts><cellXfs>'
      yield* xfs()
      yield '</cellXfs></styleSheet>'
    }
    const run = await expectRefused(
      await craftedWorkbook({ sheetData: sheetWith(''), styles: part() }),
      'XLSX_TOO_LARGE',
    )
    expect(run.stderr).toMatch(message)
  })
})

describe('nesting and long XML are refused as they stream', () => {
  // 100,000 keeps the part under the size past which the zip-bomb ratio applies, so this is the limit met.
  it('100,000 elements nested in one cell fail as XLSX_MALFORMED at depth 64', async () => {
    const depth = 100_000
    const cell = `<c r="B2" t="inlineStr"><is>${'<r>'.repeat(depth)}${'</r>'.repeat(depth)}</is></c>`
    const run = await expectRefused(await craftedWorkbook({ sheetData: sheetWith(cell) }), 'XLSX_MALFORMED')
    expect(run.stderr).toContain('nests elements more than 64 deep')
  })

  it.each([
    ['an inline string', (text: Iterable<string>) => ['<c r="B2" t="inlineStr"><is><t>', ...text, '</t></is></c>']],
    ['a value', (text: Iterable<string>) => ['<c r="B2" t="str"><v>', ...text, '</v></c>']],
    ['an attribute', (text: Iterable<string>) => ['<c r="B2" x="', ...text, '"><v>1</v></c>']],
    [
      'runs of rich text, each under the limit',
      (text: Iterable<string>) => [
        '<c r="B2" t="inlineStr"><is>',
        ...[...text].map((t) => `<r><t>${t}</t></r>`),
        '</is></c>',
      ],
    ],
  ])('a cell with 5 MiB in %s fails as LIMIT_EXCEEDED at limits.maxFieldBytes of 1 MiB', async (_what, cell) => {
    const sheetData = [
      '<row r="1"><c r="A1" t="inlineStr"><is><t>n</t></is></c></row><row r="2">',
      ...cell(fillerText(5 * 2 ** 20)),
      '</row>',
    ]
    const limits = { limits: { maxFieldBytes: 2 ** 20 } }
    const run = await expectRefused(await craftedWorkbook({ sheetData }), 'LIMIT_EXCEEDED', limits)
    expect(run.stderr).toContain('limits.maxFieldBytes')
    expect(run.stderr).toMatch(/cell B2|row 2/)
  })

  it('a shared string of 5 MiB fails as LIMIT_EXCEEDED at limits.maxFieldBytes of 1 MiB', async () => {
    const workbook = await craftedWorkbook({
      sheetData: sheetWith(''),
      sharedStrings: ['n', [...fillerText(5 * 2 ** 20)].join('')],
    })
    const run = await expectRefused(workbook, 'LIMIT_EXCEEDED', { limits: { maxFieldBytes: 2 ** 20 } })
    expect(run.stderr).toMatch(/shared string 2/)
  })
})

describe('the per-table deadline covers reading the workbook', () => {
  /**
   * Rows enough that reading them outlasts the 1 s deadline with room to spare: a 2-core machine at rest reads a
   * million such rows in under a second, so a million alone made the test depend on the machine being busy.
   */
  const ROWS = 4_000_000
  it('a 4,000,000-row workbook past export.timeouts.tableSeconds fails as DEADLINE_EXCEEDED after its download', async () => {
    const folder = await scratch('hostile-wb-deadline-')
    const file = path.join(folder, 'rows.xlsx')
    function* rows(): Generator<string> {
      yield '<row r="1"><c r="A1" t="inlineStr"><is><t>name</t></is></c></row>'
      for (let at = 2; at <= ROWS + 1; at += 10_000) {
        let piece = ''
        for (let r = at; r < at + 10_000; r++) piece += `<row r="${r}"><c r="A${r}"><v>${r * 7}</v></c></row>`
        yield piece
      }
    }
    await writeCraftedWorkbook(file, { sheetData: rows() })
    const run = await expectRefused({ file }, 'DEADLINE_EXCEEDED', { export: { timeouts: { tableSeconds: 1 } } })
    expect(run.stderr).toContain('export.timeouts.tableSeconds (1 s)')
  }, 120_000)
})

describe('which cells and which sheet make the table', () => {
  it('two cells at one reference in a row fail as XLSX_MALFORMED naming it, and keep the previous data', async () => {
    const crafted = await craftedWorkbook({
      sharedStrings: ['name', 'alpha', 'beta'],
      sheetData:
        '<row r="1"><c r="A1" t="s"><v>0</v></c></row><row r="2"><c r="A2" t="s"><v>1</v></c><c r="A2" t="s"><v>2</v></c></row>',
    })
    const run = await expectRefused(crafted, 'XLSX_MALFORMED')
    expect(run.stderr).toContain('row 2 of worksheet "Sheet1" (xl/worksheets/sheet1.xml) has two cells at A2')
  })

  const LOOKUP = {
    name: 'Lookup',
    state: 'hidden',
    sheetData: '<row r="1"><c r="A1" t="s"><v>2</v></c></row>',
  } as const
  const sheets = (state: 'hidden' | 'veryHidden') => ({
    sharedStrings: ['name', 'alpha', 'code', 'x1'],
    sheets: [
      { ...LOOKUP, state },
      { name: 'Devices', sheetData: GOOD.sheetData! },
    ],
  })

  it.each(['hidden', 'veryHidden'] as const)(
    'a %s first sheet is passed over for the first visible one',
    async (state) => {
      const out = await scratch('hostile-wb-hidden-')
      const run = await exportWorkbook(out, await craftedWorkbook(sheets(state)))
      expect(run.exitCode, run.stderr).toBe(0)
      expect(run.stderr).toContain('from worksheet "Devices" of the xlsx')
      const table = await readParquetTable(path.join(out, 'wb', `dt=${DATE}`, 'data.parquet'))
      expect(table.rows.map((row) => row.name)).toEqual(['alpha'])
    },
  )

  it('tables[].sheet reads the worksheet it names, hidden or not', async () => {
    const out = await scratch('hostile-wb-named-')
    const run = await exportWorkbook(out, await craftedWorkbook(sheets('hidden')), {}, { sheet: 'Lookup' })
    expect(run.exitCode, run.stderr).toBe(0)
    expect(run.stderr).toContain('from worksheet "Lookup" of the xlsx')
    const table = await readParquetTable(path.join(out, 'wb', `dt=${DATE}`, 'data.parquet'))
    expect(table.columns.map((column) => column.name)).toContain('code')
  })

  it('a tables[].sheet the workbook lacks fails as XLSX_NO_WORKSHEET naming its worksheets, escaped', async () => {
    const workbook = await craftedWorkbook({
      ...sheets('hidden'),
      sheets: [{ ...LOOKUP, name: 'Look\u202eup' }, sheets('hidden').sheets[1]!],
    })
    const run = await expectRefused(workbook, 'XLSX_NO_WORKSHEET', {}, { sheet: 'Device' })
    expect(run.stderr).toContain(
      'the workbook has no worksheet named "Device" (worksheets: "Look\\u202eup" (hidden), "Devices")',
    )
    expect(run.stderr).not.toContain('\u202e')
    expect(run.stderr).toMatch(/next step: set tables\[\]\.sheet to one of the worksheets named above/)
  })
})
