/**
 * Reading the shared-strings part (`xl/sharedStrings.xml`) into a SharedStringTable (string-table.ts), which keeps
 * memory fixed by spilling to the spool disk, and the text rules shared by shared and inline strings. Limits on
 * the table's size keep a hostile workbook from filling the disk; past them the table fails with XLSX_TOO_LARGE.
 */
import type { Readable } from 'node:stream'
import { DataError, WorkbookError } from '../core/errors.ts'
import { SharedStringTable, type StringTableOptions } from './string-table.ts'
import { parseXmlEntry, type XmlOptions } from './xml.ts'

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

/** Reads the part; a string longer than `maxFieldBytes` could never fill a cell, so it fails as LIMIT_EXCEEDED. */
export const readSharedStrings = async (
  entry: Readable,
  tableId: string,
  options: StringTableOptions,
  xml: XmlOptions & { readonly maxFieldBytes: number },
): Promise<SharedStringTable> => {
  const strings = new SharedStringTable(options)
  const item = new StringItemText(
    xml.maxFieldBytes,
    () =>
      new DataError('LIMIT_EXCEEDED', {
        tableId,
        reason: `shared string ${strings.count + 1} of the workbook is over limits.maxFieldBytes (${xml.maxFieldBytes})`,
        hint: 'the previous data is kept; raise limits.maxFieldBytes in the configuration if a cell really is that long, or fix the saved table',
      }),
  )
  try {
    await parseXmlEntry(
      entry,
      PART,
      tableId,
      {
        open: (tag) => item.open(tag.name),
        text: (text) => item.text(text),
        close: (name) => {
          item.close(name)
          if (name !== 'si') return
          strings.add(unescapeText(item.take()))
          if (strings.byteLength > MAX_SHARED_STRING_BYTES || strings.count > MAX_SHARED_STRINGS) {
            throw new WorkbookError('XLSX_TOO_LARGE', {
              tableId,
              reason: `the workbook's shared strings exceed ${MAX_SHARED_STRINGS.toLocaleString('en-US')} strings or ${MAX_SHARED_STRING_BYTES / 2 ** 30} GiB`,
            })
          }
        },
        where: () => `shared string ${strings.count + 1}`,
      },
      { maxPendingChars: xml.maxFieldBytes, signal: xml.signal },
    )
    strings.finish()
  } catch (error) {
    strings.close()
    throw error
  }
  return strings
}
