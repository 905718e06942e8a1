/**
 * Cells reach the record batch as bytes (cell-text.ts writeCell into row-bytes.ts, then RecordBatchBuilder.addRow):
 * for any cell, the bytes written are the byte string the string rules made (test/support/cell-text-reference.ts),
 * and the batch holds what add() made of the same rows as strings.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { RecordBatchBuilder } from '../../../functions/export/normalize/record-batch.ts'
import { CellBuffer } from '../../../functions/export/xlsx/cell-bytes.ts'
import { type CellContext, type CellType, writeCell } from '../../../functions/export/xlsx/cell-text.ts'
import { GENERAL_FORMAT, type NumberFormat, NumberKind } from '../../../functions/export/xlsx/number-format.ts'
import { RowBytes } from '../../../functions/export/xlsx/row-bytes.ts'
import { SharedStringTable } from '../../../functions/export/xlsx/string-table.ts'
import { cellText } from '../../support/cell-text-reference.ts'

const folder = mkdtempSync(path.join(os.tmpdir(), 'cell-bytes-'))
afterAll(() => rmSync(folder, { recursive: true, force: true }))

const FORMATS: NumberFormat[] = [
  GENERAL_FORMAT,
  { kind: NumberKind.FIXED, decimals: 2 },
  { kind: NumberKind.DATE, decimals: 0 },
  { kind: NumberKind.DATE_TIME, decimals: 0 },
  { kind: NumberKind.TIME, decimals: 0 },
]

/** Pieces a cell's bytes are made of: numbers of every shape, escapes, non-ASCII and invalid UTF-8. */
const piece = fc.oneof(
  fc.constantFrom('0', '1', '-', '.', 'e', 'E', '+', '45863', '9735.52', '1e308', 'Infinity', 'NaN', 'true', ' '),
  fc.constantFrom('_x0041_', '_x000D_', '_x', '_xD83D_', '_x005F_x0041_', 'é', '€', '😀', 'abc', '&'),
  fc.integer({ min: -1e16, max: 1e16 }).map(String),
  fc.double({ noNaN: true }).map(String),
  fc.uint8Array({ minLength: 1, maxLength: 3 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
)
const cellBytes = fc
  .array(piece, { maxLength: 5 })
  .map((pieces) => Buffer.concat(pieces.map((p) => (isByteString(p) ? Buffer.from(p, 'latin1') : Buffer.from(p)))))
const isByteString = (text: string): boolean => /^[\u0080-\u00ff]+$/.test(text)

const cellOf = (bytes: Buffer): CellBuffer => {
  const cell = new CellBuffer()
  cell.append(bytes, 0, bytes.length)
  return cell
}

const tableOf = (strings: readonly Buffer[], spilled: boolean, name: string): SharedStringTable => {
  const table = new SharedStringTable(spilled ? { memoryBytes: 8, spillPath: path.join(folder, name) } : {})
  for (const bytes of strings) table.addBytes(bytes, 0, bytes.length)
  table.finish()
  return table
}

const contextOf = (sharedStrings: SharedStringTable, date1904: boolean): CellContext => ({
  tableId: 't',
  part: 'worksheet "s"',
  formats: FORMATS,
  parts: { sheetName: 's', sheetPath: 'xl/worksheets/sheet1.xml', date1904, formats: FORMATS, sharedStrings },
  errorCells: { count: 0, values: new Set<string>() },
  cellName: () => 'A2',
})

const outcome = (run: () => void): { error: string } | undefined => {
  try {
    run()
    return undefined
  } catch (error) {
    return { error: `${(error as { code?: string }).code}: ${(error as Error).message}` }
  }
}

let tables = 0

describe('a cell written to the row as bytes', () => {
  it('is the byte string the string rules made, for any type, format and bytes, shared strings in memory or spilled', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 7 }), fc.integer({ min: 0, max: 4 }), cellBytes, cellBytes), {
          minLength: 1,
          maxLength: 8,
        }),
        fc.array(cellBytes, { maxLength: 6 }),
        fc.boolean(),
        fc.boolean(),
        (cells, strings, spilled, date1904) => {
          const table = tableOf(strings, spilled, `table-${tables++}`)
          try {
            const expected = contextOf(table, date1904)
            const actual = contextOf(table, date1904)
            const row = new RowBytes()
            for (const [type, style, valueBytes, inlineBytes] of cells) {
              const value = cellOf(valueBytes)
              const inline = cellOf(inlineBytes)
              let text = ''
              const expectedOutcome = outcome(() => {
                text = cellText(type as CellType, style, value, inline, expected)
              })
              const start = row.length
              const actualOutcome = outcome(() => writeCell(type as CellType, style, value, inline, actual, row))
              expect(actualOutcome).toEqual(expectedOutcome)
              if (expectedOutcome) continue
              expect(row.bytes.subarray(start, row.length).toString('latin1')).toBe(text)
            }
            expect(actual.errorCells).toEqual(expected.errorCells)
          } finally {
            table.close()
          }
        },
      ),
      { numRuns: 400 },
    )
  })

  it('is the text the number rules wrote for decimals of any shape, in General or with fixed decimals', () => {
    const digits = (max: number) =>
      fc.array(fc.constantFrom(...'0000123456789'), { maxLength: max }).map((d) => d.join(''))
    const decimal = fc
      .tuple(fc.constantFrom('', '-'), digits(17), fc.constantFrom('.', '.', ''), digits(17))
      .map(([sign, whole, point, fraction]) => `${sign}${whole}${point}${fraction}`)
    fc.assert(
      fc.property(decimal, fc.integer({ min: 0, max: 6 }), fc.boolean(), (text, decimals, fixed) => {
        const format: NumberFormat = fixed ? { kind: NumberKind.FIXED, decimals } : GENERAL_FORMAT
        const context = { ...contextOf(new SharedStringTable(), false), formats: [format] }
        const value = cellOf(Buffer.from(text))
        const row = new RowBytes()
        writeCell(0, 0, value, new CellBuffer(), context, row)
        expect(row.bytes.subarray(0, row.length).toString('latin1')).toBe(
          cellText(0, 0, value, new CellBuffer(), context),
        )
      }),
      { numRuns: 3000 },
    )
  })

  it('names a shared string the table lacks as the string rules did', () => {
    const table = tableOf([Buffer.from('a')], false, 'missing')
    const row = new RowBytes()
    for (const index of ['1', '01x', '99999999999999999', '-0']) {
      expect(() => writeCell(1, 0, cellOf(Buffer.from(index)), new CellBuffer(), contextOf(table, false), row)).toThrow(
        /names shared string/,
      )
    }
    expect(row.length).toBe(0)
  })
})

