import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { int64Values, stringValues } from '../../../functions/export/parquet/chunk-values.ts'
import { batchesOf } from '../../support/encoder.ts'

describe('int64Values', () => {
  it('gives the min and max of signed 64-bit values as BigInt comparison does', () => {
    const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })
    // Values that share a high word and differ in the low one (signed high, unsigned low) among them.
    const nearby = fc.tuple(fc.integer({ min: -3, max: 3 }), fc.integer({ min: 0, max: 2 ** 32 - 1 }))
    const value = fc.oneof(
      int64,
      nearby.map(([high, low]) => (BigInt(high) << 32n) | BigInt(low)),
    )
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 200 }), (list) => {
        const chunk = int64Values(BigInt64Array.from(list))
        const sorted = [...list].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
        expect(chunk.min).toBe(sorted[0])
        expect(chunk.max).toBe(sorted.at(-1))
        expect(chunk.count).toBe(list.length)
      }),
      { seed: 15 },
    )
  })

  it('has no bounds for no rows', () => {
    const chunk = int64Values(new BigInt64Array(0))
    expect(chunk.min).toBeUndefined()
    expect(chunk.max).toBeUndefined()
  })
})

describe('stringValues', () => {
  /** Cells that share prefixes of every length with each other, short and long, ASCII and not, some empty. */
  const cell = fc.oneof(
    fc.constant(''),
    // Few characters, so values are often one another's prefixes and share a bound's first four bytes.
    fc.string({ unit: fc.constantFrom('a', 'b', '\u0000', 'é'), maxLength: 7 }),
    fc
      .tuple(fc.constantFrom('00:1a:3c:', 'abc'), fc.string({ unit: fc.constantFrom('a', 'b'), maxLength: 3 }))
      .map(([prefix, rest]) => prefix + rest),
    fc.string({ minLength: 60, maxLength: 90 }),
  )

  it('gives every non-empty cell length-prefixed, with the bytewise min and max', () => {
    fc.assert(
      fc.property(fc.array(cell, { minLength: 1, maxLength: 120 }), fc.integer({ min: 1, max: 40 }), (list, per) => {
        const chunk = stringValues(
          batchesOf(
            list.map((text) => [text]),
            1,
            per,
          ),
          0,
          list.length,
        )
        const values = list.filter((text) => text !== '').map((text) => Buffer.from(text))
        expect([...chunk.defined]).toEqual(list.map((text) => (text === '' ? 0 : 1)))
        expect(chunk.count).toBe(values.length)
        const plain = Buffer.concat(
          values.flatMap((value) => [Buffer.from(Uint32Array.of(value.length).buffer), value]),
        )
        expect(Buffer.from(chunk.plain)).toEqual(plain)
        const sorted = [...values].sort(Buffer.compare)
        expect(chunk.min === undefined ? undefined : Buffer.from(chunk.min as Uint8Array)).toEqual(sorted[0])
        expect(chunk.max === undefined ? undefined : Buffer.from(chunk.max as Uint8Array)).toEqual(sorted.at(-1))
      }),
      { seed: 31 },
    )
  })
})
