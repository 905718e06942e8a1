/**
 * The worksheet's XML -> the header and record batches. Rows come as `<row><c r="C7" t="s" s="3"><v>..</v></c>`;
 * a cell goes to the column its reference names, so a sparse row that leaves out empty cells keeps its columns.
 * The first row with a value is the header; later rows without one are skipped, as a workbook leaves them out.
 * The XML is scanned as bytes (xml-scanner.ts): references, styles, types and shared-string indexes are read from
 * the bytes, and each cell becomes the bytes of the text the CSV would carry (cell-text.ts), gathered by column
 * (row-bytes.ts) and copied into the batch being filled.
 */
import type { Readable } from 'node:stream'
import { DataError, WorkbookError } from '../core/errors.ts'
import { limitExceeded, type RecordLimits } from '../csv/record-guard.ts'
import { type BatchLimits, type RecordBatch, RecordBatchBuilder } from '../normalize/record-batch.ts'
import { CellBuffer } from './cell-bytes.ts'
import {
  CELL_PARTS,
  plainCell,
  REFERENCE_END,
  REFERENCE_START,
  STYLE_END,
  STYLE_START,
  TYPE_END,
  TYPE_START,
  VALUE_END,
  VALUE_START,
} from './cell-form.ts'
import { CellType, cellType, digitsValue, writeCell } from './cell-text.ts'
import { RowBytes } from './row-bytes.ts'
import type { WorkbookParts } from './workbook.ts'
import { pendingXmlBound, scanXmlEntry, tooDeep, tooLong } from './xml.ts'
import { XmlScanner } from './xml-scanner.ts'

/** Excel's last column is XFD. */
export const MAX_SHEET_COLUMNS = 16_384
/** Excel's last row. */
export const MAX_SHEET_ROWS = 1_048_576
/** Characters of a malformed value quoted in an error message. */
const QUOTED_PREFIX = 32
const quotePrefix = (value: string): string =>
  value.length <= QUOTED_PREFIX ? value : `${value.slice(0, QUOTED_PREFIX)}… (${value.length} characters)`

/** The elements read, by local name; the scanner reports an element by its index here. */
const ELEMENTS = ['row', 'c', 'v', 'is', 't', 'rPh']
const ROW = 0
const CELL = 1
const VALUE = 2
const INLINE = 3
const TEXT = 4
const PHONETIC = 5
/** The attributes read: r, s, t. */
const R = 0x72
const S = 0x73
const T = 0x74
/** Bytes of a valid reference kept for messages: three letters and seven digits. */
const REFERENCE_BYTES = 10

interface SheetRows {
  readonly header: readonly string[]
  readonly batches: AsyncGenerator<RecordBatch>
  /** Hands back a batch's buffers for reuse. */
  recycle(bytes: ArrayBuffer, offsets: ArrayBuffer): void
  /** Error cells (`#N/A`, `#DIV/0!`...) read so far, exported as NULL, and which values they held. */
  readonly errorCells: { count: number; values: Set<string> }
}

/** The 0-based column of a cell reference such as `AB12`, or -1 when it has no letters. */
export const columnOfReference = (reference: string): number => {
  let column = 0
  let i = 0
  for (; i < reference.length; i++) {
    const code = reference.charCodeAt(i) | 0x20
    if (code < 0x61 || code > 0x7a) break
    column = column * 26 + (code - 0x60)
  }
  return i === 0 ? -1 : column - 1
}

