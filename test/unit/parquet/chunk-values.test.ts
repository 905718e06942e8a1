import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { int64Values } from '../../../functions/export/parquet/chunk-values.ts'

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
