/**
 * Cells as writers write nearly all of them, `<c r="C7" s="3" t="s"><v>12</v></c>`, which sheet.ts reads straight
 * from the bytes (xlsx/cell-form.ts) rather than tag by tag: against the saxes-based reader
 * (test/support/saxes-sheet.ts), split into chunks at any byte, the same header, rows and error cells, or the
 * same code, including the cells of that form the scanner must refuse (a column past XFD, row 0, a style the
 * workbook does not have) and values it must decode (entities, character references, CDATA, a CR).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { RecordLimits } from '../../../functions/export/csv/record-guard.ts'
import { builtInFormat, customFormat, GENERAL_FORMAT } from '../../../functions/export/xlsx/number-format.ts'
import { openSheetRows } from '../../../functions/export/xlsx/sheet.ts'
import { SharedStringTable } from '../../../functions/export/xlsx/string-table.ts'
import { DEFAULT_LIMITS } from '../../support/limits.ts'
import { openSheetRowsWithSaxes } from '../../support/saxes-sheet.ts'
import { readSheetOutcome, type SheetReader, splitAtFractions } from '../../support/sheet-outcome.ts'

const SHARED = ['host-1', 'Zürich', '', 'a&b', '😀 wide', '_x000D_ escaped']
const FORMATS = [GENERAL_FORMAT, builtInFormat(2), builtInFormat(14), builtInFormat(22), customFormat('0.000')]
const TIGHT: RecordLimits = { maxColumns: 6, maxRecordBytes: 120, maxFieldBytes: 40 }
const LETTERS = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H']

const read = (reader: SheetReader, pieces: Buffer[], limits: RecordLimits, date1904: boolean) => {
  const sharedStrings = new SharedStringTable()
  for (const text of SHARED) sharedStrings.add(text)
  sharedStrings.finish()
  const parts = { sheetName: 'S', sheetPath: 'xl/worksheets/sheet1.xml', date1904, formats: FORMATS, sharedStrings }
  return readSheetOutcome(reader, pieces, parts, limits)
}

const character = fc.constantFrom(...'aZ09 \t\n.-+e_', '\r', '<', '>', '&', 'é', '€', '😀', '_x000D_')
const text = fc.array(character, { maxLength: 12 }).map((chars) => chars.join(''))
const value = fc.oneof(
  fc.record({ t: fc.constant('s'), v: fc.oneof(fc.nat({ max: SHARED.length + 1 }).map(String), fc.constant('x')) }),
  fc.record({
    t: fc.constantFrom(undefined, 'n', 'q'),
    v: fc.oneof(fc.integer().map(String), fc.double().map(String)),
  }),
  fc.record({ t: fc.constantFrom('str', 'd', 'e', 'inlineStr'), v: text }),
  fc.record({ t: fc.constant('b'), v: fc.constantFrom('0', '1', 'true', '') }),
)
/** XML for `v`: its `&` and `<` as entities, else written in one of the forms the scanner must decode. */
const valueXml = (v: string) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant(v.replace(/&/g, '&amp;').replace(/</g, '&lt;')) },
    fc.constant(`<![CDATA[${v.replace(/]]>/g, '')}]]>`),
    fc.constant([...v].map((c) => `&#${c.codePointAt(0)};`).join('')),
  )

const cell = (column: number, row: number) =>
  fc
    .record({ value, odd: fc.nat({ max: 29 }), style: fc.constantFrom(undefined, '0', '1', '2', '3', '4') })
    .chain(({ value, odd, style }) => {
      const reference = `${odd === 0 ? 'XFE' : LETTERS[column]}${odd === 1 ? 0 : row}`
      const attributes = [
        ['r', reference],
        ['s', odd === 2 ? '9' : style],
        ['t', value.t],
      ].filter(([, v]) => v !== undefined)
      return valueXml(value.v).map(
        (xml) => `<c${attributes.map(([n, v]) => ` ${n}="${v}"`).join('')}><v>${xml}</v></c>`,
      )
    })

const worksheet = fc
  .array(fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 8 })
  .chain((rows) =>
    fc.tuple(
      ...rows.map((present, i) =>
        fc
          .tuple(...present.flatMap((on, column) => (on ? [cell(column, i + 1)] : [])))
          .map((cells) => `<row r="${i + 1}">${cells.join('')}</row>`),
      ),
    ),
  )
  .map(
    (rows) =>
      `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="urn:x"><sheetData>${rows.join('')}</sheetData></worksheet>`,
  )

describe('cells in the form writers write', () => {
  it('read as the saxes reader read them, or fail with the same code, split into chunks anywhere', async () => {
    await fc.assert(
      fc.asyncProperty(
        worksheet,
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }),
        fc.boolean(),
        fc.boolean(),
        async (xml, cuts, tight, date1904) => {
          const pieces = splitAtFractions(Buffer.from(xml, 'utf8'), cuts)
          const limits = tight ? TIGHT : DEFAULT_LIMITS
          const scanned = await read(openSheetRows, pieces, limits, date1904)
          expect(scanned, xml).toEqual(await read(openSheetRowsWithSaxes, pieces, limits, date1904))
        },
      ),
      { numRuns: 400 },
    )
  })
})
