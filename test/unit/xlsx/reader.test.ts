/**
 * The workbook reader on committed workbooks written by xlsxwriter and openpyxl (test/fixtures/xlsx/generate.py):
 * every cell comes out as the text its CSV twin carries, and what is no readable workbook fails with its code.
 */
import { readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parse } from 'csv-parse/sync'
import { describe, expect, it } from 'vitest'
import type { RecordBatch } from '../../../functions/export/normalize/record-batch.ts'
import { numberText, serialText } from '../../../functions/export/xlsx/cells.ts'
import { builtInFormat, customFormat, NumberKind } from '../../../functions/export/xlsx/number-format.ts'
import { openWorkbookTable } from '../../../functions/export/xlsx/reader.ts'
import { unescapeText } from '../../../functions/export/xlsx/shared-strings.ts'
import { columnOfReference } from '../../../functions/export/xlsx/sheet.ts'
import { DEFAULT_LIMITS } from '../../support/limits.ts'

const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/xlsx')
const fixture = (name: string): Buffer => readFileSync(path.join(FIXTURES, name))

async function* chunks(bytes: Uint8Array, size = 1000): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield Buffer.from(bytes.subarray(at, at + size))
}

const cellsOf = (batch: RecordBatch): string[][] => {
  const text = Buffer.from(batch.bytes.buffer, batch.bytes.byteOffset, batch.bytes.byteLength)
  return Array.from({ length: batch.rowCount }, (_, r) =>
    Array.from({ length: batch.columnCount }, (_, c) => {
      const cell = r * batch.columnCount + c
      return text.toString('utf8', batch.offsets[cell], batch.offsets[cell + 1])
    }),
  )
}

const readWorkbook = async (bytes: Uint8Array) => {
  const workbook = await openWorkbookTable(chunks(bytes), {
    tableId: 'wb',
    spoolDirectory: os.tmpdir(),
    limits: DEFAULT_LIMITS,
  })
  try {
    const rows: string[][] = []
    for await (const batch of workbook.batches) rows.push(...cellsOf(batch))
    return { header: workbook.header, rows, sheet: workbook.sheetName, warnings: workbook.warnings() }
  } finally {
    await workbook.close()
  }
}

const readFailure = async (bytes: Uint8Array) => {
  try {
    await readWorkbook(bytes)
  } catch (error) {
    return error as { code: string; message: string }
  }
  throw new Error('the workbook was read')
}

const csvTwin = (name: string): string[][] => parse(fixture(name), { bom: true }) as string[][]

describe('a workbook from another writer reads as its CSV twin', () => {
  it('xlsxwriter: shared and inline strings, rich text, formulas, date formats, sparse cells, an error cell', async () => {
    const [header, ...rows] = csvTwin('devices-xlsxwriter.csv')
    const read = await readWorkbook(fixture('devices-xlsxwriter.xlsx'))
    expect(read.sheet).toBe('Devices')
    expect(read.header).toEqual(header)
    expect(read.rows).toEqual(rows)
    expect(read.warnings).toEqual(['1 error cell (#N/A) of worksheet "Devices" exported as NULL'])
  })

  it('openpyxl: the 1904 date system, milliseconds, times of day and a row of one cell', async () => {
    const [header, ...rows] = csvTwin('times-openpyxl-1904.csv')
    const read = await readWorkbook(fixture('times-openpyxl-1904.xlsx'))
    expect(read.header).toEqual(header)
    expect(read.rows).toEqual(rows)
    expect(read.warnings).toEqual([])
  })
})

describe('a body that is no readable workbook fails with its code', () => {
  const devices = fixture('devices-xlsxwriter.xlsx')
  it.each([
    ['an empty body', Buffer.alloc(0), 'EMPTY_BODY', /empty workbook \(0 bytes\)/],
    [
      'an HTML page',
      Buffer.from('<!DOCTYPE html><html><body>Sign in</body></html>'),
      'NOT_XLSX',
      /sent an HTML page \(48 bytes\) instead of a workbook/,
    ],
    [
      'an encrypted workbook (CFB)',
      Buffer.concat([Buffer.from('d0cf11e0a1b11ae1', 'hex'), Buffer.alloc(4000)]),
      'XLSX_ENCRYPTED',
      /encrypted \(a password-protected CFB\/OLE file, not a zip\)/,
    ],
    ['a workbook cut short', devices.subarray(0, devices.length - 300), 'BODY_TRUNCATED', /incomplete/],
    ['a workbook without a worksheet', fixture('no-worksheet.xlsx'), 'XLSX_NO_WORKSHEET', /no worksheet/],
    ['a worksheet without a header row', fixture('no-header.xlsx'), 'XLSX_NO_HEADER', /"Empty".* no header row/],
    ['a zip bomb', fixture('zip-bomb.xlsx'), 'XLSX_TOO_LARGE', /more than 100 times/],
  ])('%s', async (_what, bytes, code, message) => {
    const failure = await readFailure(bytes)
    expect(failure.code).toBe(code)
    expect(failure.message).toMatch(/^table wb: /)
    expect(failure.message).toMatch(message)
  })
})

