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
import { booleanAt, parsed, timestampAt } from './values.ts'

/** The longest notation written: `YYYY-MM-DDTHH:MM:SS.sssZ`. */
export const MAX_CANONICAL_BYTES = 24
const T = 0x54
const Z = 0x5a
const DOT = 0x2e
const ZERO = 0x30
const LOWER_A = 0x61
/** TIMESTAMP's shortest form, `YYYY-MM-DD HH:MM`; its longest has 9 fraction digits and a `+HH:MM` offset. */
const [MIN_TIMESTAMP, MAX_TIMESTAMP] = [16, 35]

/** Whether the cell is already `YYYY-MM-DDTHH:MM:SSZ` or `...:SS.sssZ` with milliseconds (if it is an instant). */
const isCanonicalInstantShape = (bytes: Uint8Array, start: number, end: number): boolean => {
  if (bytes[start + 10] !== T || bytes[end - 1] !== Z) return false
  const length = end - start
  if (length === 20) return true
  return length === 24 && bytes[start + 19] === DOT && !(bytes[start + 20] === ZERO && bytes[start + 21] === ZERO && bytes[start + 22] === ZERO)
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
    let lower = true
    for (let i = start; i < end; i++) lower &&= bytes[i]! >= LOWER_A
    return lower ? -1 : out.write(parsed.value === 1 ? 'true' : 'false', at, 'latin1')
  }
  if (length < MIN_TIMESTAMP || length > MAX_TIMESTAMP) return -1
  if (isCanonicalInstantShape(bytes, start, end) || !timestampAt(bytes, start, end)) return -1
  const iso = new Date(parsed.value).toISOString()
  return out.write(parsed.value % 1000 === 0 ? `${iso.slice(0, 19)}Z` : iso, at, 'latin1')
}
