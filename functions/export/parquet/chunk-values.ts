/**
 * Convert stage: the cells of one CSV column, over the batches of a row group -> one column chunk's values in
 * Parquet's own PLAIN form (no JS value per cell), with the rows that hold a value and the chunk's min and max.
 * Cells are read with the same value definitions inference used. Inference guarantees every non-empty cell
 * converts; a cell that does not (possible only when the registry pins an older type) goes to the `__text`
 * companion column, or is a bug.
 */
import type { ColumnType } from '../core/constants.ts'
import { InternalError } from '../core/errors.ts'
import type { RecordBatch } from '../normalize/record-batch.ts'
import { bigintAt, booleanAt, dateAt, doubleAt, parsed, timestampAt } from '../normalize/values.ts'
import { chunkScratch } from './chunk-scratch.ts'

export type TypedColumnType = Exclude<ColumnType, 'string'>

/** A statistic as hyparquet-writer's footer takes it: bytes for BYTE_ARRAY, else the number (bigint beyond 2^53). */
type Bound = number | bigint | Uint8Array

/**
 * One column of a row group, encoded PLAIN. `plain` holds the `count` non-NULL values back to back as PLAIN
 * encodes them (little-endian numbers, length-prefixed byte arrays, or bits for booleans); `defined[row]` is 1
 * where the row has a value. How the chunk is written (dictionary, plain, delta) is column-chunk.ts's choice;
 * `hint` says what is known up front.
 */
export interface ChunkValues {
  readonly rows: number
  readonly defined: Uint8Array
  readonly count: number
  readonly plain: Uint8Array
  /** BYTE_ARRAY only: `count + 1` offsets into `plain`, each at a value's length prefix. */
  readonly starts?: Int32Array
  /** Bytes per value for fixed-width types (4 or 8); 0 for byte arrays and booleans. */
  readonly width: 0 | 4 | 8
  readonly min?: Bound
  readonly max?: Bound
  /**
   * `constant`: every row holds the one value in `plain` (count is still the row count);
   * `sequence`: INT64 values rising by one from `min` (delta encoding makes them nearly free);
   * `hash`: INT64 values of a hash, uniformly spread: all distinct, and their deltas as random as they are.
   */
  readonly hint?: 'constant' | 'sequence' | 'hash'
}

type CellReader = (bytes: Uint8Array, start: number, end: number) => boolean

const READ: Readonly<Record<TypedColumnType, CellReader>> = {
  bigint: bigintAt,
  timestamp: timestampAt,
  double: doubleAt,
  date: dateAt,
  boolean: booleanAt,
}

const WIDTH: Readonly<Record<TypedColumnType, 0 | 4 | 8>> = { bigint: 8, timestamp: 8, double: 8, date: 4, boolean: 0 }

const TWO_TO_32 = 2 ** 32

/** Values longer than this are copied by one native call; shorter ones by a loop, which costs less than the call. */
const LONG_VALUE = 64

const textOf = (bytes: Uint8Array, start: number, end: number): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8', start, end)

/** Bytes of the non-empty cells of `column` over the batches, and how many there are. */
const measure = (batches: readonly RecordBatch[], column: number): { bytes: number; cells: number } => {
  let bytes = 0
  let cells = 0
  for (const { offsets, columnCount, rowCount } of batches) {
    for (let r = 0, cell = column; r < rowCount; r++, cell += columnCount) {
      const length = offsets[cell + 1]! - offsets[cell]!
      bytes += length
      if (length > 0) cells++
    }
  }
  return { bytes, cells }
}

/** Unsigned byte-wise order, as Parquet orders BYTE_ARRAY statistics. */
const compareRanges = (a: Uint8Array, aStart: number, aEnd: number, bStart: number, bEnd: number): number => {
  const length = Math.min(aEnd - aStart, bEnd - bStart)
  for (let i = 0; i < length; i++) {
    const d = a[aStart + i]! - a[bStart + i]!
    if (d !== 0) return d
  }
  return aEnd - aStart - (bEnd - bStart)
}

/**
 * Byte-array cells to length-prefixed PLAIN values. `keep(bytes, start, end)` says which non-empty cells are
 * values (all of them for a STRING column; the misfits for a `__text` companion).
 */
