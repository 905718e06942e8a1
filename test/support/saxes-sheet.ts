/**
 * The reference for the worksheet's byte scanner (functions/export/xlsx/sheet.ts): the saxes-based reader the
 * exporter used before, kept for the differential test only. Its one change from that reader: elements are known
 * by their local name, so that the OpenXML SDK's prefixed `<x:c>` is a cell here as it is for the scanner.
 *
 * The worksheet's XML -> the header and record batches. Rows come as `<row><c r="C7" t="s" s="3"><v>..</v></c>`;
 * a cell goes to the column its reference names, so a sparse row that leaves out empty cells keeps its columns.
 * The first row with a value is the header; later rows without one are skipped, as a workbook leaves them out.
 * Each cell becomes the text the CSV would carry (cells.ts) and is copied into the batch being filled.
 */
import type { Readable } from 'node:stream'
import { DataError, WorkbookError } from '../../functions/export/core/errors.ts'
import { limitExceeded, type RecordLimits } from '../../functions/export/csv/record-guard.ts'
import {
  type BatchLimits,
  type RecordBatch,
  RecordBatchBuilder,
} from '../../functions/export/normalize/record-batch.ts'
import { numberText, serialText } from '../../functions/export/xlsx/cells.ts'
import { GENERAL_FORMAT, NumberKind } from '../../functions/export/xlsx/number-format.ts'
import { byteString, StringItemText, unescapeText } from '../../functions/export/xlsx/shared-strings.ts'
import type { WorkbookParts } from '../../functions/export/xlsx/workbook.ts'
import { streamXmlEntry, type XmlTag } from '../../functions/export/xlsx/xml.ts'

/** Excel's last column is XFD. */
const MAX_SHEET_COLUMNS = 16_384
/** Excel's last row. */
const MAX_SHEET_ROWS = 1_048_576
/** An index or row number as SpreadsheetML writes it: a non-negative integer in decimal digits. */
const DIGITS = /^[0-9]{1,15}$/
/** A cell reference: column letters (A to XFD), then the row number. */
const CELL_REFERENCE = /^[A-Za-z]{1,3}[0-9]{1,7}$/
/** Characters of a malformed value quoted in an error message. */
const QUOTED_PREFIX = 32
const quotePrefix = (value: string): string =>
  value.length <= QUOTED_PREFIX ? value : `${value.slice(0, QUOTED_PREFIX)}… (${value.length} characters)`
/** Distinct error values named in the warning. */
const ERROR_VALUES_NAMED = 5

interface SheetRows {
  readonly header: readonly string[]
  readonly batches: AsyncGenerator<RecordBatch>
  /** Hands back a batch's buffers for reuse. */
  recycle(bytes: ArrayBuffer, offsets: ArrayBuffer): void
  /** Error cells (`#N/A`, `#DIV/0!`...) read so far, exported as NULL, and which values they held. */
  readonly errorCells: { count: number; values: Set<string> }
}

/** The 0-based column of a cell reference such as `AB12`, or -1 when it has no letters. */
const columnOfReference = (reference: string): number => {
  let column = 0
  let i = 0
  for (; i < reference.length; i++) {
    const code = reference.charCodeAt(i) | 0x20
    if (code < 0x61 || code > 0x7a) break
    column = column * 26 + (code - 0x60)
  }
  return i === 0 ? -1 : column - 1
}

/** The 1-based row of a valid cell reference such as `AB12`. */
const rowOfReference = (reference: string): number => Number(reference.replace(/^[A-Za-z]+/, ''))

