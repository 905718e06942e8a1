/**
 * Dictionary encoding of one column chunk, built over its PLAIN bytes: no JS value per cell, fixed-width values
 * hashed by their words and byte arrays by their bytes. Whether the chunk is written with it is measured after the
 * codec (encoding-choice.ts); it is given up early only where it cannot win: past parquet-mr's default dictionary
 * page size, or with nearly every value distinct.
 */
import { ScratchBuffer } from './chunk-scratch.ts'
import type { ChunkValues } from './chunk-values.ts'

/**
 * A dictionary's arrays live in buffers reused from chunk to chunk (as the chunk's values do, chunk-scratch.ts):
 * fresh ones were about 3 MiB a row group on the bench's tables, external memory that outlived scavenges and
 * waited for a full collection. So a Dictionary is valid until the next one is built, which is enough: the chunk
 * is written, synchronously, before the next column's dictionary is built.
 */
const scratch = {
  slots: new ScratchBuffer(),
  entries: new ScratchBuffer(),
  hashes: new ScratchBuffer(),
  indexes: new ScratchBuffer(),
  page: new ScratchBuffer(),
} as const

const int32s = (buffer: ScratchBuffer, length: number, zeroed = false): Int32Array<ArrayBuffer> =>
  new Int32Array(buffer.take(4 * length, zeroed), 0, length)

export interface Dictionary {
  /** Distinct values. */
  readonly size: number
  /** The dictionary page's values, PLAIN-encoded in index order. */
  readonly page: Uint8Array
  /** The dictionary index of each non-NULL value. */
  readonly indexes: Int32Array
  /** Bits per index. */
  readonly bitWidth: number
}

/** parquet-mr's default `parquet.dictionary.page.size`: beyond it a dictionary falls back to plain. */
export const MAX_DICTIONARY_BYTES = 1024 * 1024
/**
 * Values between checks on the dictionary's size. Only its size is checked before the chunk's end: the share of
 * distinct values seen so far was the test once, and it gave up on values that repeat only over the whole chunk
 * (drawn at random from tens of thousands, or cycling through thousands in order: every value of the first
 * blocks new), where the dictionary wins (bench/shapes.ts). A column of distinct values is then hashed until its
 * dictionary passes MAX_DICTIONARY_BYTES, at most a MiB of values a chunk.
 */
const CHECK_EVERY = 4096
/**
 * Distinct values per value beyond which a finished dictionary is given up. Higher than plain-size accounting would
 * give: a column of some ten thousand e-mail addresses starts out nearly all distinct and ends up a dictionary a
 * third the size of its compressed plain values (measured on the bench's inventory table).
 */
const MAX_DISTINCT_SHARE = 0.9
/** Entries up to this many bytes are copied into the page by a JS loop rather than a subarray and a native copy. */
const SHORT_VALUE = 64

const bitWidthOf = (maxIndex: number): number => (maxIndex <= 0 ? 0 : 32 - Math.clz32(maxIndex))

/**
 * FNV-1a over a byte range, four bytes a step, then mixed so the low bits (the slot) depend on every byte. Only
 * where entries sit in the table depends on it, never their order or the page: a step per byte cost a sixth of
 * the dictionary's time.
 */
const hashRange = (bytes: Uint8Array, words: DataView, start: number, end: number): number => {
  let hash = 0x811c9dc5
  let i = start
  // The same little-endian word as four loads and shifts would make, in one read.
  for (; i + 4 <= end; i += 4) hash = Math.imul(hash ^ words.getInt32(i, true), 0x01000193)
  for (; i < end; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193)
  hash = Math.imul(hash ^ (hash >>> 15), 0x2c1b3c6d)
  return hash ^ (hash >>> 12)
}

const equalRanges = (bytes: Uint8Array, words: DataView, a: number, aEnd: number, b: number, bEnd: number): boolean => {
  const length = aEnd - a
  if (length !== bEnd - b) return false
  let i = 0
  for (; i + 4 <= length; i += 4) if (words.getInt32(a + i, true) !== words.getInt32(b + i, true)) return false
  for (; i < length; i++) if (bytes[a + i] !== bytes[b + i]) return false
  return true
}