const byteArrayValues = (
  batches: readonly RecordBatch[],
  column: number,
  rows: number,
  keep?: (bytes: Uint8Array, start: number, end: number) => boolean,
): ChunkValues => {
  const size = measure(batches, column)
  // In reused buffers (chunk-scratch.ts): written before they are read, except the flags.
  const plainBytes = size.bytes + 4 * size.cells
  const plain = new Uint8Array(chunkScratch.values.take(plainBytes, false), 0, plainBytes)
  const starts = new Int32Array(chunkScratch.starts.take(4 * (size.cells + 1), false), 0, size.cells + 1)
  const defined = new Uint8Array(chunkScratch.defined.take(rows, true), 0, rows)
  let count = 0
  let at = 0
  let row = 0
  let minAt = -1
  let minEnd = -1
  let maxAt = -1
  let maxEnd = -1
  // The bounds' first four bytes as one number (zero-padded): most values differ from a bound there, so a
  // comparison of two numbers settles them and only a value sharing a bound's prefix is compared byte by byte.
  let minKey = 0
  let maxKey = 0
  const plainWords = new DataView(plain.buffer, plain.byteOffset, plain.byteLength)
  for (const { bytes, offsets, columnCount, rowCount } of batches) {
    const words = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    for (let r = 0, cell = column; r < rowCount; r++, cell += columnCount, row++) {
      const start = offsets[cell]!
      const end = offsets[cell + 1]!
      if (start === end || (keep !== undefined && !keep(bytes, start, end))) continue
      defined[row] = 1
      starts[count++] = at
      const length = end - start
      // The length prefix, little-endian, byte by byte: cheaper than a DataView call per value.
      plain[at] = length
      plain[at + 1] = length >>> 8
      plain[at + 2] = length >>> 16
      plain[at + 3] = length >>> 24
      at += 4
      const key =
        ((bytes[start]! << 24) |
          (length > 1 ? bytes[start + 1]! << 16 : 0) |
          (length > 2 ? bytes[start + 2]! << 8 : 0) |
          (length > 3 ? bytes[start + 3]! : 0)) >>>
        0
      if (length > LONG_VALUE) plain.set(bytes.subarray(start, end), at)
      else {
        // Four bytes at a time through DataViews, then the last ones by byte: a quarter of the steps of a byte loop.
        let i = start
        let to = at
        for (; i + 4 <= end; i += 4, to += 4) plainWords.setInt32(to, words.getInt32(i, true), true)
        for (; i < end; i++, to++) plain[to] = bytes[i]!
      }
      if (minAt < 0) {
        minAt = at
        minEnd = at + length
        minKey = key
        maxAt = at
        maxEnd = at + length
        maxKey = key
      } else {
        if (key < minKey || (key === minKey && compareRanges(plain, at, at + length, minAt, minEnd) < 0)) {
          minAt = at
          minEnd = at + length
          minKey = key
        }
        if (key > maxKey || (key === maxKey && compareRanges(plain, at, at + length, maxAt, maxEnd) > 0)) {
          maxAt = at
          maxEnd = at + length
          maxKey = key
        }
      }
      at += length
    }
  }
  starts[count] = at
  return {
    rows,
    defined,
    count,
    plain: plain.subarray(0, at),
    starts: starts.subarray(0, count + 1),
    width: 0,
    ...(minAt < 0 ? {} : { min: plain.slice(minAt, minEnd), max: plain.slice(maxAt, maxEnd) }),
  }
}

/** A STRING column: each cell's UTF-8 bytes; empty cells are NULL. */
export const stringValues = (batches: readonly RecordBatch[], column: number, rows: number): ChunkValues =>
  byteArrayValues(batches, column, rows)

/** The `__text` companion of a typed column: the text of each cell that does not convert, else NULL. */
export const misfitText = (
  batches: readonly RecordBatch[],
  column: number,
  type: TypedColumnType,
  rows: number,
): ChunkValues => {
  const read = READ[type]
  return byteArrayValues(batches, column, rows, (bytes, start, end) => !read(bytes, start, end))
}

/**
 * A typed column. A cell that does not convert is NULL when the column has a companion to hold its text
 * (`hasCompanion`), and a bug otherwise.
 */
