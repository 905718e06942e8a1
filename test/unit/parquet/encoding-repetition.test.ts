/**
 * Columns whose values repeat only at distances a 1,024-value sample cannot see: names cycling through 1,500 in
 * order, and timestamps and two-decimal doubles drawn at random from tens of thousands. Each comes out no larger
 * than DuckDB's file of the same CSV makes it (DuckDB is the reference the bench compares with), in one row group
 * of 120,000 rows as DuckDB writes, and reads back the same, whether the group's copies wait in memory or in
 * the spill file.
 */
import { readdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { encodeCsvRecord } from '../../../emulator/csv.ts'
import { mulberry32 } from '../../../emulator/prng.ts'
import { tempDir } from '../../support/cli.ts'
import { query } from '../../support/duckdb.ts'
import { encode, metadataOf } from '../../support/encoder.ts'
import { readWithHyparquet } from '../../support/hyparquet-read.ts'

const ROWS = 120_000
const random = mulberry32(43)
const draw = (size: number) => Math.floor(random() * size)
const INSTANTS = Array.from({ length: 30_000 }, () => Date.UTC(2026, 0, 1) + draw(180 * 86_400) * 1000)
const AMOUNTS = Array.from({ length: 20_000 }, () => (draw(5_000_000) / 100).toFixed(2))
const HEADER = ['model', 'seen', 'amount', 'site']
const records = Array.from({ length: ROWS }, (_, i) => [
  `Model ${i % 1500}, rev ${i % 7}`,
  `${new Date(INSTANTS[draw(INSTANTS.length)]!).toISOString().slice(0, 19)}Z`,
  AMOUNTS[draw(AMOUNTS.length)]!,
  'FRA-1',
])

const folders: string[] = []
afterAll(() => Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true }))))

/** Each column's compressed bytes in a Parquet file, as DuckDB's parquet_metadata() counts them. */
const columnBytes = async (file: string): Promise<Record<string, number>> =>
  Object.fromEntries(
    (
      await query(
        `SELECT path_in_schema AS name, sum(total_compressed_size)::INTEGER AS bytes FROM parquet_metadata('${file}') GROUP BY 1`,
      )
    ).map((row) => [String(row.name), Number(row.bytes)]),
  )

describe('columns whose values repeat beyond a sample', () => {
  it('come out no larger than DuckDB writes them, in one row group of 120,000 rows', async () => {
    const ours = await encode(HEADER, records, { rowsPerBatch: 4000 })
    folders.push(path.dirname(ours.file))
    expect(metadataOf(ours.bytes).row_groups.map((group) => Number(group.num_rows))).toEqual([ROWS])
    const folder = await tempDir('inventory-repetition-')
    folders.push(folder)
    const csv = path.join(folder, 'things.csv')
    await writeFile(csv, [HEADER, ...records].map((record) => encodeCsvRecord(record)).join(''))
    const reference = path.join(folder, 'duckdb.parquet')
    await query(`COPY (SELECT * FROM read_csv('${csv}')) TO '${reference}' (FORMAT parquet, COMPRESSION zstd)`)
    const [mine, theirs] = [await columnBytes(ours.file), await columnBytes(reference)]
    const ratios = Object.fromEntries(HEADER.map((name) => [name, Number((mine[name]! / theirs[name]!).toFixed(2))]))
    // Every column by name with its ratio, so a failure says which and by how much.
    expect(Object.entries(ratios).filter(([, ratio]) => ratio > 1)).toEqual([])
    const back = await query(
      `SELECT model, strftime(seen, '%Y-%m-%dT%H:%M:%SZ') AS seen, amount, site FROM '${ours.file}' ORDER BY _source_row_number`,
    )
    expect(back.map((row) => [row.model, row.seen, Number(row.amount).toFixed(2), row.site])).toEqual(records)
    const hyparquet = await readWithHyparquet(ours.bytes)
    expect(
      hyparquet.map((row) => [
        row.model,
        `${(row.seen as Date).toISOString().slice(0, 19)}Z`,
        (row.amount as number).toFixed(2),
        row.site,
      ]),
    ).toEqual(records)
    // The same group with all but 64 KiB of its copies in the spill file: the same file, byte for byte.
    const spilled = await encode(HEADER, records, {
      rowsPerBatch: 4000,
      rowGroupLimits: { maxRows: 122_880, maxBytes: 32 * 1024 * 1024, inMemoryBytes: 64 * 1024 },
    })
    folders.push(path.dirname(spilled.file))
    expect(spilled.bytes.equals(ours.bytes)).toBe(true)
    // The spill file went with the encoder's close(); the batch spool is its owner's to delete.
    expect(await readdir(path.dirname(spilled.file))).toEqual(expect.not.arrayContaining(['spool.bin.group']))
  }, 60_000)

  it('writes a chunk that zstd would make larger uncompressed, and it reads back', async () => {
    const rows = Array.from({ length: 5000 }, (_, i) => ['managed', `${String(i).repeat(3)}-${i % 13}`])
    const ours = await encode(['state', 'tag'], rows, { rowsPerBatch: 1000 })
    folders.push(path.dirname(ours.file))
    const codecs = Object.fromEntries(
      metadataOf(ours.bytes).row_groups[0]!.columns.map((c) => [c.meta_data!.path_in_schema[0], c.meta_data!.codec]),
    )
    expect(codecs).toMatchObject({ state: 'UNCOMPRESSED', tag: 'ZSTD', _export_run_id: 'UNCOMPRESSED' })
    const back = await query(`SELECT state, tag FROM '${ours.file}' ORDER BY _source_row_number`)
    expect(back.map((row) => [row.state, row.tag])).toEqual(rows)
    expect((await readWithHyparquet(ours.bytes)).map((row) => [row.state, row.tag])).toEqual(rows)
  })
})