describe('the limits apply to a worksheet as to a CSV', () => {
  it.each([
    [{ maxColumns: 5, maxRecordBytes: 1 << 20, maxFieldBytes: 1 << 20 }, /over limits\.maxColumns \(5\)/],
    [{ maxColumns: 100, maxRecordBytes: 1 << 20, maxFieldBytes: 8 }, /over limits\.maxFieldBytes \(8\)/],
    [{ maxColumns: 100, maxRecordBytes: 40, maxFieldBytes: 40 }, /over limits\.maxRecordBytes \(40\)/],
  ])('%j', async (limits, message) => {
    const workbook = openWorkbookTable(chunks(fixture('devices-xlsxwriter.xlsx')), {
      tableId: 'wb',
      spoolDirectory: os.tmpdir(),
      limits,
    })
    const failure = await workbook.then(
      async (table) => {
        try {
          for await (const _ of table.batches) {
            // reading is what fails
          }
        } finally {
          await table.close()
        }
      },
      (error: unknown) => error,
    )
    expect(failure).toMatchObject({ code: 'LIMIT_EXCEEDED', message: expect.stringMatching(message) })
  })
})

describe('number formats', () => {
  it.each([
    [14, NumberKind.DATE],
    [22, NumberKind.DATE_TIME],
    [21, NumberKind.TIME],
    [46, NumberKind.TIME],
    [2, NumberKind.FIXED],
    [0, NumberKind.GENERAL],
    [49, NumberKind.GENERAL],
  ])('built-in id %i is kind %i', (id, kind) => {
    expect(builtInFormat(id).kind).toBe(kind)
  })

  it.each([
    ['yyyy-mm-dd', NumberKind.DATE],
    ['[$-409]mmmm d, yyyy;@', NumberKind.DATE],
    ['mmm-yy', NumberKind.DATE],
    ['dd/mm/yyyy hh:mm', NumberKind.DATE_TIME],
    ['yyyy-mm-dd hh:mm:ss.000', NumberKind.DATE_TIME],
    ['h:mm AM/PM', NumberKind.TIME],
    ['[h]:mm:ss', NumberKind.TIME],
    ['mm:ss', NumberKind.TIME],
    ['#,##0.00 "EUR"', NumberKind.FIXED],
    ['[Red]0.000;-0.000', NumberKind.FIXED],
    ['0.00%', NumberKind.GENERAL],
    ['0.00E+00', NumberKind.GENERAL],
    ['"day" 0', NumberKind.GENERAL],
    ['@', NumberKind.GENERAL],
    ['General', NumberKind.GENERAL],
  ])('custom code %s is kind %i', (code, kind) => {
    expect(customFormat(code).kind).toBe(kind)
  })
})

describe('cell values as the CSV writes them', () => {
  const general = builtInFormat(0)
  it.each([
    [42, general, '42'],
    [-7, general, '-7'],
    [0.1 + 0.2, general, '0.3'],
    [1.5e-7, general, '1.5e-7'],
    [1e21, general, '1.0e+21'],
    [1234.5, customFormat('0.00'), '1234.50'],
    [1234.5678, customFormat('0.00'), '1234.5678'],
  ])('%d in its format is %s', (value, format, text) => {
    expect(numberText(value, format)).toBe(text)
  })

  it.each([
    [45366, NumberKind.DATE, false, '2024-03-15'],
    [45366.5, NumberKind.DATE, false, '2024-03-15 12:00:00'],
    [44681, NumberKind.DATE, true, '2026-05-01'],
    [1, NumberKind.DATE, false, '1900-01-01'],
    [59, NumberKind.DATE, false, '1900-02-28'],
    [61, NumberKind.DATE, false, '1900-03-01'],
    [46345.99999421297, NumberKind.DATE_TIME, false, '2026-11-19 23:59:59.500'],
    [45366.999999999, NumberKind.DATE_TIME, false, '2024-03-16 00:00:00'],
    [0.0625, NumberKind.TIME, false, '01:30:00'],
    [1.5, NumberKind.TIME, false, '36:00:00'],
    [-1, NumberKind.DATE, false, undefined],
  ])('serial %d (%i, 1904: %s) is %s', (serial, kind, date1904, text) => {
    expect(serialText(serial, kind as NumberKind, date1904)).toBe(text)
  })

  it.each([
    ['A1', 0],
    ['Z7', 25],
    ['AA10', 26],
    ['XFD1', 16_383],
    ['17', -1],
  ])('reference %s is column %i', (reference, column) => {
    expect(columnOfReference(reference)).toBe(column)
  })
})

describe('escaped characters in text', () => {
  it.each([
    ['line one_x000D_\nline two', 'line one\r\nline two'],
    ['_x005F_x000D_ stays literal', '_x000D_ stays literal'],
    ['no escapes', 'no escapes'],
  ])('%j reads as %j', (stored, text) => {
    expect(unescapeText(stored)).toBe(text)
  })
})
