/**
 * The rows of recorded erasure requests left out of a table's batches: a request matches a row when each column
 * it names holds one of that column's values (by keyed digest of a cell in clear, or the cell itself when it is a
 * pseudonym, or the digest of the value's typed spelling), the other rows keep every cell and their order, and
 * are numbered on without the rows left out.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { PseudonymizationKey } from '../../../functions/export/core/pseudonymization-key.ts'
import { dropErasedRows, type ErasureColumn } from '../../../functions/export/normalize/erased-rows.ts'
import { pseudonym } from '../../../functions/export/normalize/personal-data.ts'
import { rowsAsText } from '../../../functions/export/normalize/record-batch.ts'
import type { TableRecords } from '../../../functions/export/normalize/table-records.ts'
import { digestCondition } from '../../../functions/export/path/erase.ts'
import { batchesOf } from '../../support/encoder.ts'

const KEY = PseudonymizationKey.fromText('e'.repeat(40), 'test')
const COLUMNS: ErasureColumn[] = [
  { name: 'device_id', pseudonymized: false, type: 'string' },
  { name: 'owner', pseudonymized: true, type: 'string' },
  { name: 'last_seen', pseudonymized: false, type: 'timestamp' },
]

const recordsOf = (rows: string[][], rowsPerBatch = 2): TableRecords => ({
  header: COLUMNS.map((c) => c.name),
  batches: (async function* () {
    yield* batchesOf(rows, COLUMNS.length, rowsPerBatch)
  })(),
  recycle: () => undefined,
  close: async () => undefined,
})

const requestOf = (...where: [string, string][]) => ({
  where: where.map(([column, value]) => digestCondition(KEY, { column, value })),
})

const kept = async (rows: string[][], requests: { where: ReturnType<typeof digestCondition>[] }[], perBatch = 2) => {
  const erased = dropErasedRows(recordsOf(rows, perBatch), COLUMNS, requests, KEY)
  const out: { firstRow: number; rows: string[][] }[] = []
  for await (const batch of erased.records.batches) out.push({ firstRow: batch.firstRow, rows: rowsAsText(batch) })
  return { batches: out, rows: out.flatMap((b) => b.rows), dropped: erased.dropped() }
}

const ownerOf = (name: string) => pseudonym(KEY, Buffer.from(name))
const ROWS = [
  ['000001', ownerOf('Ann'), '2026-11-20T08:00:00.000Z'],
  ['000002', ownerOf('Bob'), '2026-11-20T09:00:00.000Z'],
  ['000003', ownerOf('Ann'), ''],
  ['000004', '', '2026-11-21T10:00:00.000Z'],
  ['000005', ownerOf('Cy'), '2026-11-21T11:00:00.000Z'],
]

describe('dropErasedRows', () => {
  it('leaves out the rows any request matches, numbering the others on in order', async () => {
    const result = await kept(ROWS, [requestOf(['device_id', '000002'], ['device_id', '000004'])])
    expect(result.rows.map((r) => r[0])).toEqual(['000001', '000003', '000005'])
    expect(result.dropped).toBe(2)
    expect(result.rows).toEqual([ROWS[0], ROWS[2], ROWS[4]])
    // Batches of two: [1, 2] keeps row 1; [3, 4] keeps its first as row 2; [5] is row 3.
    expect(result.batches.map((b) => b.firstRow)).toEqual([1, 2, 3])
  })

  it('matches a pseudonymized column by its cell, and needs every column of a request to match', async () => {
    const both = await kept(ROWS, [requestOf(['owner', 'Ann'], ['device_id', '000003'])])
    expect(both.rows.map((r) => r[0])).toEqual(['000001', '000002', '000004', '000005'])
    const anyAnn = await kept(ROWS, [requestOf(['owner', 'Ann']), requestOf(['device_id', '000005'])])
    expect(anyAnn.rows.map((r) => r[0])).toEqual(['000002', '000004'])
  })

  it('matches a typed column by the digest of its stored spelling, from the value as the service spells it', async () => {
    const result = await kept(ROWS, [requestOf(['last_seen', '2026-11-21T10:00:00Z'])])
    expect(result.rows.map((r) => r[0])).toEqual(['000001', '000002', '000003', '000005'])
  })

  it('never matches an empty cell, and passes a table no request matches through unchanged', async () => {
    const result = await kept(ROWS, [requestOf(['last_seen', ''])])
    expect(result.rows).toEqual(ROWS)
    expect(result.batches.map((b) => b.firstRow)).toEqual([1, 3, 5])
  })

  it('keeps exactly the rows no request matches, whatever the batches', () =>
    fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 0, maxLength: 40 }),
        fc.subarray([1, 2, 3, 4, 5, 6, 7, 8, 9]),
        fc.integer({ min: 1, max: 7 }),
        async (ids, erased, perBatch) => {
          const rows = ids.map((id) => [`00000${id}`, ownerOf(`o${id}`), ''])
          const result = await kept(
            rows,
            erased.map((id) => requestOf(['device_id', `00000${id}`])),
            perBatch,
          )
          expect(result.rows).toEqual(rows.filter((r) => !erased.some((id) => r[0] === `00000${id}`)))
          expect(result.dropped).toBe(rows.length - result.rows.length)
          let next = 1
          for (const batch of result.batches) {
            expect(batch.firstRow).toBe(next)
            next += batch.rows.length
          }
        },
      ),
      { numRuns: 60 },
    ))
})
