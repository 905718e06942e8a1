/**
 * Column values are made into buffers reused from one column and row group to the next (chunk-scratch.ts): what a
 * column leaves in them must never show in the next one's values, whatever their sizes and NULLs.
 */
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { stringValues, typedValues } from '../../../functions/export/parquet/chunk-values.ts'
import { ParquetFileEncoder } from '../../../functions/export/parquet/encode.ts'
import { tempDir } from '../../support/cli.ts'
import { query } from '../../support/duckdb.ts'
import { batchesOf } from '../../support/encoder.ts'

describe('column values in reused buffers', () => {
  it('gives a sparse column after a full one only its own values and NULLs', () => {
    const batches = batchesOf(
      Array.from({ length: 40 }, (_, i) => [`full-${i}`, i % 3 === 0 ? `sparse-${i}` : '']),
      2,
      16,
    )
    expect([...stringValues(batches, 0, 40).defined]).toEqual(Array(40).fill(1))
    const sparse = stringValues(batches, 1, 40)
    expect([...sparse.defined]).toEqual(Array.from({ length: 40 }, (_, i) => (i % 3 === 0 ? 1 : 0)))
    expect(sparse.count).toBe(14)
    expect(Buffer.from(sparse.plain.subarray(4, 4 + 8)).toString()).toBe('sparse-0')
  })

  it('packs booleans from cleared bits after a column of all-true booleans', () => {
    const batches = batchesOf(
      Array.from({ length: 20 }, (_, i) => ['true', i % 2 === 0 ? 'false' : 'true']),
      2,
      8,
    )
    expect([...typedValues(batches, 0, 'boolean', 20, false).plain]).toEqual([0xff, 0xff, 0x0f])
    expect([...typedValues(batches, 1, 'boolean', 20, false).plain]).toEqual([0xaa, 0xaa, 0x0a])
  })

  it('writes a file whose smaller, sparser second row group reads back exactly', async () => {
    const columns = [
      { name: 'name', type: 'string' as const },
      { name: 'ok', type: 'boolean' as const },
      { name: 'n', type: 'bigint' as const },
    ]
    const big = Array.from({ length: 30 }, (_, i) => [`a-long-name-${i}`, 'true', String(i * 1000)])
    const small = Array.from({ length: 7 }, (_, i) => [i % 2 === 0 ? `b${i}` : '', i % 3 === 0 ? 'false' : '', ''])
    const group = (records: string[][]) => {
      const batches = batchesOf(records, 3, 4)
      const rows = records.length
      return [
        () => stringValues(batches, 0, rows),
        () => typedValues(batches, 1, 'boolean', rows, false),
        () => typedValues(batches, 2, 'bigint', rows, false),
      ]
    }
    const file = new ParquetFileEncoder(columns)
    const parts = [
      file.start(),
      await file.writeRowGroup(group(big), 30),
      await file.writeRowGroup(group(small), 7),
      file.finish(),
    ]
    const target = path.join(await tempDir('inventory-scratch-'), 'two-groups.parquet')
    await writeFile(target, Buffer.concat(parts))
    const rows = await query(`SELECT name, ok, n FROM '${target}'`)
    expect(rows.slice(30)).toEqual([
      { name: 'b0', ok: false, n: null },
      { name: null, ok: null, n: null },
      { name: 'b2', ok: null, n: null },
      { name: null, ok: false, n: null },
      { name: 'b4', ok: null, n: null },
      { name: null, ok: null, n: null },
      { name: 'b6', ok: false, n: null },
    ])
    expect(rows[29]).toEqual({ name: 'a-long-name-29', ok: true, n: '29000' })
  })
})
