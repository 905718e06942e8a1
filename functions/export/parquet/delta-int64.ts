/**
 * DELTA_BINARY_PACKED for INT64 values in Numbers, byte for byte what hyparquet-writer's `deltaBinaryPack` writes
 * (blocks of 128 values in 4 miniblocks of 32, each miniblock's width the bits of its largest adjusted delta, an
 * empty or all-equal miniblock 0 bits wide, the last miniblock padded with zeros). hyparquet-writer takes INT64 as
 * BigInts, one per value and several per delta; a profile of the inventory export put that at about 8% of the
 * main thread's encode for its two timestamp columns. Here a page whose values span less than 2^52 (timestamps in
 * milliseconds do, by far) is packed in exact double arithmetic; any other page goes to hyparquet-writer's.
 */
import type { ByteWriter } from 'hyparquet-writer/src/bytewriter.js'
import { deltaBinaryPack } from 'hyparquet-writer/src/delta.js'

const BLOCK_SIZE = 128
const MINIBLOCKS_PER_BLOCK = 4
const VALUES_PER_MINIBLOCK = BLOCK_SIZE / MINIBLOCKS_PER_BLOCK
const TWO_TO_32 = 2 ** 32
/** Values this far apart have deltas below 2^52 and adjusted deltas below 2^53: exact as doubles. */
const MAX_SPAN = 2 ** 52 - 1
/** The high word of a value within ±2^53, where hi * 2^32 + lo is exact. */
const MAX_HIGH = 2 ** 21 - 1
const MIN_HIGH = -(2 ** 21)

/** Reused from page to page: the page's values as doubles, and one block's deltas. */
let numbers = new Float64Array(0)
const deltas = new Float64Array(BLOCK_SIZE)
const widths = new Uint8Array(MINIBLOCKS_PER_BLOCK)
/** A packed miniblock is exactly `width * 4` bytes (32 values); one buffer per width. */
const packedByWidth: Uint8Array[] = []

/** The values as doubles in the reused buffer, or undefined where doubles cannot hold their deltas exactly. */
const asNumbers = (values: BigInt64Array): Float64Array | undefined => {
  const count = values.length
  if (numbers.length < count) numbers = new Float64Array(Math.max(count, 2 * numbers.length))
  // The words of each value (little-endian, as every platform Node runs on is).
  const high = new Int32Array(values.buffer, values.byteOffset, 2 * count)
  const low = new Uint32Array(values.buffer, values.byteOffset, 2 * count)
  let min = Number.POSITIVE_INFINITY
  let max = Number.NEGATIVE_INFINITY
  for (let i = 0; i < count; i++) {
    const h = high[2 * i + 1]!
    if (h > MAX_HIGH || h < MIN_HIGH) return undefined
    const value = h * TWO_TO_32 + low[2 * i]!
    numbers[i] = value
    if (value < min) min = value
    if (value > max) max = value
  }
  return max - min <= MAX_SPAN ? numbers : undefined
}

/** ZigZag then ULEB128, for an integer below 2^52 in magnitude (so its zigzag form is exact). */
const appendZigZag = (writer: ByteWriter, value: number): void => {
  let encoded = value < 0 ? -value * 2 - 1 : value * 2
  while (encoded >= 0x80) {
    writer.appendUint8((encoded % 0x80) + 0x80)
    encoded = Math.floor(encoded / 0x80)
  }
  writer.appendUint8(encoded)
}

/** Bits of a non-negative integer below 2^53. */
const bitWidthOf = (value: number): number =>
  value < TWO_TO_32 ? 32 - Math.clz32(value) : 64 - Math.clz32(Math.floor(value / TWO_TO_32))

