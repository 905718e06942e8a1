/**
 * The bytes of a cell's value or a string item as the scanner hands them on, gathered in a buffer that grows as
 * needed and is reused from cell to cell, and what they hold: plain UTF-8 text, or escapes and invalid bytes that
 * need a decoded string to be dealt with.
 */
import { isUtf8 } from 'node:buffer'

/** A growable byte buffer for the text of the cell (or shared string) being read. */
export class CellBuffer {
  bytes = Buffer.allocUnsafe(256)
  length = 0
  /**
   * The text's length in UTF-16 code units, as the saxes reader bounded it while it grew: escapes and all, before
   * the cell's own text is checked in UTF-8 bytes.
   */
  units = 0

  clear(): void {
    this.length = 0
    this.units = 0
  }

  append(from: Uint8Array, start: number, end: number): void {
    let units = end - start
    for (let i = start; i < end; i++) {
      const b = from[i]!
      if (b >= 0x80) units -= (b & 0xc0) === 0x80 ? 1 : b >= 0xf0 ? -1 : 0
    }
    this.units += units
    const needed = this.length + end - start
    if (needed > this.bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(needed, this.bytes.length * 2))
      this.bytes.copy(grown, 0, 0, this.length)
      this.bytes = grown
    }
    if (end - start > 64) this.bytes.set(from.subarray(start, end), this.length)
    else for (let i = start; i < end; i++) this.bytes[this.length + i - start] = from[i]!
    this.length = needed
  }
}

/** The bytes hold at least one byte from 0x80 (and so may not be valid UTF-8). */
export const HIGH_BYTES = 1
/** The bytes hold `_x`, the start of a SpreadsheetML `_xHHHH_` escape. */
export const ESCAPES = 2

/** HIGH_BYTES and ESCAPES, as `bytes[0..length)` holds them. */
export const textTraits = (bytes: Uint8Array, length: number): number => {
  let traits = 0
  for (let i = 0; i < length; i++) {
    const b = bytes[i]!
    if (b >= 0x80) traits |= HIGH_BYTES
    else if (b === 0x5f && i + 1 < length && bytes[i + 1] === 0x78) traits |= ESCAPES
  }
  return traits
}

/** Whether `bytes[0..length)` is valid UTF-8 without escapes: text to be taken as its bytes. */
export const isPlainUtf8 = (bytes: Buffer, length: number): boolean => {
  const traits = textTraits(bytes, length)
  return (traits & ESCAPES) === 0 && ((traits & HIGH_BYTES) === 0 || isUtf8(bytes.subarray(0, length)))
}
