/**
 * The attributes of the tag the scanner (xml-scanner.ts) has just read: names as ranges of the scanned bytes,
 * values too when they hold nothing to decode (the usual `r="C7"`), otherwise decoded (entities, whitespace) into
 * a buffer of their own; no string is made for either.
 */
import { AMP, decodeAttribute, grow, LT, SPACE } from './xml-bytes.ts'

/** Int32 slots per attribute in the ranges. */
const RANGE = 5

/** A result of add(): the tag names the attribute twice. */
export const DUPLICATE_ATTRIBUTE = -10

export class TagAttributes {
  /** Name start, name end, value start, value end of each attribute, and 1 when the value was decoded. */
  #ranges = new Int32Array(80)
  #count = 0
  #values: Uint8Array = new Uint8Array(256)
  #used = 0
  #names: Uint8Array = this.#values

  /** The bytes that hold attribute `i`'s value, from valueStart(i) to valueEnd(i). */
  valueBytes(i: number): Uint8Array {
    return this.#ranges[i * RANGE + 4] === 1 ? this.#values : this.#names
  }

  /** Starts a tag whose names are in `buffer`. */
  reset(buffer: Uint8Array): void {
    this.#names = buffer
    this.#count = 0
    this.#used = 0
  }

  /** The index of the attribute with the one-byte name `name` (unprefixed, as `r`, `s`, `t`), or -1. */
  find(name: number): number {
    const ranges = this.#ranges
    for (let i = 0; i < this.#count; i++) {
      const at = i * RANGE
      if (ranges[at + 1]! - ranges[at]! === 1 && this.#names[ranges[at]!] === name) return i
    }
    return -1
  }

  valueStart(i: number): number {
    return this.#ranges[i * RANGE + 2]!
  }

  valueEnd(i: number): number {
    return this.#ranges[i * RANGE + 3]!
  }

  /** Adds the attribute named `names[name..nameEnd)` with the value `names[start..end)`; 0, or a failure. */
  add(name: number, nameEnd: number, start: number, end: number): number {
    const names = this.#names
    const length = nameEnd - name
    let ranges = this.#ranges
    for (let a = 0; a < this.#count * RANGE; a += RANGE) {
      if (ranges[a + 1]! - ranges[a]! !== length) continue
      let k = 0
      while (k < length && names[ranges[a]! + k] === names[name + k]) k++
      if (k === length) return DUPLICATE_ATTRIBUTE
    }
    // A value without entities, "<" or characters below a space (whitespace to normalize, or not allowed) is
    // kept where it was read.
    let plain = true
    for (let i = start; i < end && plain; i++) {
      const b = names[i]!
      plain = b > LT || (b >= SPACE && b !== AMP && b !== LT)
    }
    let valueStart = start
    let valueEnd = end
    if (!plain) {
      if (this.#used + (end - start) > this.#values.length) {
        this.#values = grow(this.#values, this.#used + end - start, this.#used)
      }
      valueStart = this.#used
      valueEnd = decodeAttribute(names, start, end, this.#values, valueStart)
      if (valueEnd < 0) return valueEnd
      this.#used = valueEnd
    }
    const at = this.#count * RANGE
    if (at + RANGE > ranges.length) {
      ranges = new Int32Array(ranges.length * 2)
      ranges.set(this.#ranges)
      this.#ranges = ranges
    }
    ranges[at] = name
    ranges[at + 1] = nameEnd
    ranges[at + 2] = valueStart
    ranges[at + 3] = valueEnd
    ranges[at + 4] = plain ? 0 : 1
    this.#count++
    return 0
  }
}
