/**
 * CSV fields as bytes, for a date read back from its Parquet (parquet-text.ts): each stored value in the spelling
 * the path reads back as the same value (`cellText`), quoted only where it must be, written straight into the text
 * being made, with no string per cell for text, instants and the common numbers.
 */
import { isUtf8 } from 'node:buffer'
import { civilFromDays } from '../core/civil-date.ts'
import type { ColumnType } from '../core/constants.ts'

const QUOTE = 0x22
/** Bytes a field cannot hold unquoted: the delimiter, the quote, CR and LF. */
const SPECIAL = new Uint8Array(256)
for (const byte of [0x2c, QUOTE, 0x0d, 0x0a]) SPECIAL[byte] = 1
const utf8 = new TextDecoder()
/** Bytes of CSV text handed on at a time. */
export const CHUNK_BYTES = 1024 * 1024
/**
 * Buffers the chunks are written into in turn. A chunk made fresh each time lived long enough (filled over many
 * slices of rows) to reach V8's old generation, where 100 dead MiB a date of a 100 MB table waited for a full
 * collection; every reader of the body is done with a chunk once the next two are read (the parse thread's pump
 * copies each chunk into its blocks; csv-parse keeps at most an unfinished record's bytes until the next chunk).
 */
const RING = 3

/** A value as the path reads it back: decimal integers, doubles with a point, ISO dates and instants. */
export const cellText = (value: unknown, type: ColumnType): string | undefined => {
  if (value === null || value === undefined) return undefined
  if (typeof value === 'bigint') return String(value)
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (value instanceof Date) return type === 'date' ? value.toISOString().slice(0, 10) : value.toISOString()
  if (typeof value === 'number') {
    if (Object.is(value, -0)) return '-0.0'
    const text = String(value)
    // `1e+21` and `5e-7` are not doubles to the path (values.ts): the mantissa needs its point.
    const [mantissa, exponent] = text.split('e')
    if (exponent === undefined) return text
    return `${mantissa!.includes('.') ? mantissa : `${mantissa}.0`}e${exponent}`
  }
  return String(value)
}

/** Bytes of CSV text, growing as a row needs: each full chunk is handed on whole. */
export class TextOut {
  bytes: Buffer = Buffer.allocUnsafeSlow(CHUNK_BYTES + 64 * 1024)
  used = 0
  readonly #ring: (Buffer | undefined)[] = []
  #turn = 0

  room(size: number): void {
    if (this.used + size <= this.bytes.length) return
    const grown = Buffer.allocUnsafeSlow(Math.max(2 * this.bytes.length, this.used + size))
    this.bytes.copy(grown, 0, 0, this.used)
    this.bytes = grown
  }

  /** `text` as one field; nothing for ''. */
  textField(text: string): void {
    if (text.length === 0) return
    this.room(text.length)
    const out = this.bytes
    const at = this.used
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i)
      // Numbers and booleans are ASCII and plain; anything else goes through UTF-8 as a whole.
      if (code >= 0x80 || SPECIAL[code] === 1) {
        const bytes = Buffer.from(text, 'utf8')
        this.field(bytes, 0, bytes.length)
        return
      }
      out[at + i] = code
    }
    this.used = at + text.length
  }

  /**
   * `length` bytes of `bytes` from `start` as one field: as they are, or quoted with each quote doubled when they
   * hold a delimiter, a quote or a line break (fewer bytes for csv-parse than quoting every field). Returns the
   * bytes ORed together (0x80 set: not ASCII).
   */
  field(bytes: Uint8Array, start: number, length: number): number {
    if (length === 0) return 0
    this.room(length)
    const out = this.bytes
    const at = this.used
    let all = 0
    for (let i = 0; i < length; i++) {
      const byte = bytes[start + i]!
      if (SPECIAL[byte] === 1) return this.#quoted(bytes, start, length)
      all |= byte
      out[at + i] = byte
    }
    this.used = at + length
    return all
  }

  #quoted(bytes: Uint8Array, start: number, length: number): number {
    this.room(2 * length + 2)
    const out = this.bytes
    let at = this.used
    let all = 0
    out[at++] = QUOTE
    for (let i = start; i < start + length; i++) {
      const byte = bytes[i]!
      all |= byte
      out[at++] = byte
      if (byte === QUOTE) out[at++] = QUOTE
    }
    out[at++] = QUOTE
    this.used = at
    return all
  }

  byte(byte: number): void {
    this.room(1)
    this.bytes[this.used++] = byte
  }

  /**
   * The text so far, as one chunk; the next chunk is written into the next of RING buffers, so a chunk's bytes
   * are valid until RING - 1 more chunks are taken.
   */
  take(): Buffer {
    const chunk = this.bytes.subarray(0, this.used)
    this.#ring[this.#turn] = this.bytes
    this.#turn = (this.#turn + 1) % RING
    const next = this.#ring[this.#turn]
    this.bytes =
      next !== undefined && next.length >= CHUNK_BYTES + 64 * 1024
        ? next
        : Buffer.allocUnsafeSlow(CHUNK_BYTES + 64 * 1024)
    this.used = 0
    return chunk
  }
}

