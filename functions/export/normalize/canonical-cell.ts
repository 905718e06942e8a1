/**
 * A cell as the row fingerprint hashes it: where two notations stand for one value, the one notation, so the same
 * values give the same fingerprint whether they came from the CSV or from the workbook (whose typed cells are read
 * as `YYYY-MM-DD HH:MM:SS` and `true`/`false`, xlsx/cells.ts). Two kinds of value have several notations:
 *   - an instant (any TIMESTAMP form of values.ts, its offset applied) is `YYYY-MM-DDTHH:MM:SSZ` in UTC, with
 *     `.sss` before the `Z` when it has milliseconds: the form the service's CSV writes, so a CSV that writes
 *     instants so keeps the fingerprints it always had;
 *   - a boolean (`true` or `false` in any letter case) is `true` or `false`.
 * Every other cell is hashed as its bytes.
 */
import { civilFromDays } from '../core/civil-date.ts'
import { booleanAt, parsed, timestampAt } from './values.ts'

/** The longest notation written: `YYYY-MM-DDTHH:MM:SS.sssZ`. */
export const MAX_CANONICAL_BYTES = 24
const T = 0x54
const Z = 0x5a
const DOT = 0x2e
const ZERO = 0x30
const LOWER_A = 0x61
const [LOWER_T_BYTE, LOWER_F_BYTE] = [0x74, 0x66]
const MINUS = 0x2d
const COLON = 0x3a
/** TIMESTAMP's shortest form, `YYYY-MM-DD HH:MM`; its longest has 9 fraction digits and a `+HH:MM` offset. */
const [MIN_TIMESTAMP, MAX_TIMESTAMP] = [16, 35]

/** Whether the cell is already `YYYY-MM-DDTHH:MM:SSZ` or `...:SS.sssZ` with milliseconds (if it is an instant). */
const isCanonicalInstantShape = (bytes: Uint8Array, start: number, end: number): boolean => {
  if (bytes[start + 10] !== T || bytes[end - 1] !== Z) return false
  const length = end - start
  if (length === 20) return true
  return (
    length === 24 &&
    bytes[start + 19] === DOT &&
    !(bytes[start + 20] === ZERO && bytes[start + 21] === ZERO && bytes[start + 22] === ZERO)
  )
}

/** Whether every byte is a lower-case letter or above (of a cell that spells a boolean in some letter case). */
const isLower = (bytes: Uint8Array, start: number, end: number): boolean => {
  for (let i = start; i < end; i++) if (bytes[i]! < LOWER_A) return false
  return true
}

/**
 * Whether the cell may be an instant or a boolean spelt other than its one notation: a few bytes looked at, so
 * the cells that are neither, and the CSV's `true` and `...Z` that are already in it, cost next to nothing.
 */
export const mayRespell = (bytes: Uint8Array, start: number, end: number): boolean => {
  const length = end - start
  // A boolean spelt otherwise starts with a T or an F and has an upper-case letter.
  if (length === 4) return (bytes[start]! | 0x20) === LOWER_T_BYTE && !isLower(bytes, start, end)
  if (length === 5) return (bytes[start]! | 0x20) === LOWER_F_BYTE && !isLower(bytes, start, end)
  if (length < MIN_TIMESTAMP || length > MAX_TIMESTAMP || bytes[start + 4] !== MINUS || bytes[start + 13] !== COLON)
    return false
  return !(length === 20 && bytes[start + 10] === T && bytes[start + 19] === Z)
}

/**
 * Writes the one notation of the cell `bytes[start, end)` to `out` at `at` and returns its length, or returns -1
 * when the cell is to be hashed as it is (it is no instant or boolean, or is one in its one notation already).
 */
export const writeCanonicalCell = (bytes: Uint8Array, start: number, end: number, out: Buffer, at: number): number => {
  const length = end - start
  if (length === 4 || length === 5) {
    if (!booleanAt(bytes, start, end)) return -1
    // booleanAt matched the letters in any case: the cell is in its one notation when every letter is lower case.
    return isLower(bytes, start, end) ? -1 : out.write(parsed.value === 1 ? 'true' : 'false', at, 'latin1')
  }
  if (length < MIN_TIMESTAMP || length > MAX_TIMESTAMP) return -1
  if (isCanonicalInstantShape(bytes, start, end) || !timestampAt(bytes, start, end)) return -1
  return writeInstant(parsed.value, out, at)
}

const MS_PER_DAY = 86_400_000

/** Writes `n` as `width` ASCII digits at `at`. */
const writeDigits = (out: Buffer, at: number, n: number, width: number): void => {
  for (let i = width - 1; i >= 0; i--, n = Math.floor(n / 10)) out[at + i] = ZERO + (n % 10)
}

/**
 * `YYYY-MM-DDTHH:MM:SS[.sss]Z` of epoch milliseconds, written digit by digit: a Date and its ISO string per cell
 * cost more than hashing the row. Civil date from days by core/civil-date.ts (values.ts goes the
 * other way); TIMESTAMP's years are 1 to 9999, so four digits always do.
 */
const writeInstant = (ms: number, out: Buffer, at: number): number => {
  const days = Math.floor(ms / MS_PER_DAY)
  const inDay = ms - days * MS_PER_DAY
  const date = civilFromDays(days)
  const year = Math.floor(date / 10_000)
  const month = Math.floor(date / 100) % 100
  const day = date % 100
  writeDigits(out, at, year, 4)
  out[at + 4] = MINUS
  writeDigits(out, at + 5, month, 2)
  out[at + 7] = MINUS
  writeDigits(out, at + 8, day, 2)
  out[at + 10] = T
  writeDigits(out, at + 11, Math.floor(inDay / 3_600_000), 2)
  out[at + 13] = COLON
  writeDigits(out, at + 14, Math.floor(inDay / 60_000) % 60, 2)
  out[at + 16] = COLON
  writeDigits(out, at + 17, Math.floor(inDay / 1000) % 60, 2)
  const millis = inDay % 1000
  if (millis === 0) {
    out[at + 19] = Z
    return 20
  }
  out[at + 19] = DOT
  writeDigits(out, at + 20, millis, 3)
  out[at + 23] = Z
  return 24
}