/** Reads up to the header row; the batches then stream the rest of the sheet. */
export const openSheetRows = async (
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
  const { formats } = parts
  // A workbook without a styles part still names the default style 0.
  const styleCount = Math.max(formats.length, 1)
  const part = `worksheet "${parts.sheetName}" (${parts.sheetPath})`
  const errorCells = { count: 0, values: new Set<string>() }
  const ready: RecordBatch[] = []
  const value = new CellBuffer()
  const inline = new CellBuffer()
  const reference = new Uint8Array(REFERENCE_BYTES)
  let referenceLength = -1
  // The row in which each column last had a cell: a second cell at one reference is malformed, not a silent choice.
  const cellRow = new Int32Array(MAX_SHEET_COLUMNS).fill(-1)
  let rowIndex = 0
  let header: string[] | undefined
  let builder: RecordBatchBuilder | undefined
  const row = new RowBytes()
  let rowNumber = 0
  let rowHasValue = false
  let rowBytes = 0
  let column = -1
  let type: CellType = CellType.NUMBER
  let style = 0
  let inValue = false
  let inInline = false
  let inText = false
  let inPhonetic = false

  const referenceText = (): string | undefined =>
    referenceLength < 0 ? undefined : Buffer.from(reference.subarray(0, referenceLength)).toString('latin1')
  const cellName = (): string => {
    const text = referenceText()
    return text !== undefined ? quotePrefix(text) : `in column ${column + 1} of row ${rowNumber}`
  }
  const cellContext = { tableId, part, formats, parts, errorCells, cellName }

  const endCell = () => {
    if (cellRow[column] === rowIndex) twoCellsAtOneReference()
    cellRow[column] = rowIndex
    const start = row.length
    writeCell(type, style, value, inline, cellContext, row)
    inline.clear()
    const length = row.length - start
    if (length === 0) return
    // The limits count a cell's UTF-8 bytes (its text as the CSV would carry it) and a row's, as for a CSV record.
    if (length > limits.maxFieldBytes) {
      throw limitExceeded(tableId, 'maxFieldBytes', limits.maxFieldBytes, rowNumber, `a cell of ${length} bytes`)
    }
    rowBytes += length
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
    row.set(column, start)
    rowHasValue = true
  }

  const endRow = () => {
    if (!rowHasValue) return
    if (header === undefined) {
      header = Array.from({ length: row.count }, (_, column) => row.text(column))
      builder = new RecordBatchBuilder(header.length, options.batchLimits)
    } else {
      const batch = builder!.addRow(row.bytes, row.starts, row.ends, row.count)
      if (batch) ready.push(batch)
    }
  }

  const malformedCell = (what: string) =>
    new WorkbookError('XLSX_MALFORMED', { tableId, reason: `row ${rowNumber} of ${part} has ${what}` })
  // Out of endCell, which runs for every cell: the check there stays two array accesses.
  const twoCellsAtOneReference = (): never => {
    throw malformedCell(`two cells at ${cellName()}`)
  }

  /** The text of the current tag's attribute `i`, for messages. */
  const attributeText = (i: number): string =>
    Buffer.from(scanner.attributes.valueBytes(i).buffer, scanner.attributes.valueBytes(i).byteOffset).toString(
      'utf8',
      scanner.attributes.valueStart(i),
      scanner.attributes.valueEnd(i),
    )

  /** Reads the cell's reference (`C7`: letters, then a row of 1 to MAX_SHEET_ROWS) into `column`. */
  const openCell = () => {
    const r = scanner.attributes.find(R)
    if (r < 0) {
      referenceLength = -1
      column++
    } else {
      const values = scanner.attributes.valueBytes(r)
      const start = scanner.attributes.valueStart(r)
      const end = scanner.attributes.valueEnd(r)
      let i = start
      let letters = 0
      for (; i < end && i - start < 3; i++) {
        const code = values[i]! | 0x20
        if (code < 0x61 || code > 0x7a) break
        letters = letters * 26 + (code - 0x60)
      }
      const referenceRow = digitsValue(values, i, end)
      const valid = i > start && end - i <= 7
      column = valid && referenceRow >= 1 && referenceRow <= MAX_SHEET_ROWS ? letters - 1 : -1
      if (column < 0 || column >= MAX_SHEET_COLUMNS) {
        throw malformedCell(`a cell with the reference "${quotePrefix(attributeText(r))}"`)
      }
      for (let k = start; k < end; k++) reference[k - start] = values[k]!
      referenceLength = end - start
    }
    if (column < 0 || column >= MAX_SHEET_COLUMNS) throw malformedCell('a cell with the reference ""')
    const t = scanner.attributes.find(T)
    type =
      t < 0
        ? CellType.NUMBER
        : cellType(scanner.attributes.valueBytes(t), scanner.attributes.valueStart(t), scanner.attributes.valueEnd(t))
    // An <is> in a cell of another type must not carry its text into the next inline string.
    inline.clear()
    const s = scanner.attributes.find(S)
    style =
      s < 0
        ? 0
        : digitsValue(
            scanner.attributes.valueBytes(s),
            scanner.attributes.valueStart(s),
            scanner.attributes.valueEnd(s),
          )
    if (style < 0 || style >= styleCount) {
      throw malformedCell(
        `cell ${cellName()} with style "${quotePrefix(s < 0 ? '' : attributeText(s))}", which the workbook does not have (it has ${formats.length})`,
      )
    }
    value.clear()
  }

  const openRow = () => {
    const r = scanner.attributes.find(R)
    rowNumber =
      r < 0
        ? rowNumber + 1
        : Math.max(
            0,
            digitsValue(
              scanner.attributes.valueBytes(r),
              scanner.attributes.valueStart(r),
              scanner.attributes.valueEnd(r),
            ),
          )
    if (rowNumber < 1 || rowNumber > MAX_SHEET_ROWS) {
      throw new WorkbookError('XLSX_MALFORMED', {
        tableId,
        reason: `${part} has a row numbered "${quotePrefix(r < 0 ? String(rowNumber) : attributeText(r))}" (rows are 1 to ${MAX_SHEET_ROWS.toLocaleString('en-US')})`,
      })
    }
    row.clear()
    rowIndex++
    rowHasValue = false
    rowBytes = 0
    column = -1
  }

  const found = new Int32Array(CELL_PARTS)
  /**
   * Reads the cell plainCell() found as openCell(), the value's text and endCell() would: false, with nothing
   * changed, when its reference or style is one the scanner must refuse with its own message.
   */
  const readPlainCell = (bytes: Uint8Array): boolean => {
    const start = found[REFERENCE_START]!
    const end = found[REFERENCE_END]!
    let i = start
    let letters = 0
    for (; i < end && i - start < 3; i++) {
      const code = bytes[i]! | 0x20
      if (code < 0x61 || code > 0x7a) break
      letters = letters * 26 + (code - 0x60)
    }
    const referenceRow = digitsValue(bytes, i, end)
    if (i === start || end - i > 7 || referenceRow < 1 || referenceRow > MAX_SHEET_ROWS) return false
    if (letters > MAX_SHEET_COLUMNS) return false
    const s = found[STYLE_START]!
    const cellStyle = s < 0 ? 0 : digitsValue(bytes, s, found[STYLE_END]!)
    if (cellStyle < 0 || cellStyle >= styleCount) return false
    column = letters - 1
    for (let k = start; k < end; k++) reference[k - start] = bytes[k]!
    referenceLength = end - start
    const t = found[TYPE_START]!
    type = t < 0 ? CellType.NUMBER : cellType(bytes, t, found[TYPE_END]!)
    style = cellStyle
    inline.clear()
    value.clear()
    value.append(bytes, found[VALUE_START]!, found[VALUE_END]!)
    endCell()
    return true
  }

  const where = () => {
    const text = referenceText()
    return `row ${rowNumber}${text === undefined ? '' : `, at cell ${quotePrefix(text)}`}`
  }
  const maxPending = pendingXmlBound(limits.maxFieldBytes)
  const scanner: XmlScanner = new XmlScanner(
    ELEMENTS,
    {
      open: (kind) => {
        if (kind === CELL) openCell()
        else if (kind === VALUE) inValue = true
        else if (kind === INLINE) inInline = true
        else if (kind === ROW) openRow()
        else if (inInline && kind === TEXT) inText = !inPhonetic
        else if (inInline && kind === PHONETIC) inPhonetic = true
      },
      close: (kind) => {
        if (kind === VALUE) inValue = false
        else if (kind === INLINE) inInline = false
        else if (kind === CELL) endCell()
        else if (kind === ROW) endRow()
        else if (inInline && kind === TEXT) inText = false
        else if (inInline && kind === PHONETIC) inPhonetic = false
      },
      wantsText: () => inValue || (inInline && inText),
      // Cells of the plain form straight from the bytes, when no <v> or <is> is open around them.
      readDepth: 3,
      readElements: (bytes, at, end) => {
        if (inValue || inInline) return at
        for (;;) {
          const after = plainCell(bytes, at, end, limits.maxFieldBytes, found)
          if (after < 0 || !readPlainCell(bytes)) return at
          at = after
        }
      },
      text: (bytes, start, end) => {
        // A <v> may come in several pieces (split by comments or chunks); its whole is bounded as it grows.
        const cell = inValue ? value : inline
        cell.append(bytes, start, end)
        if (cell.units > limits.maxFieldBytes) {
          throw limitExceeded(tableId, 'maxFieldBytes', limits.maxFieldBytes, rowNumber, `cell ${cellName()}`)
        }
      },
    },
    {
      maxPending,
      malformed: (reason) =>
        new WorkbookError('XLSX_MALFORMED', {
          tableId,
          reason: `the workbook's ${part} is not well-formed XML: ${reason} (${where()})`,
        }),
      tooDeep: () => tooDeep(part, tableId),
      tooLong: () => tooLong(part, tableId, maxPending, where()),
    },
  )
  const steps = scanXmlEntry(entry, scanner, tableId, signal)
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
