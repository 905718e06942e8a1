/**
 * The row groups' batch copies: each copy, one single-column batch per column, reads as the batch did even after
 * the parser reuses the batch's buffers, and the memory they take stays that of the largest group, however many
 * groups a table has.
 */
import { existsSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { RecordBatch } from '../../../functions/export/normalize/record-batch.ts'
import { rowsAsText } from '../../../functions/export/normalize/record-batch.ts'
import { BatchCopies } from '../../../functions/export/parquet/batch-copies.ts'
import { tempDir } from '../../support/cli.ts'
import { batchesOf } from '../../support/encoder.ts'

/** The rows of a batch copied column by column, put back together. */
const rowsOfColumns = (columns: readonly RecordBatch[]): string[][] => {
  const texts = columns.map((column) => {
    expect(column.columnCount).toBe(1)
    return rowsAsText(column).map(([cell]) => cell!)
  })
  return Array.from({ length: columns[0]!.rowCount }, (_, row) => texts.map((text) => text[row]!))
}

const records = (group: number, rows: number) =>
  Array.from({ length: rows }, (_, i) => [`g${group}-r${i}`, i % 3 === 0 ? '' : `${'x'.repeat(i % 40)}é`])

describe('batch copies', () => {
  it('keeps each copy as the batch was after the batch’s own buffers are overwritten', () => {
    const copies = new BatchCopies()
    const batches = batchesOf(records(0, 50), 2, 7)
    const copied = batches.map((batch) => copies.copy(batch))
    const expected = batches.map(rowsAsText)
    for (const batch of batches) {
      batch.bytes.fill(0x21)
      batch.offsets.fill(0)
    }
    expect(copied.map(rowsOfColumns)).toEqual(expected)
    expect(copied.map((columns) => columns.map((c) => c.firstRow))).toEqual(
      batches.map((b) => [b.firstRow, b.firstRow]),
    )
  })

  it('keeps every copy of a group that outgrows its buffers', () => {
    const copies = new BatchCopies()
    const wide = [Array.from({ length: 3 }, (_, i) => String(i).repeat(700_000))]
    const batches = [...batchesOf(records(0, 10), 3, 4), ...batchesOf(wide, 3, 1), ...batchesOf(records(1, 10), 3, 4)]
    const copied = batches.map((batch) => copies.copy(batch))
    expect(copied.map(rowsOfColumns)).toEqual(batches.map(rowsAsText))
  })

  it('hands its buffers, grown, to the next table once closed, and that table reads its own rows from them', () => {
    const first = new BatchCopies()
    const wide = [Array.from({ length: 3 }, (_, i) => String(i).repeat(700_000))]
    for (const batch of batchesOf(wide, 3, 1)) first.add(batch)
    const grown = first.capacityBytes
    first.close()
    const next = new BatchCopies()
    expect(next.capacityBytes).toBe(grown)
    const batches = batchesOf(records(2, 30), 2, 8)
    for (const batch of batches) next.add(batch)
    const columns = [0, 1].map((c) => next.column(c))
    expect(batches.map((_, b) => rowsOfColumns(columns.map((column) => column[b]!)))).toEqual(batches.map(rowsAsText))
    next.close()
  })

  it('takes no more memory after a thousand row groups than after the first', () => {
    const copies = new BatchCopies()
    const capacities: number[] = []
    for (let group = 0; group < 1000; group++) {
      for (const batch of batchesOf(records(group, 200), 2, 64)) copies.copy(batch)
      copies.fingerprints(200)
      copies.release()
      capacities.push(copies.capacityBytes)
    }
    expect(new Set(capacities)).toEqual(new Set([capacities[0]]))
  })

  it('reads a group spilled past its in-memory bytes back as it was, reuses the file for the next group and deletes it on close', async () => {
    const folder = await tempDir('inventory-copies-')
    try {
      const spill = path.join(folder, 'spool.bin.group')
      // 2 KiB in memory: the first batches stay there, the later ones go to the file.
      const copies = new BatchCopies(spill, 2048)
      const capacities: number[] = []
      for (let group = 0; group < 3; group++) {
        const batches = batchesOf(records(group, 400), 2, 25)
        for (const batch of batches) copies.add(batch)
        expect(existsSync(spill)).toBe(true)
        const columns = [copies.column(0), copies.column(1)]
        expect(columns[0]).toHaveLength(batches.length)
        // Read column by column, as a row group's chunks are made: each read is whole when it is made.
        const [first, second] = [rowsOfGroup(copies.column(0)), rowsOfGroup(copies.column(1))]
        expect(first.map((cell, row) => [cell, second[row]!])).toEqual(batches.flatMap(rowsAsText))
        copies.release()
        capacities.push(copies.capacityBytes)
      }
      expect(new Set(capacities)).toEqual(new Set([capacities[0]]))
      copies.close()
      expect(existsSync(spill)).toBe(false)
    } finally {
      await rm(folder, { recursive: true, force: true })
    }
  })
})

/** One column's cells over a group's single-column batches. */
const rowsOfGroup = (pieces: readonly RecordBatch[]): string[] =>
  pieces.flatMap((piece) => rowsAsText(piece).map(([cell]) => cell!))
