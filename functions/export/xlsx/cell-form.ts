/**
 * The form nearly every cell of a written worksheet takes, `<c r="C7" s="3" t="s"><v>12</v></c>`, matched in the
 * bytes as one piece, so that sheet.ts can read such a cell without the scanner's tag, attribute and text steps
 * (about two thirds of the reading thread's CPU on the bench's worksheet). Anything else is left to the scanner.
 */
import { AMP, LF, LT, SPACE, TAB } from './xml-bytes.ts'

/**
 * Where plainCell() found the parts of a cell, in its `found` array, each end right after its start; a missing
 * attribute's start is -1.
 */
export const REFERENCE_START = 0
export const REFERENCE_END = 1
export const STYLE_START = 2
export const STYLE_END = 3
export const TYPE_START = 4
export const TYPE_END = 5
export const VALUE_START = 6
export const VALUE_END = 7
export const CELL_PARTS = 8

const QUOTE = 0x22
const GT = 0x3e
const SLASH = 0x2f
const LETTER_C = 0x63
const LETTER_V = 0x76

/** Whether `bytes[at..]` is ` name="`, the name one letter. */
const attributeStart = (bytes: Uint8Array, at: number, name: number): boolean =>
  bytes[at] === SPACE && bytes[at + 1] === name && bytes[at + 2] === 0x3d && bytes[at + 3] === QUOTE

/** The end of the quoted value from `at`, of at most `max` bytes of letters, digits or both; -1 otherwise. */
const valueEnd = (bytes: Uint8Array, at: number, end: number, max: number): number => {
  const stop = Math.min(end, at + max + 1)
  for (let i = at; i < stop; i++) {
    const b = bytes[i]!
    if (b === QUOTE) return i > at ? i : -1
    if (!((b >= 0x30 && b <= 0x39) || ((b | 0x20) >= 0x61 && (b | 0x20) <= 0x7a))) return -1
  }
  return -1
}

/**
 * Reads the optional attribute ` name="…"` (a value of up to nine letters or digits) at `bytes[at]` into
 * `found[slot]` (its start, -1 when absent) and `found[slot + 1]` (its end). Returns where the cell goes on, or -1
 * when the bytes are of another form.
 */
const optionalAttribute = (
  bytes: Uint8Array,
  at: number,
  end: number,
  name: number,
  found: Int32Array,
  slot: number,
): number => {
  found[slot] = -1
  if (!attributeStart(bytes, at, name)) return at
  const close = valueEnd(bytes, at + 4, end, 9)
  if (close < 0) return -1
  found[slot] = at + 4
  found[slot + 1] = close
  return close + 1
}

/**
 * Matches `<c r="…"[ s="…"][ t="…"]><v>text</v></c>` at `bytes[at]`, whole before `end`: attributes in that order,
 * one space before each, double quotes, values of letters and digits only (a reference of up to ten, a style or a
 * type of up to nine), and text without an entity, a CR or a character XML does not allow, of at most `maxBytes`.
 * Fills `found` and returns the position after `</c>`; -1 when the bytes are of any other form.
 */
export const plainCell = (bytes: Uint8Array, at: number, end: number, maxBytes: number, found: Int32Array): number => {
  if (bytes[at + 1] !== LETTER_C || !attributeStart(bytes, at + 2, 0x72)) return -1
  let i = at + 6
  const close = valueEnd(bytes, i, end, 10)
  if (close < 0) return -1
  found[REFERENCE_START] = i
  found[REFERENCE_END] = close
  i = optionalAttribute(bytes, close + 1, end, 0x73, found, STYLE_START)
  if (i < 0) return -1
  i = optionalAttribute(bytes, i, end, 0x74, found, TYPE_START)
  if (i < 0) return -1
  if (bytes[i] !== GT || bytes[i + 1] !== LT || bytes[i + 2] !== LETTER_V || bytes[i + 3] !== GT) return -1
  const start = i + 4
  const stop = Math.min(end, start + maxBytes + 1)
  for (i = start; i < stop; i++) {
    const b = bytes[i]!
    if (b === LT) break
    if ((b < SPACE && b !== TAB && b !== LF) || b === AMP) return -1
  }
  if (i >= stop || i + 8 > end) return -1
  if (bytes[i + 1] !== SLASH || bytes[i + 2] !== LETTER_V || bytes[i + 3] !== GT || bytes[i + 4] !== LT) return -1
  if (bytes[i + 5] !== SLASH || bytes[i + 6] !== LETTER_C || bytes[i + 7] !== GT) return -1
  found[VALUE_START] = start
  found[VALUE_END] = i
  return i + 8
}
