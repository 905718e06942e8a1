/**
 * The attributes of the tag the scanner (xml-scanner.ts) has just read: names as ranges of the scanned bytes,
 * values decoded (entities, whitespace) into a buffer of their own, so that no string is made for either.
 */
import { decodeAttribute, grow } from './xml-bytes.ts'

/** A result of add(): the tag names the attribute twice. */
export const DUPLICATE_ATTRIBUTE = -10

export class TagAttributes {
  /** Name start, name end, value start, value end of each attribute. */
  #ranges = new Int32Array(64)
  #count = 0
  #values: Uint8Array = new Uint8Array(256)
  #used = 0
  #names: Uint8Array = this.#values

  /** The decoded values, for the ranges valueStart(i) to valueEnd(i). */
  get values(): Uint8Array {
    return this.#values
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
      const at = i * 4
      if (ranges[at + 1]! - ranges[at]! === 1 && this.#names[ranges[at]!] === name) return i
    }
    return -1
  }

  valueStart(i: number): number {
    return this.#ranges[i * 4 + 2]!
  }

  valueEnd(i: number): number {
    return this.#ranges[i * 4 + 3]!
  }

  /** Adds the attribute named `names[name..nameEnd)` with the value `names[start..end)`; 0, or a failure. */
  add(name: number, nameEnd: number, start: number, end: number): number {
    const names = this.#names
    const length = nameEnd - name
    let ranges = this.#ranges
    for (let a = 0; a < this.#count * 4; a += 4) {
      if (ranges[a + 1]! - ranges[a]! !== length) continue
      let k = 0
      while (k < length && names[ranges[a]! + k] === names[name + k]) k++
      if (k === length) return DUPLICATE_ATTRIBUTE
    }
    if (this.#used + (end - start) > this.#values.length) {
      this.#values = grow(this.#values, this.#used + end - start, this.#used)
    }
    const valueStart = this.#used
    const out = decodeAttribute(names, start, end, this.#values, valueStart)
    if (out < 0) return out
    this.#used = out
    const at = this.#count * 4
    if (at + 4 > ranges.length) {
      ranges = new Int32Array(ranges.length * 2)
      ranges.set(this.#ranges)
      this.#ranges = ranges
    }
    ranges[at] = name
    ranges[at + 1] = nameEnd
    ranges[at + 2] = valueStart
    ranges[at + 3] = out
    this.#count++
    return 0
  }
}
