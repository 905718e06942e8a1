import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { BatchSpool } from '../../../functions/export/normalize/batch-spool.ts'
import { type RecordBatch, RecordBatchBuilder } from '../../../functions/export/normalize/record-batch.ts'
import { tempDir } from '../../support/cli.ts'

/** The batch's cells as text, row by row (NULL for an empty cell). */
const cellsOf = (batch: RecordBatch): (string | null)[][] =>
  Array.from({ length: batch.rowCount }, (_, row) =>
    Array.from({ length: batch.columnCount }, (_, column) => {
      const cell = row * batch.columnCount + column
      const [start, end] = [batch.offsets[cell]!, batch.offsets[cell + 1]!]
      return start === end ? null : Buffer.from(batch.bytes.subarray(start, end)).toString('utf8')
    }),
  )

/** A record as csv-parse hands it over when reading fields as bytes: each UTF-8 byte one Latin-1 character. */
const asBytes = (record: readonly string[]): string[] => record.map((field) => Buffer.from(field).toString('latin1'))

const build = (records: string[][], columns: number, limits = { maxCells: 1000, maxBytes: 1000 }) => {
  const builder = new RecordBatchBuilder(columns, limits)
  const batches: RecordBatch[] = []
  for (const record of records) {
    const batch = builder.add(asBytes(record))
    if (batch) batches.push(batch)
  }
  const last = builder.flush()
  if (last) batches.push(last)
  return { batches, builder }
}

describe('RecordBatchBuilder', () => {
  it('keeps every cell as UTF-8 bytes, empty and missing trailing cells as NULL', () => {
    const records = [['a', '', 'c'], ['d'], ['é', '😀 x', '漢字\r\n"q"']]
    const { batches } = build(records, 3)
    expect(batches).toHaveLength(1)
    expect(batches[0]).toMatchObject({ firstRow: 1, rowCount: 3, columnCount: 3 })
    expect(cellsOf(batches[0]!)).toEqual([
      ['a', null, 'c'],
      ['d', null, null],
      ['é', '😀 x', '漢字\r\n"q"'],
    ])
  })

  it('closes a batch at its cell limit and numbers the next one on', () => {
    const records = Array.from({ length: 7 }, (_, i) => [String(i), 'x'])
    const { batches } = build(records, 2, { maxCells: 6, maxBytes: 1000 })
    expect(batches.map((b) => [b.firstRow, b.rowCount])).toEqual([
      [1, 3],
      [4, 3],
      [7, 1],
    ])
  })

  it('closes a batch before a record that would not fit its bytes, and gives a record larger than a batch one of its own', () => {
    const long = 'ß'.repeat(400)
    const { batches } = build([['a'], ['b'], [long], ['c']], 1, { maxCells: 1000, maxBytes: 100 })
    expect(batches.map((b) => cellsOf(b).flat())).toEqual([['a', 'b'], [long], ['c']])
  })

  it('reuses the buffers of a batch handed back for the batch after the one being filled', () => {
    const builder = new RecordBatchBuilder(1, { maxCells: 2, maxBytes: 64 })
    builder.add(['a'])
    const first = builder.add(['b'])!
    builder.recycle(first.bytes.buffer as ArrayBuffer, first.offsets.buffer as ArrayBuffer)
    builder.add(['c'])
    builder.add(['d'])
    builder.add(['e'])
    const third = builder.add(['f'])!
    expect(third.bytes.buffer).toBe(first.bytes.buffer)
    expect(third.offsets.buffer).toBe(first.offsets.buffer)
    expect(cellsOf(third).flat()).toEqual(['e', 'f'])
  })
})

describe('BatchSpool', () => {
  it('gives back every batch exactly, in order, through a temporary file', async () => {
    const records = Array.from({ length: 50 }, (_, i) => [String(i), i % 3 === 0 ? '' : `ü${'x'.repeat(i)}`])
    const { batches } = build(records, 2, { maxCells: 14, maxBytes: 1000 })
    const spool = new BatchSpool(path.join(await tempDir('inventory-spool-'), 'spool.bin'))
    for (const batch of batches) spool.append(batch)
    const back = [...spool.batches()]
    spool.close()
    expect(back.map((b) => [b.firstRow, b.rowCount, b.columnCount])).toEqual(
      batches.map((b) => [b.firstRow, b.rowCount, b.columnCount]),
    )
    expect(back.flatMap(cellsOf)).toEqual(batches.flatMap(cellsOf))
    expect(spool.bytesOnDisk).toBeGreaterThan(0)
  })
})
