/**
 * The shared-strings table, held in memory within a fixed budget: each string once, as the UTF-8 byte string
 * (one character per byte) that record batches copy, so a cell costs a lookup. A table larger than the budget fails
 * with XLSX_TOO_LARGE rather than growing memory with the input; such a table is better read from the CSV.
 */
import type { Readable } from 'node:stream'
import { WorkbookError } from '../errors.ts'
import { parseXmlEntry } from './xml.ts'

/** UTF-8 bytes of all shared strings together; with their headers they take about this much heap again at most. */
export const MAX_SHARED_STRING_BYTES = 64 * 1024 * 1024
/** Count of shared strings (each costs a slot and a string header even when empty). */
export const MAX_SHARED_STRINGS = 2_000_000

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

/** A copy of its own: the parser's strings may be slices that keep a whole chunk of XML alive. */
const ownByteString = (text: string): string => Buffer.from(unescapeText(text), 'utf8').toString('latin1')

/**
 * Collects the text of a string item (`<si>` or a cell's `<is>`): plain `<t>` or rich-text runs joined, leaving out
 * phonetic guides (`<rPh>`), which are reading aids and not part of the text.
 */
export class StringItemText {
  #parts: string[] = []
  #inText = false
  #inPhonetic = false

  open(name: string): void {
    if (name === 't') this.#inText = !this.#inPhonetic
    else if (name === 'rPh') this.#inPhonetic = true
  }

  text(text: string): void {
    if (this.#inText) this.#parts.push(text)
  }

  close(name: string): void {
    if (name === 't') this.#inText = false
    else if (name === 'rPh') this.#inPhonetic = false
  }

  /** The item's text so far, and a fresh start. */
  take(): string {
    const text = this.#parts.length === 1 ? this.#parts[0]! : this.#parts.join('')
    this.#parts = []
    return text
  }
}

export const readSharedStrings = async (entry: Readable, tableId: string): Promise<readonly string[]> => {
  const strings: string[] = []
  const item = new StringItemText()
  let bytes = 0
  await parseXmlEntry(entry, 'shared strings (xl/sharedStrings.xml)', tableId, {
    open: (tag) => item.open(tag.name),
    text: (text) => item.text(text),
    close: (name) => {
      item.close(name)
      if (name !== 'si') return
      const text = ownByteString(item.take())
      bytes += text.length
      strings.push(text)
      if (bytes > MAX_SHARED_STRING_BYTES || strings.length > MAX_SHARED_STRINGS) {
        throw new WorkbookError('XLSX_TOO_LARGE', {
          tableId,
          reason: `the workbook's shared strings exceed ${MAX_SHARED_STRINGS.toLocaleString('en-US')} strings or ${MAX_SHARED_STRING_BYTES / 2 ** 20} MiB, the most held in memory`,
        })
      }
    },
  })
  return strings
}
