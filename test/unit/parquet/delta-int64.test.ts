/**
 * The Number-based INT64 DELTA_BINARY_PACKED writer against hyparquet-writer's BigInt one: the same bytes for every
 * page, whatever its values (negative deltas, spans at the edge of what doubles hold exactly, pages of 1 to several
 * blocks, all-equal values), and hyparquet's reader gets the values back.
 */
import fc from 'fast-check'
import { deltaBinaryUnpack } from 'hyparquet/src/delta.js'
import { ByteWriter } from 'hyparquet-writer/src/bytewriter.js'
import { deltaBinaryPack } from 'hyparquet-writer/src/delta.js'
import { describe, expect, it } from 'vitest'
import { deltaBinaryPackInt64, deltaBinaryPackSequence } from '../../../functions/export/parquet/delta-int64.ts'

const bytesOf = (write: (writer: ByteWriter) => void): Uint8Array => {
  const writer = new ByteWriter()
  write(writer)
  return writer.getBytes().slice()
}

const ours = (values: readonly bigint[]) => bytesOf((w) => deltaBinaryPackInt64(w, BigInt64Array.from(values)))
const theirs = (values: readonly bigint[]) => bytesOf((w) => deltaBinaryPack(w, BigInt64Array.from(values), 'INT64'))

const MAX_SPAN = 2n ** 52n - 1n
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/** Pages around a base value, within the span doubles hold exactly or past it. */
const page = (base: fc.Arbitrary<bigint>, offset: fc.Arbitrary<bigint>) =>
  fc
    .tuple(base, fc.array(offset, { minLength: 1, maxLength: 700 }))
    .map(([b, offsets]) => offsets.map((o) => BigInt.asIntN(64, b + o)))

describe('deltaBinaryPackInt64', () => {
  it('writes the same bytes as hyparquet-writer for timestamps in milliseconds, in any order', () => {
    const millis = fc.bigInt({ min: 1_600_000_000_000n, max: 1_900_000_000_000n })
    fc.assert(
      fc.property(fc.array(millis, { minLength: 1, maxLength: 700 }), (values) => {
        expect(ours(values)).toEqual(theirs(values))
      }),
      { numRuns: 300 },
    )
  })

  it('writes the same bytes for spans at and past the largest one packed as doubles', () => {
    const edge = fc.constantFrom(0n, 1n, MAX_SPAN - 1n, MAX_SPAN, MAX_SPAN + 1n, 2n ** 53n, -MAX_SPAN, -(2n ** 53n))
    const base = fc.constantFrom(0n, -(2n ** 52n), 2n ** 52n, -(2n ** 53n), 2n ** 53n - 1n, 2n ** 53n, INT64_MIN)
    fc.assert(
      fc.property(page(base, fc.oneof(edge, fc.bigInt({ min: -MAX_SPAN, max: MAX_SPAN }))), (values) => {
        expect(ours(values)).toEqual(theirs(values))
      }),
      { numRuns: 500 },
    )
  })

  it('writes the same bytes for any 64-bit values, where deltas wrap', () => {
    const any = fc.bigInt({ min: INT64_MIN, max: INT64_MAX })
    fc.assert(
      fc.property(fc.array(any, { minLength: 1, maxLength: 300 }), (values) => {
        expect(ours(values)).toEqual(theirs(values))
      }),
      { numRuns: 200 },
    )
  })

  it('writes the same bytes for small, negative and repeated values, each bit width from 0 to 53', () => {
    const width = fc.integer({ min: 0, max: 53 })
    const values = width.chain((bits) =>
      fc.array(
        fc.bigInt({ min: 0n, max: 2n ** BigInt(bits) - 1n }).map((v) => v - 2n ** BigInt(Math.max(0, bits - 1))),
        { minLength: 1, maxLength: 400 },
      ),
    )
    fc.assert(
      fc.property(values, (page) => {
        expect(ours(page)).toEqual(theirs(page))
      }),
      { numRuns: 500 },
    )
  })

  it.each([1, 2, 33, 128, 129, 130, 257, 1000])('writes the same bytes for %i equal values', (count) => {
    const values = Array.from({ length: count }, () => 1_780_000_000_123n)
    expect(ours(values)).toEqual(theirs(values))
  })

  it('writes pages that hyparquet reads back as the same values', () => {
    const values = [1_780_000_000_000n, 1_779_000_000_000n, 1_790_000_000_000n, -5n, 0n, 2n ** 52n - 1n]
    const bytes = ours(values)
    const read = new BigInt64Array(values.length)
    deltaBinaryUnpack({ view: new DataView(bytes.buffer), offset: 0 }, values.length, read)
    expect([...read]).toEqual(values)
  })
})

describe('deltaBinaryPackSequence', () => {
  it.each([
    [1, 1],
    [1, 32_768],
    [65_537, 5000],
    [2 ** 40, 300],
  ])('writes the same bytes as hyparquet-writer for %i, %i rows on', (first, count) => {
    const expected = bytesOf((w) =>
      deltaBinaryPack(
        w,
        BigInt64Array.from({ length: count }, (_, i) => BigInt(first + i)),
        'INT64',
      ),
    )
    expect(bytesOf((w) => deltaBinaryPackSequence(w, first, count))).toEqual(expected)
  })
})