/** Reads up to the header row; the batches then stream the rest of the sheet. */
export const openSheetRowsWithSaxes = async (
  entry: Readable,
  parts: WorkbookParts,
  options: {
    readonly tableId: string
    readonly batchLimits: BatchLimits
    readonly limits: RecordLimits
    /** Stops the reading between pieces of XML (the table's deadline). */
    readonly signal?: AbortSignal | undefined
  },
): Promise<SheetRows> => {
  const { tableId, limits, signal } = options
  const { formats, sharedStrings, date1904 } = parts
  // A workbook without a styles part still names the default style 0.
  const styleCount = Math.max(formats.length, 1)
  const part = `worksheet "${parts.sheetName}" (${parts.sheetPath})`
  const errorCells = { count: 0, values: new Set<string>() }
  const ready: RecordBatch[] = []
  const stringItem = new StringItemText(limits.maxFieldBytes, () =>
    limitExceeded(tableId, 'maxFieldBytes', limits.maxFieldBytes, rowNumber, `cell ${cellName()}`),
  )
  let header: string[] | undefined
  let builder: RecordBatchBuilder | undefined
  let row: string[] = []
  let rowNumber = 0
  let rowHasValue = false
  let rowBytes = 0
  let column = -1
  let reference: string | undefined
  let type = 'n'
  let style = 0
  let value = ''
  let inValue = false
  let inInline = false

  const cellName = (): string =>
    reference !== undefined ? quotePrefix(reference) : `in column ${column + 1} of row ${rowNumber}`

  const cellText = (): string => {
    switch (type) {
      case 's': {
        // An empty cell is NULL whatever its type; an index is digits only, never a fraction, sign or exponent.
        if (value === '') return ''
        const text = DIGITS.test(value) ? sharedStrings.at(Number(value)) : undefined
        if (text === undefined) {
          throw new WorkbookError('XLSX_MALFORMED', {
            tableId,
            reason: `cell ${cellName()} of ${part} names shared string "${quotePrefix(value)}", which the workbook does not have (it has ${sharedStrings.count})`,
          })
        }
        return text
      }
      case 'inlineStr':
        return byteString(unescapeText(stringItem.take()))
      case 'str':
        return byteString(unescapeText(value))
      case 'b':
        return value === '' ? '' : value === '1' || value === 'true' ? 'true' : 'false'
      case 'e':
        if (value !== '') {
          errorCells.count++
          if (errorCells.values.size < ERROR_VALUES_NAMED) errorCells.values.add(value)
        }
        return ''
      case 'd':
        // Record batches take byte strings: a character past U+00FF would be cut to its low byte.
        return byteString(value)
      default: {
        if (value === '') return ''
        const number = Number(value)
        if (!Number.isFinite(number)) return byteString(value)
        const format = formats[style] ?? GENERAL_FORMAT
        if (format.kind >= NumberKind.DATE)
          return serialText(number, format.kind, date1904) ?? numberText(number, format)
        return numberText(number, format)
      }
    }
  }

  const endCell = () => {
    const text = cellText()
    if (text === '') return
    // The limits count a cell's UTF-8 bytes (its text as the CSV would carry it) and a row's, as for a CSV record.
    if (text.length > limits.maxFieldBytes) {
      throw limitExceeded(tableId, 'maxFieldBytes', limits.maxFieldBytes, rowNumber, `a cell of ${text.length} bytes`)
    }
    rowBytes += text.length
    if (rowBytes > limits.maxRecordBytes) {
      throw limitExceeded(
        tableId,
        'maxRecordBytes',
        limits.maxRecordBytes,
        rowNumber,
        `a row of over ${rowBytes} bytes`,
      )
    }
    if (column >= limits.maxColumns) {
      throw limitExceeded(tableId, 'maxColumns', limits.maxColumns, rowNumber, `a value in column ${column + 1}`)
    }
    const width = header === undefined ? MAX_SHEET_COLUMNS : header.length
    if (column >= width) {
      throw new DataError('ROW_FIELD_COUNT', {
        tableId,
        line: rowNumber,
        reason: `row ${rowNumber} of ${part} has a value in column ${column + 1} where the header has ${width} columns`,
        hint: 'fix the saved table so that every column has a header; the previous data is kept',
      })
    }
    while (row.length <= column) row.push('')
    row[column] = text
    rowHasValue = true
  }

  const endRow = () => {
    if (!rowHasValue) return
    if (header === undefined) {
      header = row.map((cell) => Buffer.from(cell, 'latin1').toString('utf8'))
      builder = new RecordBatchBuilder(header.length, options.batchLimits)
    } else {
      const batch = builder!.add(row)
      if (batch) ready.push(batch)
    }
  }

  const malformedCell = (what: string) =>
    new WorkbookError('XLSX_MALFORMED', { tableId, reason: `row ${rowNumber} of ${part} has ${what}` })

  const localName = (name: string) => name.slice(name.indexOf(':') + 1)
  const open = (tag: XmlTag) => {
    const name = localName(tag.name)
    switch (name) {
      case 'c': {
        reference = tag.attributes.r
        if (reference === undefined) column++
        else {
          column = CELL_REFERENCE.test(reference) ? columnOfReference(reference) : -1
          const referenceRow = column < 0 ? 0 : rowOfReference(reference)
          if (referenceRow < 1 || referenceRow > MAX_SHEET_ROWS) column = -1
        }
        if (column < 0 || column >= MAX_SHEET_COLUMNS) {
          throw malformedCell(`a cell with the reference "${quotePrefix(reference ?? '')}"`)
        }
        type = tag.attributes.t ?? 'n'
        // An <is> in a cell of another type must not carry its text into the next inline string.
        stringItem.take()
        const s = tag.attributes.s
        style = s === undefined ? 0 : DIGITS.test(s) ? Number(s) : -1
        if (style < 0 || style >= styleCount) {
          throw malformedCell(
            `cell ${cellName()} with style "${quotePrefix(s ?? '')}", which the workbook does not have (it has ${formats.length})`,
          )
        }
        value = ''
        break
      }
      case 'v':
        inValue = true
        break
      case 'is':
        inInline = true
        break
      case 'row': {
        const r = tag.attributes.r
        rowNumber = r === undefined ? rowNumber + 1 : DIGITS.test(r) ? Number(r) : 0
        if (rowNumber < 1 || rowNumber > MAX_SHEET_ROWS) {
          throw new WorkbookError('XLSX_MALFORMED', {
            tableId,
            reason: `${part} has a row numbered "${quotePrefix(r ?? String(rowNumber))}" (rows are 1 to ${MAX_SHEET_ROWS.toLocaleString('en-US')})`,
          })
        }
        row = []
        rowHasValue = false
        rowBytes = 0
        column = -1
        break
      }
      default:
        if (inInline) stringItem.open(name)
    }
  }
  const text = (text: string) => {
    if (inValue) {
      // A <v> may come in several text events (split by comments); its whole is bounded as it grows.
      value += text
      if (value.length > limits.maxFieldBytes) {
        throw limitExceeded(tableId, 'maxFieldBytes', limits.maxFieldBytes, rowNumber, `cell ${cellName()}`)
      }
    } else if (inInline) stringItem.text(text)
  }
  const close = (qname: string) => {
    const name = localName(qname)
    switch (name) {
      case 'v':
        inValue = false
        break
      case 'is':
        inInline = false
        break
      case 'c':
        endCell()
        break
      case 'row':
        endRow()
        break
      default:
        if (inInline) stringItem.close(name)
    }
  }

  const where = () => `row ${rowNumber}${reference === undefined ? '' : `, at cell ${quotePrefix(reference)}`}`
  const steps = streamXmlEntry(
    entry,
    part,
    tableId,
    { open, text, close, where },
    { maxPendingChars: limits.maxFieldBytes, signal },
  )
  while (header === undefined) {
    const step = await steps.next()
    if (step.done) {
      throw new WorkbookError('XLSX_NO_HEADER', {
        tableId,
        reason: `${part}, the worksheet read, has no header row (no row with a value)`,
      })
    }
  }
  async function* batches(): AsyncGenerator<RecordBatch> {
    try {
      for (;;) {
        while (ready.length > 0) yield ready.shift()!
        const step = await steps.next()
        if (step.done) break
      }
      const last = builder!.flush()
      if (last) yield last
    } finally {
      await steps.return(undefined)
    }
  }
  return {
    header,
    batches: batches(),
    recycle: (bytes, offsets) => builder?.recycle(bytes, offsets),
    errorCells,
  }
}
