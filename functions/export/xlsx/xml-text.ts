/**
 * The text between a worksheet's tags, for the scanner (xml-scanner.ts): which characters XML allows in it, its
 * entities and line ends, and where a text cut short by the end of a chunk may stop for now.
 */
import { AMP, CR, DISALLOWED_CHARACTER, LF, NO_ENTITY, SEMI, SPACE, TAB, writeEntity } from './xml-bytes.ts'

/** A result of textShape(): the text goes on as it is. */
export const PLAIN_TEXT = 1
/** A result of textShape(): its entities (unless in CDATA) or line ends must be decoded first. */
export const ENCODED_TEXT = 0

/** PLAIN_TEXT, ENCODED_TEXT, or DISALLOWED_CHARACTER for a character XML does not allow in `buffer[start..end)`. */
export const textShape = (buffer: Uint8Array, start: number, end: number, entities: boolean): number => {
  let shape = PLAIN_TEXT
  for (let i = start; i < end; i++) {
    const b = buffer[i]!
    if (b < SPACE) {
      if (b !== TAB && b !== LF && b !== CR) return DISALLOWED_CHARACTER
      if (b === CR) shape = ENCODED_TEXT
    } else if (b === AMP && entities) shape = ENCODED_TEXT
  }
  return shape
}

/**
 * Checks text nobody reads as the text handed on is checked, its entities decoded into `scratch` and dropped:
 * 0, or a failure.
 */
export const checkText = (buffer: Uint8Array, start: number, end: number, scratch: Uint8Array): number => {
  for (let i = start; i < end; i++) {
    const b = buffer[i]!
    if (b < SPACE && b !== TAB && b !== LF && b !== CR) return DISALLOWED_CHARACTER
    if (b !== AMP) continue
    const semi = buffer.indexOf(SEMI, i)
    if (semi < 0 || semi > end) return NO_ENTITY
    const written = writeEntity(buffer, i + 1, semi, scratch, 0)
    if (written < 0) return written
    i = semi
  }
  return 0
}

/**
 * Where a text running past the chunk `buffer[start..end)` may stop for now: before an entity whose ";" is yet
 * to come, and before a CR whose LF may be.
 */
export const textSafeEnd = (buffer: Uint8Array, start: number, end: number): number => {
  let safe = end
  const amp = buffer.lastIndexOf(AMP, end - 1)
  if (amp >= start && buffer.indexOf(SEMI, amp) < 0) safe = amp
  if (safe > start && buffer[safe - 1] === CR) safe--
  return safe
}

/**
 * Decodes the text `buffer[start..end)` into `into` from 0: entities expanded (unless `entities` is false, as in
 * CDATA) and line ends normalized to LF. Returns the length, or a failure.
 */
export const decodeText = (
  buffer: Uint8Array,
  start: number,
  end: number,
  entities: boolean,
  into: Uint8Array,
): number => {
  let out = 0
  for (let i = start; i < end; i++) {
    const b = buffer[i]!
    if (b === AMP && entities) {
      const semi = buffer.indexOf(SEMI, i)
      if (semi < 0 || semi > end) return NO_ENTITY
      out = writeEntity(buffer, i + 1, semi, into, out)
      if (out < 0) return out
      i = semi
    } else if (b === CR) {
      into[out++] = LF
      if (buffer[i + 1] === LF) i++
    } else into[out++] = b
  }
  return out
}