describe('a row of bytes added to the record batch', () => {
  it('gives the batch add() gives for the same row as byte strings, cells in any order, overwritten or missing', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.array(fc.tuple(fc.nat(5), cellBytes), { maxLength: 8 }), { minLength: 1, maxLength: 20 }),
        (columns, rows) => {
          const limits = { maxCells: 24, maxBytes: 64 }
          const byText = new RecordBatchBuilder(columns, limits)
          const byBytes = new RecordBatchBuilder(columns, limits)
          const textBatches: unknown[] = []
          const byteBatches: unknown[] = []
          const row = new RowBytes()
          for (const cells of rows) {
            const record: string[] = []
            row.clear()
            for (const [column, bytes] of cells) {
              if (column >= columns || bytes.length === 0) continue
              while (record.length <= column) record.push('')
              record[column] = bytes.toString('latin1')
              const start = row.length
              row.append(bytes, 0, bytes.length)
              row.set(column, start)
            }
            const a = byText.add(record)
            const b = byBytes.addRow(row.bytes, row.starts, row.ends, row.count)
            if (a) textBatches.push(structuredClone(a))
            if (b) byteBatches.push(structuredClone(b))
          }
          textBatches.push(structuredClone(byText.flush()))
          byteBatches.push(structuredClone(byBytes.flush()))
          expect(byteBatches).toEqual(textBatches)
        },
      ),
      { numRuns: 300 },
    )
  })
})