/** The dictionary of `values`, or undefined where it is too large or nearly every value is distinct. */
export const buildDictionary = (values: ChunkValues): Dictionary | undefined => {
  const { count, plain, starts, width } = values
  if (values.hint === 'constant') {
    return { size: 1, page: plain, indexes: int32s(scratch.indexes, count, true), bitWidth: 0 }
  }
  if (count === 0 || values.hint === 'sequence' || values.hint === 'hash' || (width === 0 && starts === undefined)) {
    return undefined
  }
  const words = width === 0 ? undefined : new Int32Array(plain.buffer, plain.byteOffset, (count * width) / 4)
  const perValue = width / 4
  const view = new DataView(plain.buffer, plain.byteOffset, plain.byteLength)
  // Where value i starts and ends in `plain` (byte arrays keep their length prefix: the dictionary page copies it).
  const startOf = (i: number) => (starts ? starts[i]! : i * width)
  const endOf = (i: number) => (starts ? starts[i + 1]! : (i + 1) * width)

  let capacity = 1024
  let slots = int32s(scratch.slots, capacity).fill(-1)
  /** The value index of each dictionary entry's first occurrence. */
  let entries = int32s(scratch.entries, 256)
  let hashes = int32s(scratch.hashes, 256)
  const indexes = int32s(scratch.indexes, count)
  let size = 0
  let dictionaryBytes = 0

  const grow = () => {
    capacity *= 2
    slots = int32s(scratch.slots, capacity).fill(-1)
    for (let e = 0; e < size; e++) {
      let slot = hashes[e]! & (capacity - 1)
      while (slots[slot] !== -1) slot = (slot + 1) & (capacity - 1)
      slots[slot] = e
    }
  }

  for (let i = 0; i < count; i++) {
    // Inline rather than through startOf/endOf, which a profile showed called, not inlined, per value.
    const start = starts ? starts[i]! : i * width
    const end = starts ? starts[i + 1]! : start + width
    let hash: number
    if (words === undefined) hash = hashRange(plain, view, start + 4, end)
    else {
      const low = words[i * perValue]!
      const high = perValue === 2 ? words[i * perValue + 1]! : 0
      const mixed = Math.imul(low ^ Math.imul(high, 0x27d4eb2d), 0x9e3779b1)
      hash = mixed ^ (mixed >>> 15)
    }
    let slot = hash & (capacity - 1)
    let entry = slots[slot]!
    while (entry !== -1) {
      const first = entries[entry]!
      if (hashes[entry] === hash) {
        if (starts) {
          if (equalRanges(plain, view, starts[first]!, starts[first + 1]!, start, end)) break
        } else if (
          words![first * perValue] === words![i * perValue] &&
          (perValue === 1 || words![first * perValue + 1] === words![i * perValue + 1])
        ) {
          break
        }
      }
      slot = (slot + 1) & (capacity - 1)
      entry = slots[slot]!
    }
    if (entry === -1) {
      entry = size++
      if (entry === entries.length) {
        entries = grown(scratch.entries, entries)
        hashes = grown(scratch.hashes, hashes)
      }
      entries[entry] = i
      hashes[entry] = hash
      slots[slot] = entry
      dictionaryBytes += end - start
      if (size * 2 > capacity) grow()
    }
    indexes[i] = entry
    if ((i + 1) % CHECK_EVERY === 0 && dictionaryBytes > MAX_DICTIONARY_BYTES) return undefined
  }
  if (dictionaryBytes > MAX_DICTIONARY_BYTES || size > MAX_DISTINCT_SHARE * count) return undefined
  const page = new Uint8Array(scratch.page.take(dictionaryBytes, false), 0, dictionaryBytes)
  for (let e = 0, at = 0; e < size; e++) {
    const first = entries[e]!
    const start = startOf(first)
    const end = endOf(first)
    // A subarray per entry was a sixth of the main thread's allocations; entries are mostly a few bytes.
    if (end - start > SHORT_VALUE) page.set(plain.subarray(start, end), at)
    else for (let b = start; b < end; b++) page[at + b - start] = plain[b]!
    at += end - start
  }
  return { size, page, indexes, bitWidth: bitWidthOf(size - 1) }
}

/** `array` at twice its length in `buffer`; its values are copied only when the buffer had to grow. */
const grown = (buffer: ScratchBuffer, array: Int32Array): Int32Array<ArrayBuffer> => {
  const larger = int32s(buffer, array.length * 2)
  if (larger.buffer !== array.buffer) larger.set(array)
  return larger
}
