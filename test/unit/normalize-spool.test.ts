import { readdir } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { RowGroupBuilder, type RowGroupLimits } from '../../functions/export/normalize/row-groups.ts'
import { RowGroupSpool, type SpooledRowGroup } from '../../functions/export/normalize/spool.ts'
import { tempDir } from '../support/cli.ts'

const readAll = (group: SpooledRowGroup): (string | null)[][] =>
  Array.from({ length: group.rowCount }, (_, row) => group.columns.map((column) => column.text(row)))

/** Spools `records` through a builder with `limits` and reads every group back. */
const roundTrip = async (records: readonly (readonly string[])[], columns: number, limits: RowGroupLimits) => {
  const directory = await tempDir('inventory-spool-')
  const spool = new RowGroupSpool(directory)
  const builder = new RowGroupBuilder(columns, limits)
  for (const record of records) {
    const group = builder.add(record)
    if (group) await spool.append(group)
  }
  const last = builder.flush()
  if (last) await spool.append(last)
  const groups: { firstRow: number; rows: (string | null)[][] }[] = []
  for await (const group of spool.groups()) groups.push({ firstRow: group.firstRow, rows: readAll(group) })
  const bytesOnDisk = spool.bytesOnDisk
  await spool.dispose()
  return { groups, bytesOnDisk, leftOver: await readdir(directory) }
}

describe('RowGroupBuilder', () => {
  it('turns records into column-major groups, empty cells and missing trailing cells into NULL', () => {
    const builder = new RowGroupBuilder(3, { maxRows: 10, maxChars: 1000 })
    builder.add(['a', '', 'c'])
    builder.add(['d'])
    expect(builder.flush()).toEqual({
      firstRow: 1,
      rowCount: 2,
      columns: [
        ['a', 'd'],
        [null, null],
        ['c', null],
      ],
    })
    expect(builder.flush()).toBeUndefined()
  })

  it('closes a group at the row limit and numbers the next one on', () => {
    const builder = new RowGroupBuilder(1, { maxRows: 2, maxChars: 1000 })
    expect(builder.add(['1'])).toBeUndefined()
    expect(builder.add(['2'])).toMatchObject({ firstRow: 1, rowCount: 2 })
    builder.add(['3'])
    expect(builder.flush()).toMatchObject({ firstRow: 3, rowCount: 1 })
    expect(builder.rowsSeen).toBe(3)
  })

  it('closes a group at the character limit, so wide or long cells cannot grow it without bound', () => {
    const builder = new RowGroupBuilder(1, { maxRows: 1000, maxChars: 10 })
    expect(builder.add(['12345'])).toBeUndefined()
    expect(builder.add(['67890'])).toMatchObject({ rowCount: 2 })
  })
})

describe('RowGroupSpool', () => {
  it('keeps a table of one row group in memory and never touches the disk', async () => {
    const { groups, bytesOnDisk } = await roundTrip([['a', 'b']], 2, { maxRows: 10, maxChars: 1000 })
    expect(groups).toEqual([{ firstRow: 1, rows: [['a', 'b']] }])
    expect(bytesOnDisk).toBe(0)
  })

  it('gives back every cell of many groups exactly, through the disk, in order', async () => {
    const cells = ['', 'x', 'é', '😀 emoji', '漢字', 'line\r\nbreak', '"quoted"', '\u0000', 'ß'.repeat(1000)]
    const records = Array.from({ length: 50 }, (_, i) => [
      String(i),
      cells[i % cells.length]!,
      cells[(i * 7) % cells.length]!,
    ])
    const { groups, bytesOnDisk, leftOver } = await roundTrip(records, 3, { maxRows: 7, maxChars: 1_000_000 })
    expect(bytesOnDisk).toBeGreaterThan(0)
    expect(groups.map((g) => g.firstRow)).toEqual([1, 8, 15, 22, 29, 36, 43, 50])
    expect(groups.flatMap((g) => g.rows)).toEqual(records.map((r) => r.map((cell) => (cell === '' ? null : cell))))
    expect(leftOver).toEqual([])
  })

  it('spools cells larger than its scratch buffer', async () => {
    const big = `${'€'.repeat(2_000_000)}end` // 6 MB of UTF-8, more than the 4 MB scratch buffer
    const records = [
      ['a', big],
      ['b', 'small'],
      [big, ''],
    ]
    const { groups } = await roundTrip(records, 2, { maxRows: 1, maxChars: 100_000_000 })
    expect(groups.flatMap((g) => g.rows)).toEqual([
      ['a', big],
      ['b', 'small'],
      [big, null],
    ])
  })
})
