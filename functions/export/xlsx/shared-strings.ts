/**
 * Reading the shared-strings part (`xl/sharedStrings.xml`) into a SharedStringTable (string-table.ts), which keeps
 * memory fixed by spilling to the spool disk, and the text rules shared by shared and inline strings. Limits on
 * the table's size keep a hostile workbook from filling the disk; past them the table fails with XLSX_TOO_LARGE.
 */
import { isUtf8 } from 'node:buffer'
import type { Readable } from 'node:stream'
import { DataError, WorkbookError } from '../core/errors.ts'
import { CellBuffer, isPlainUtf8 } from './cell-bytes.ts'
import { SharedStringTable, type StringTableOptions } from './string-table.ts'
import { pendingXmlBound, scanXmlEntry, tooDeep, tooLong, type XmlOptions } from './xml.ts'
import { AMP, ascii, LF, LT, SPACE, TAB } from './xml-bytes.ts'
import { XmlScanner } from './xml-scanner.ts'

/** UTF-8 bytes of all shared strings together, on disk once past the memory budget. */
const MAX_SHARED_STRING_BYTES = 4 * 1024 ** 3
/** Count of shared strings (8 bytes of end offset each on disk: 512 MiB at most). */
const MAX_SHARED_STRINGS = 64_000_000

const NON_ASCII = /[^\x00-\x7f]/
/** SpreadsheetML's escape for characters XML cannot carry (a carriage return is `_x000D_`); `_x005F_` is `_`. */
const ESCAPED_CHARACTER = /_x([0-9A-Fa-f]{4})_/g

