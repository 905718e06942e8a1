/**
 * Every number a worksheet names (a cell's style, a row's number, a cell's reference) is read as digits in range
 * or refused as XLSX_MALFORMED: for any attribute values, the reader either reads the row or refuses it with that
 * code, never another failure, and never reads a value that breaks the rule.
 */
import os from 'node:os'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { openWorkbookTable } from '../../../functions/export/xlsx/reader.ts'
import { MAX_SHEET_COLUMNS, MAX_SHEET_ROWS } from '../../../functions/export/xlsx/sheet.ts'
import { craftedWorkbook } from '../../support/crafted-workbook.ts'
import { DEFAULT_LIMITS } from '../../support/limits.ts'

const STYLES =
  '<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">' +
  '<cellXfs><xf numFmtId="0"/><xf numFmtId="14"/></cellXfs></styleSheet>'

const escapeXml = (text: string) =>
  text.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!)

const inRange = (text: string, max: number, min = 0) => /^[0-9]+$/.test(text) && +text >= min && +text <= max
const columnOf = (letters: string) => [...letters.toUpperCase()].reduce((n, c) => n * 26 + c.charCodeAt(0) - 64, 0)
const validReference = (reference: string) => {
  const match = /^([A-Za-z]{1,3})([0-9]{1,7})$/.exec(reference)
  return match !== null && columnOf(match[1]!) <= MAX_SHEET_COLUMNS && inRange(match[2]!, MAX_SHEET_ROWS, 1)
}

/** Reads a workbook whose row 2 has number `row` and one cell `reference` with style `style`. */
const read = async (style: string, row: string, reference: string) => {
  const workbook = await craftedWorkbook({
    styles: STYLES,
    sheetData:
      '<row r="1"><c r="A1" t="inlineStr"><is><t>n</t></is></c></row>' +
      `<row r="${escapeXml(row)}"><c r="${escapeXml(reference)}" s="${escapeXml(style)}"><v>7</v></c></row>`,
  })
  async function* body() {
    yield workbook
  }
  try {
    const table = await openWorkbookTable(body(), {
      tableId: 'wb',
      spoolDirectory: os.tmpdir(),
      limits: DEFAULT_LIMITS,
    })
    try {
      for await (const _ of table.batches);
    } finally {
      await table.close()
    }
    return 'read'
  } catch (error) {
    return (error as { code?: string }).code ?? String(error)
  }
}

const number = fc.oneof(
  fc.nat({ max: 3 }).map(String),
  fc.integer({ min: -3, max: 3 }).map(String),
  fc.double().map(String),
  fc.string({ maxLength: 8 }),
  fc.constantFrom('1048576', '1048577', '0', '00', '1.0', '1e0', ' 1', '0x1', '99999999999999999999'),
)
const reference = fc.oneof(
  fc.tuple(fc.stringMatching(/^[A-Za-z]{0,4}$/), number).map(([letters, digits]) => letters + digits),
  fc.constantFrom('A2', 'XFD2', 'XFE2', 'A1048576', 'A1048577', 'a2'),
)

describe('numbers a worksheet names', () => {
  it('are read when they are digits in range, and refused as XLSX_MALFORMED otherwise', async () => {
    await fc.assert(
      fc.asyncProperty(number, number, reference, async (style, row, cell) => {
        const outcome = await read(style, row, cell)
        const valid = inRange(style, 1) && inRange(row, MAX_SHEET_ROWS, 1) && validReference(cell)
        if (valid) {
          // A value outside the header's one column is a row too wide (or past limits.maxColumns): data errors.
          if (columnOf(cell.replace(/[0-9]+$/, '')) === 1) expect(outcome).toBe('read')
          else expect(['ROW_FIELD_COUNT', 'LIMIT_EXCEEDED']).toContain(outcome)
        } else expect(outcome).toBe('XLSX_MALFORMED')
      }),
      { numRuns: 150 },
    )
  }, 120_000)
})