/** First and last instant (ms) `Date.prototype.toISOString` writes with a four-digit year. */
const FIRST_FOUR_DIGIT_MS = -62_167_219_200_000
const LAST_FOUR_DIGIT_MS = 253_402_300_799_999
export const DAY_MS = 86_400_000

/** Scratch for an instant's text: `YYYY-MM-DDTHH:MM:SS.sssZ`, and the day its date part is of. */
const ISO = Buffer.alloc(24)
let isoDays = Number.NaN
const put = (at: number, value: number, digits: number) => {
  for (let i = digits - 1; i >= 0; i--, value = Math.floor(value / 10)) ISO[at + i] = 0x30 + (value % 10)
}

/** The instant `ms` as `new Date(ms).toISOString()` writes it (its date alone for a date column), quoted. */
export const writeInstant = (out: TextOut, ms: number, dateOnly: boolean): void => {
  if (!(ms >= FIRST_FOUR_DIGIT_MS && ms <= LAST_FOUR_DIGIT_MS) || !Number.isInteger(ms)) {
    const text = new Date(ms).toISOString()
    out.textField(dateOnly ? text.slice(0, 10) : text)
    return
  }
  const days = Math.floor(ms / DAY_MS)
  if (days !== isoDays) {
    const civil = civilFromDays(days)
    put(0, Math.floor(civil / 10_000), 4)
    ISO[4] = 0x2d
    put(5, Math.floor(civil / 100) % 100, 2)
    ISO[7] = 0x2d
    put(8, civil % 100, 2)
    isoDays = days
  }
  if (dateOnly) {
    out.field(ISO, 0, 10)
    return
  }
  const inDay = ms - days * DAY_MS
  ISO[10] = 0x54
  put(11, Math.floor(inDay / 3_600_000), 2)
  ISO[13] = 0x3a
  put(14, Math.floor(inDay / 60_000) % 60, 2)
  ISO[16] = 0x3a
  put(17, Math.floor(inDay / 1000) % 60, 2)
  ISO[19] = 0x2e
  put(20, inDay % 1000, 3)
  ISO[23] = 0x5a
  out.field(ISO, 0, 24)
}

/**
 * Text as hyparquet's decoder made it: one that is not valid UTF-8 with replacement characters, and one that starts
 * with a byte-order mark without it (a TextDecoder drops a leading BOM). ASCII, the most of it, needs no check.
 */
export const writeText = (out: TextOut, bytes: Uint8Array, start: number, length: number): void => {
  const mark = out.used
  if (out.field(bytes, start, length) < 0x80) return
  const text = bytes.subarray(start, start + length)
  const bom = length >= 3 && bytes[start] === 0xef && bytes[start + 1] === 0xbb && bytes[start + 2] === 0xbf
  if (!bom && isUtf8(text)) return
  out.used = mark
  out.textField(utf8.decode(text))
}