/** A string item's text with `_xHHHH_` escapes undone, as Excel shows it. */
export const unescapeText = (text: string): string =>
  text.includes('_x')
    ? text.replace(ESCAPED_CHARACTER, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    : text

/** Text as its UTF-8 bytes, one character per byte: the form record batches copy. */
export const byteString = (text: string): string =>
  NON_ASCII.test(text) ? Buffer.from(text, 'utf8').toString('latin1') : text

/**
 * Collects the text of a string item (`<si>` or a cell's `<is>`): plain `<t>` or rich-text runs joined, leaving out
 * phonetic guides (`<rPh>`), which are reading aids and not part of the text.
 */
export class StringItemText {
  #parts: string[] = []
  #length = 0
  #inText = false
  #inPhonetic = false
  readonly #maxChars: number
  readonly #tooLong: () => Error

  /** An item longer than `maxChars` (its runs together) fails with `tooLong()` as it grows. */
  constructor(maxChars: number, tooLong: () => Error) {
    this.#maxChars = maxChars
    this.#tooLong = tooLong
  }

  open(name: string): void {
    if (name === 't') this.#inText = !this.#inPhonetic
    else if (name === 'rPh') this.#inPhonetic = true
  }

  text(text: string): void {
    if (!this.#inText) return
    this.#length += text.length
    if (this.#length > this.#maxChars) throw this.#tooLong()
    this.#parts.push(text)
  }

  close(name: string): void {
    if (name === 't') this.#inText = false
    else if (name === 'rPh') this.#inPhonetic = false
  }

  /** The item's text so far, and a fresh start. */
  take(): string {
    const text = this.#parts.length === 1 ? this.#parts[0]! : this.#parts.join('')
    this.#parts = []
    this.#length = 0
    return text
  }
}

const PART = 'shared strings (xl/sharedStrings.xml)'
/** The elements read, by local name (xml-scanner.ts reports an element by its index here). */
const ELEMENTS = ['si', 't', 'rPh']
const ITEM = 0
const TEXT = 1
const PHONETIC = 2

/**
 * Reads the part with the byte scanner; a string longer than `maxFieldBytes` could never fill a cell, so it fails
 * as LIMIT_EXCEEDED. An item's text goes into the table as its bytes, unless it has `_xHHHH_` escapes to undo or
 * bytes that are not UTF-8 (replaced by U+FFFD, as a decoder does).
 */
export const readSharedStrings = async (
  entry: Readable,
  tableId: string,
  options: StringTableOptions,
  xml: XmlOptions & { readonly maxFieldBytes: number },
): Promise<SharedStringTable> => {
  const strings = new SharedStringTable(options)
  const text = new CellBuffer()
  let inText = false
  let inPhonetic = false
  const maxPending = pendingXmlBound(xml.maxPendingChars)
  const where = () => `shared string ${strings.count + 1}`
  const checkSize = () => {
    if (strings.byteLength > MAX_SHARED_STRING_BYTES || strings.count > MAX_SHARED_STRINGS) {
      throw new WorkbookError('XLSX_TOO_LARGE', {
        tableId,
        reason: `the workbook's shared strings exceed ${MAX_SHARED_STRINGS.toLocaleString('en-US')} strings or ${MAX_SHARED_STRING_BYTES / 2 ** 30} GiB`,
      })
    }
  }
  const scanner = new XmlScanner(
    ELEMENTS,
    {
      readElements: (bytes, at, end) => readPlainItems(bytes, at, end, strings, xml.maxFieldBytes, checkSize),
      open: (kind) => {
        if (kind === TEXT) inText = !inPhonetic
        else if (kind === PHONETIC) inPhonetic = true
      },
      close: (kind) => {
        if (kind === TEXT) inText = false
        else if (kind === PHONETIC) inPhonetic = false
        else if (kind === ITEM) {
          addItem(strings, text)
          text.clear()
          checkSize()
        }
      },
      wantsText: () => inText,
      text: (bytes, start, end) => {
        text.append(bytes, start, end)
        if (text.units > xml.maxFieldBytes) {
          throw new DataError('LIMIT_EXCEEDED', {
            tableId,
            reason: `shared string ${strings.count + 1} of the workbook is over limits.maxFieldBytes (${xml.maxFieldBytes})`,
            hint: 'the previous data is kept; raise limits.maxFieldBytes in the configuration if a cell really is that long, or fix the saved table',
          })
        }
      },
    },
    {
      maxPending,
      malformed: (reason) =>
        new WorkbookError('XLSX_MALFORMED', {
          tableId,
          reason: `the workbook's ${PART} is not well-formed XML: ${reason} (${where()})`,
        }),
      tooDeep: () => tooDeep(PART, tableId),
      tooLong: () => tooLong(PART, tableId, maxPending, where()),
    },
  )
  let first = true
  try {
    for await (const _ of scanXmlEntry(entry, scanner, tableId, xml.signal, (chunk) => {
      if (!first) return
      first = false
      reserveStrings(strings, chunk, options.partBytes)
    })) {
      // each step has scanned one inflated chunk
    }
    strings.finish()
  } catch (error) {
    strings.close()
    throw error
  }
  return strings
}

/** The root's `uniqueCount`, where the first chunk shows it: the table makes room for that many strings at once. */
const UNIQUE_COUNT = /<(?:[\w.-]+:)?sst\b[^>]*?\suniqueCount\s*=\s*["'](\d{1,10})["']/

const reserveStrings = (strings: SharedStringTable, chunk: Uint8Array, partBytes: number | undefined): void => {
  if (partBytes === undefined) return
  const head = Buffer.from(chunk.buffer, chunk.byteOffset, Math.min(chunk.byteLength, 4096)).toString('latin1')
  const count = UNIQUE_COUNT.exec(head)?.[1]
  if (count !== undefined) strings.reserve(Number(count), partBytes)
}

const addItem = (strings: SharedStringTable, text: CellBuffer): void => {
  const { bytes, length } = text
  if (isPlainUtf8(bytes, length)) strings.addBytes(bytes, 0, length)
  else strings.add(unescapeText(bytes.toString('utf8', 0, length)))
}

/** The forms nearly every writer gives a plain string item (Excel, openpyxl, xlsxwriter, the stand-in). */
const PLAIN_ITEM = ascii('<si><t>')
const PRESERVED_ITEM = ascii('<si><t xml:space="preserve">')
const ITEM_END = ascii('</t></si>')
const UNDERSCORE = 0x5f
const X = 0x78

const startsWith = (bytes: Uint8Array, at: number, end: number, form: Uint8Array): boolean => {
  if (end - at < form.length) return false
  for (let k = 0; k < form.length; k++) if (bytes[at + k] !== form[k]) return false
  return true
}

/**
 * Adds the string items at `bytes[at..end)` that are of the plain forms, whole in the chunk, with text the scanner
 * would hand on as it is and addItem() take as its bytes: no entity, CR, character XML does not allow, `_xHHHH_`
 * escape or invalid UTF-8, and within `maxBytes`. Returns where it stopped: at the first item of any other form
 * (a prefix, rich text, a phonetic run, CDATA, a comment), which the scanner reads, with its errors, as before.
 * Reading the bench's 1.2 million items this way rather than tag by tag through the scanner's handlers is what
 * stands between the download and the first row.
 */
const readPlainItems = (
  bytes: Uint8Array,
  at: number,
  end: number,
  strings: SharedStringTable,
  maxBytes: number,
  checkSize: () => void,
): number => {
  for (;;) {
    let start: number
    if (startsWith(bytes, at, end, PLAIN_ITEM)) start = at + PLAIN_ITEM.length
    else if (startsWith(bytes, at, end, PRESERVED_ITEM)) start = at + PRESERVED_ITEM.length
    else return at
    let high = false
    let lt = start
    for (; lt < end; lt++) {
      const b = bytes[lt]!
      if (b === LT) break
      if (b < SPACE) {
        if (b !== TAB && b !== LF) return at
      } else if (b >= 0x80) high = true
      else if (b === AMP || (b === UNDERSCORE && bytes[lt + 1] === X)) return at
    }
    if (lt - start > maxBytes || !startsWith(bytes, lt, end, ITEM_END)) return at
    if (high && !isUtf8(bytes.subarray(start, lt))) return at
    strings.addBytes(bytes, start, lt)
    checkSize()
    at = lt + ITEM_END.length
  }
}