export const typedValues = (
  batches: readonly RecordBatch[],
  column: number,
  type: TypedColumnType,
  rows: number,
  hasCompanion: boolean,
): ChunkValues => {
  const read = READ[type]
  const width = WIDTH[type]
  const { cells } = measure(batches, column)
  // Booleans are bit-packed: one bit per value, rounded up to whole bytes.
  const byteLength = width === 0 ? Math.ceil(cells / 8) : cells * width
  // In reused buffers (chunk-scratch.ts); booleans are ORed in bit by bit, so their bytes start zeroed.
  const buffer = chunkScratch.values.take(byteLength, width === 0)
  const words = new Uint32Array(buffer, 0, width === 0 ? 0 : byteLength / 4)
  const doubles = type === 'double' ? new Float64Array(buffer, 0, cells) : undefined
  const int64 = width === 8 && type !== 'double' ? new BigInt64Array(buffer, 0, cells) : undefined
  const bits = width === 0 ? new Uint8Array(buffer, 0, byteLength) : undefined
  const defined = new Uint8Array(chunkScratch.defined.take(rows, true), 0, rows)
  let count = 0
  let row = 0
  let min: number | bigint = Number.POSITIVE_INFINITY
  let max: number | bigint = Number.NEGATIVE_INFINITY
  for (const { bytes, offsets, columnCount, rowCount } of batches) {
    for (let r = 0, cell = column; r < rowCount; r++, cell += columnCount, row++) {
      const start = offsets[cell]!
      const end = offsets[cell + 1]!
      if (start === end) continue
      if (!read(bytes, start, end)) {
        if (hasCompanion) continue
        throw new InternalError({
          reason: `the value "${textOf(bytes, start, end).slice(0, 40)}" does not convert to ${type}, though inference chose that type`,
        })
      }
      defined[row] = 1
      const value: number | bigint = parsed.isBig && type === 'bigint' ? parsed.big : parsed.value
      if (value < min) min = value
      if (value > max) max = value
      if (doubles) doubles[count] = parsed.value
      else if (bits) bits[count >> 3]! |= parsed.value << (count & 7)
      else if (width === 4) words[count] = parsed.value
      else if (typeof value === 'bigint') int64![count] = value
      else {
        // An integer below 2^53 as two little-endian words, without a BigInt per cell (Lambda is little-endian).
        const high = Math.floor(value / TWO_TO_32)
        words[2 * count] = value - high * TWO_TO_32
        words[2 * count + 1] = high
      }
      count++
    }
  }
  // Parquet orders -0 before +0: a chunk whose bound is zero says -0 as its min and +0 as its max.
  if (min === 0) min = -0
  if (max === 0) max = 0
  return {
    rows,
    defined,
    count,
    plain: new Uint8Array(buffer, 0, width === 0 ? Math.ceil(count / 8) : count * width),
    width,
    ...(count > 0 ? { min, max } : {}),
  }
}

/** A column this CSV lacks. */
export const nullValues = (rows: number): ChunkValues => ({
  rows,
  defined: new Uint8Array(rows),
  count: 0,
  plain: new Uint8Array(0),
  width: 0,
})

/** Every row holds `value`: a string, or epoch milliseconds for a timestamp. */
export const constantValues = (value: string | number, rows: number): ChunkValues => {
  if (typeof value === 'number') {
    const plain = new Uint8Array(8)
    new DataView(plain.buffer).setBigInt64(0, BigInt(value), true)
    return {
      rows,
      defined: new Uint8Array(rows).fill(1),
      count: rows,
      plain,
      width: 8,
      min: value,
      max: value,
      hint: 'constant',
    }
  }
  const text = Buffer.from(value, 'utf8')
  const plain = new Uint8Array(4 + text.length)
  new DataView(plain.buffer).setUint32(0, text.length, true)
  plain.set(text, 4)
  return {
    rows,
    defined: new Uint8Array(rows).fill(1),
    count: rows,
    plain,
    starts: Int32Array.of(0, plain.length),
    width: 0,
    min: plain.slice(4),
    max: plain.slice(4),
    hint: 'constant',
  }
}

/** The BIGINTs `first`, `first + 1`, ... one per row. */
export const sequenceValues = (first: number, rows: number): ChunkValues => ({
  rows,
  defined: new Uint8Array(rows).fill(1),
  count: rows,
  plain: new Uint8Array(0),
  width: 8,
  ...(rows > 0 ? { min: first, max: first + rows - 1 } : {}),
  hint: 'sequence',
})

/** INT64 values, none NULL (the row fingerprints: a hash, so hinted as one), with their min and max. */
export const int64Values = (values: BigInt64Array): ChunkValues => {
  const rows = values.length
  // Compared as (signed high word, unsigned low word) rather than as a BigInt per value: a BigInt is a heap
  // object, and a row group's worth of them reached the old generation (46 MB per 500 MB of CSV, measured).
  const high = new Int32Array(values.buffer, values.byteOffset, rows * 2)
  const low = new Uint32Array(values.buffer, values.byteOffset, rows * 2)
  let minAt = 0
  let maxAt = 0
  for (let i = 1; i < rows; i++) {
    const h = high[2 * i + 1]!
    const l = low[2 * i]!
    const minHigh = high[2 * minAt + 1]!
    if (h < minHigh || (h === minHigh && l < low[2 * minAt]!)) minAt = i
    const maxHigh = high[2 * maxAt + 1]!
    if (h > maxHigh || (h === maxHigh && l > low[2 * maxAt]!)) maxAt = i
  }
  const min = rows > 0 ? values[minAt] : undefined
  const max = rows > 0 ? values[maxAt] : undefined
  return {
    rows,
    defined: new Uint8Array(rows).fill(1),
    count: rows,
    // PLAIN is little-endian, as every platform Node runs on is.
    plain: new Uint8Array(values.buffer, values.byteOffset, values.byteLength),
    width: 8,
    ...(min === undefined || max === undefined ? {} : { min, max }),
    hint: 'hash',
  }
}