/** Packs 32 adjusted deltas (`deltas[from + i] - minDelta`, 0 past `end`) at `width` bits each, LSB first. */
const packMiniblock = (packed: Uint8Array, from: number, end: number, minDelta: number, width: number): void => {
  let at = 0
  if (width <= 24) {
    // With fewer than 8 bits pending, 24 more still fit the 32-bit operators.
    let buffer = 0
    let used = 0
    for (let i = from; i < from + VALUES_PER_MINIBLOCK; i++) {
      buffer |= (i < end ? deltas[i]! - minDelta : 0) << used
      used += width
      while (used >= 8) {
        packed[at++] = buffer & 0xff
        buffer >>>= 8
        used -= 8
      }
    }
    return
  }
  // Wider: each value as its low word (at most 32 bits) then its high bits, in double arithmetic below 2^40.
  const lowWidth = Math.min(width, 32)
  const highWidth = width - lowWidth
  let buffer = 0
  let used = 0
  for (let i = from; i < from + VALUES_PER_MINIBLOCK; i++) {
    const adjusted = i < end ? deltas[i]! - minDelta : 0
    const high = Math.floor(adjusted / TWO_TO_32)
    buffer += (adjusted - high * TWO_TO_32) * 2 ** used
    used += lowWidth
    while (used >= 8) {
      packed[at++] = buffer % 0x100
      buffer = Math.floor(buffer / 0x100)
      used -= 8
    }
    if (highWidth > 0) {
      buffer += high * 2 ** used
      used += highWidth
      while (used >= 8) {
        packed[at++] = buffer % 0x100
        buffer = Math.floor(buffer / 0x100)
        used -= 8
      }
    }
  }
}

/** Writes `count` values of `values` (doubles holding integers whose span is at most MAX_SPAN). */
const packNumbers = (writer: ByteWriter, values: Float64Array, count: number): void => {
  writer.appendVarInt(BLOCK_SIZE)
  writer.appendVarInt(MINIBLOCKS_PER_BLOCK)
  writer.appendVarInt(count)
  // The first value may be up to 2^53 in magnitude, past what appendZigZag keeps exact.
  writer.appendZigZag(BigInt(values[0]!))
  for (let index = 1; index < count; index += BLOCK_SIZE) {
    const size = Math.min(BLOCK_SIZE, count - index)
    let minDelta = Number.POSITIVE_INFINITY
    for (let i = 0; i < size; i++) {
      const delta = values[index + i]! - values[index + i - 1]!
      deltas[i] = delta
      if (delta < minDelta) minDelta = delta
    }
    appendZigZag(writer, minDelta)
    for (let mb = 0; mb < MINIBLOCKS_PER_BLOCK; mb++) {
      const end = Math.min((mb + 1) * VALUES_PER_MINIBLOCK, size)
      let maxAdjusted = 0
      for (let i = mb * VALUES_PER_MINIBLOCK; i < end; i++) {
        const adjusted = deltas[i]! - minDelta
        if (adjusted > maxAdjusted) maxAdjusted = adjusted
      }
      widths[mb] = bitWidthOf(maxAdjusted)
    }
    writer.appendBytes(widths)
    for (let mb = 0; mb < MINIBLOCKS_PER_BLOCK; mb++) {
      const width = widths[mb]!
      if (width === 0) continue
      packedByWidth[width] ??= new Uint8Array(width * 4)
      const packed = packedByWidth[width]
      packMiniblock(packed, mb * VALUES_PER_MINIBLOCK, size, minDelta, width)
      writer.appendBytes(packed)
    }
  }
}

/** INT64 values as DELTA_BINARY_PACKED. */
export const deltaBinaryPackInt64 = (writer: ByteWriter, values: BigInt64Array): void => {
  const exact = values.length > 0 ? asNumbers(values) : undefined
  if (exact) packNumbers(writer, exact, values.length)
  else deltaBinaryPack(writer, values, 'INT64')
}

/** The INT64 values `first`, `first + 1`, ... (`count` of them) as DELTA_BINARY_PACKED. */
export const deltaBinaryPackSequence = (writer: ByteWriter, first: number, count: number): void => {
  if (count === 0 || !Number.isSafeInteger(first) || !Number.isSafeInteger(first + count)) {
    deltaBinaryPack(
      writer,
      Float64Array.from({ length: count }, (_, i) => first + i),
      'INT64',
    )
    return
  }
  if (numbers.length < count) numbers = new Float64Array(Math.max(count, 2 * numbers.length))
  for (let i = 0; i < count; i++) numbers[i] = first + i
  packNumbers(writer, numbers, count)
}
