import { describe, expect, it } from 'vitest'
import type { ColumnType } from '../../../functions/export/core/constants.ts'
import { DataError } from '../../../functions/export/core/errors.ts'
import type { RecordBatch } from '../../../functions/export/normalize/record-batch.ts'
import { ColumnTypeInferrer } from '../../../functions/export/normalize/types.ts'
import { batchesOf } from '../../support/encoder.ts'

const inferOne = (values: readonly (string | null)[], forced?: ColumnType): ColumnType => {
  const inferrer = new ColumnTypeInferrer({
    tableId: 't1',
    columnNames: ['c'],
    ...(forced === undefined ? {} : { forced: { c: forced } }),
  })
  observe(inferrer, values)
  return inferrer.types()[0]!
}

/** One column's values (null: an empty cell) as a record batch whose first row is `firstRow`. */
const columnBatch = (values: readonly (string | null)[], firstRow = 1, before: readonly string[] = []): RecordBatch => {
  const [batch] = batchesOf(
    values.map((v) => [...before, v ?? '']),
    before.length + 1,
    Math.max(1, values.length),
  )
  return { ...(batch ?? { rowCount: 0, columnCount: 1, bytes: new Uint8Array(), offsets: Int32Array.of(0) }), firstRow }
}

const observe = (inferrer: ColumnTypeInferrer, values: readonly (string | null)[], firstRow = 1) =>
  inferrer.observeBatch(0, columnBatch(values, firstRow))

describe('ColumnTypeInferrer', () => {
  it.each([
    [['1', '-2', '+3'], 'bigint'],
    [['1', '2.5'], 'double'],
    [['1.0', '2.0'], 'double'],
    [['9223372036854775807', '1.5'], 'string'],
    [['12345678901234567', '1'], 'bigint'],
    [['true', 'FALSE'], 'boolean'],
    [['2024-01-01', '1999-12-31'], 'date'],
    [['2024-01-01T00:00:00Z', '2024-01-01 10:00'], 'timestamp'],
    [['2024-01-01', '2024-01-01T00:00:00Z'], 'string'],
    [['1', 'true'], 'string'],
    [['007', '8'], 'string'],
    [['1', null, '', '3'].map((v) => (v === '' ? null : v)), 'bigint'],
    [[null, null], 'string'],
    [[], 'string'],
  ] as const)('infers %j as %s', (values, type) => {
    expect(inferOne(values, undefined)).toBe(type)
  })

  it('considers every value: one text among many numbers in a later batch makes the column STRING', () => {
    const inferrer = new ColumnTypeInferrer({ tableId: 't1', columnNames: ['n'] })
    observe(
      inferrer,
      Array.from({ length: 10_000 }, (_, i) => String(i)),
    )
    expect(inferrer.types()).toEqual(['bigint'])
    observe(inferrer, ['12', 'n/a'], 10_001)
    expect(inferrer.types()).toEqual(['string'])
  })

  it('gives the same type whatever the order of the values', () => {
    const values = ['1', '2.5', '3']
    expect(inferOne(values)).toBe(inferOne([...values].reverse()))
  })

  it('keeps a forced STRING even when every value is a number', () => {
    expect(inferOne(['1', '2'], 'string')).toBe('string')
  })

  it('keeps a forced type a narrower one would win', () => {
    expect(inferOne(['1', '2'], 'double')).toBe('double')
  })

  it('fails with the row, the value and the column when a value does not fit the forced type', () => {
    const inferrer = new ColumnTypeInferrer({ tableId: 't1', columnNames: ['a', 'qty'], forced: { qty: 'bigint' } })
    const observe = () => inferrer.observeBatch(1, columnBatch(['5', 'n/a'], 41, ['x']))
    expect(observe).toThrow(DataError)
    expect(observe).toThrow('table t1: row 42: "n/a" in column qty is not a bigint, the type forced by "columnTypes"')
    try {
      observe()
    } catch (error) {
      expect((error as DataError).code).toBe('VALUE_OUT_OF_RANGE')
    }
  })

  it('refuses a 16-digit decimal in a column forced to DOUBLE rather than round it', () => {
    expect(() => inferOne(['1.5', '1234567890123.456'], 'double')).toThrow(
      /"1234567890123.456" in column c is not a double/,
    )
  })

  it.each([
    [['1', '2'], 'double', true],
    [['1', '2.5'], 'bigint', false],
    [['x'], 'string', true],
    [[null], 'bigint', true],
  ] as const)('tells whether %j all fit %s: %s', (values, type, fits) => {
    const inferrer = new ColumnTypeInferrer({ tableId: 't1', columnNames: ['c'] })
    observe(inferrer, values)
    expect(inferrer.fits(0, type)).toBe(fits)
  })
})

describe('ColumnTypeInferrer.revision', () => {
  const batchOf = (values: readonly string[]) =>
    batchesOf(
      values.map((v) => [v]),
      1,
      1_000,
    )[0]!

  it('stays as it was after a batch whose values fit what the earlier values fit', () => {
    const inferrer = new ColumnTypeInferrer({ tableId: 't1', columnNames: ['n'] })
    inferrer.observeBatch(0, batchOf(['1', '2']))
    const revision = inferrer.revision
    inferrer.observeBatch(0, batchOf(['3', '', '4']))
    expect(inferrer.revision).toBe(revision)
  })

  it('moves on when a value narrows the types, and when a column sees its first value', () => {
    const inferrer = new ColumnTypeInferrer({ tableId: 't1', columnNames: ['n'] })
    inferrer.observeBatch(0, batchOf(['']))
    expect(inferrer.revision).toBe(0)
    inferrer.observeBatch(0, batchOf(['1']))
    expect(inferrer.revision).toBe(1)
    inferrer.observeBatch(0, batchOf(['1.5']))
    expect([inferrer.revision, inferrer.types()]).toEqual([2, ['double']])
  })

  it('moves on once for a column forced to STRING, whose values are never looked at', () => {
    const inferrer = new ColumnTypeInferrer({ tableId: 't1', columnNames: ['s'], forced: { s: 'string' } })
    inferrer.observeBatch(0, batchOf(['1']))
    inferrer.observeBatch(0, batchOf(['x']))
    expect(inferrer.revision).toBe(1)
  })
})
