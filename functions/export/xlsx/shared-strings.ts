/**
 * The shared-strings table, held in memory within a fixed budget: every string's UTF-8 bytes back to back in one
 * buffer and a 4-byte offset per string (no JS string per entry, whose header alone would double the cost), so a
 * cell costs a lookup and one short-lived byte string. A table larger than the budget fails with XLSX_TOO_LARGE
 * rather than growing memory with the input; such a table is better read from the CSV.
 */
import type { Readable } from 'node:stream'
import { WorkbookError } from '../errors.ts'
import { parseXmlEntry } from './xml.ts'

/** UTF-8 bytes of all shared strings together. */
export const MAX_SHARED_STRING_BYTES = 128 * 1024 * 1024
/** Count of shared strings (4 bytes of offset each: 32 MiB at most). */
export const MAX_SHARED_STRINGS = 8_000_000
const INITIAL_BYTES = 64 * 1024
const INITIAL_STRINGS = 4096

/** The shared strings, looked up by index as byte strings (one character per UTF-8 byte). */
export class SharedStrings {
  #bytes: Buffer = Buffer.allocUnsafe(INITIAL_BYTES)
  #ends = new Uint32Array(INITIAL_STRINGS)
  #used = 0
  #count = 0

  get count(): number {
    return this.#count
  }

  get byteLength(): number {
    return this.#used
  }

  add(text: string): void {
    const length = Buffer.byteLength(text, 'utf8')
    if (this.#used + length > this.#bytes.length) this.#bytes = grow(this.#bytes, this.#used + length)
    this.#bytes.write(text, this.#used, 'utf8')
    this.#used += length
    if (this.#count === this.#ends.length) {
      const ends = new Uint32Array(this.#ends.length * 2)
      ends.set(this.#ends)
      this.#ends = ends
    }
    this.#ends[this.#count++] = this.#used
  }

  /** The string at `index` as a byte string, or undefined when there is none. */
  at(index: number): string | undefined {
    if (!(index >= 0 && index < this.#count)) return undefined
    const start = index === 0 ? 0 : this.#ends[index - 1]!
    return this.#bytes.toString('latin1', start, this.#ends[index]!)
  }
}

const grow = (bytes: Buffer, needed: number): Buffer => {
  const grown = Buffer.allocUnsafe(Math.max(needed, bytes.length * 2))
  bytes.copy(grown)
  return grown
}

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

export const readSharedStrings = async (entry: Readable, tableId: string): Promise<SharedStrings> => {
  const strings = new SharedStrings()
  const item = new StringItemText()
  await parseXmlEntry(entry, 'shared strings (xl/sharedStrings.xml)', tableId, {
    open: (tag) => item.open(tag.name),
    text: (text) => item.text(text),
    close: (name) => {
      item.close(name)
      if (name !== 'si') return
      strings.add(unescapeText(item.take()))
      if (strings.byteLength > MAX_SHARED_STRING_BYTES || strings.count > MAX_SHARED_STRINGS) {
        throw new WorkbookError('XLSX_TOO_LARGE', {
          tableId,
          reason: `the workbook's shared strings exceed ${MAX_SHARED_STRINGS.toLocaleString('en-US')} strings or ${MAX_SHARED_STRING_BYTES / 2 ** 20} MiB, the most held in memory`,
        })
      }
    },
  })
  return strings
}
