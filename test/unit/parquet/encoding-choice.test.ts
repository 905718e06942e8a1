/**
 * Encodings chosen per column chunk by measurement: data shaped for an encoding comes out in it, and every
 * encoding the writer can choose reads back the same values, NULLs and types through DuckDB and hyparquet, with
 * its statistics and the encodings listed in the chunk's metadata.
 */

import type { ColumnChunk, FileMetaData } from 'hyparquet'
import { describe, expect, it } from 'vitest'
import { mulberry32 } from '../../../emulator/prng.ts'
import { query } from '../../support/duckdb.ts'
import { encode, metadataOf } from '../../support/encoder.ts'
import { readWithHyparquet } from '../../support/hyparquet-read.ts'

const ROWS = 6000
const DAY_MS = 86_400_000
const random = mulberry32(31)
const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1))
const UPTIMES = Array.from({ length: 40 }, () => (int(0, 9000) / 100).toFixed(2))
const SITES = ['FRA', 'MUC', 'NYC', 'SGP', 'TYO']

let id = 5000
let seenMs = Date.UTC(2026, 0, 1)
/** Columns shaped like an inventory's: each the kind of data one encoding is for. */
const records = Array.from({ length: ROWS }, (_, i) => {
  id += int(1, 5)
  seenMs += int(1, 600) * 1000
  return [
    String(id), // rising integers: deltas
    i % 10 === 3 ? '' : `${new Date(seenMs).toISOString().slice(0, 19)}Z`, // rising timestamps, 10% NULL: deltas
    new Date(Date.UTC(2016, 0, 1) + int(0, 3650) * DAY_MS).toISOString().slice(0, 10), // dates over ten years
    new Date(Date.UTC(2026, 0, 1) + int(0, 29) * DAY_MS).toISOString().slice(0, 10), // 30 dates: a dictionary
    i % 7 === 0 ? '' : UPTIMES[int(0, UPTIMES.length - 1)]!, // 40 two-decimal values, unordered: a dictionary
    (int(0, 500_000) / 100).toFixed(2), // distinct two-decimal doubles: plain
    `${SITES[int(0, 4)]!.toLowerCase()}-${String(int(0, 99_999)).padStart(5, '0')}`, // host names: delta lengths
    `${SITES[int(0, 4)]}-${['LT', 'PC', 'SRV', 'VM'][int(0, 3)]}-${String(100_000 + i)}`, // rising asset names: plain
    SITES[int(0, 4)]!, // low cardinality: a dictionary
  ]
})
const HEADER = ['id', 'seen', 'bought', 'audited', 'uptime', 'cost', 'host', 'asset', 'site']

const chunkNamed = (metadata: FileMetaData, name: string): ColumnChunk =>
  metadata.row_groups[0]!.columns.find((c) => c.meta_data!.path_in_schema[0] === name)!

/** The encoding of the chunk's data pages, from the chunk's metadata. */
const dataEncoding = (metadata: FileMetaData, name: string): string => {
  const stats = chunkNamed(metadata, name).meta_data!.encoding_stats!
  return stats
    .filter((s) => s.page_type === 'DATA_PAGE')
    .map((s) => s.encoding)
    .join()
}

describe('encodings chosen per column chunk by measurement', () => {
  it('delta-packs rising integers and timestamps and random host names, gives low-cardinality doubles, dates and strings a dictionary, and leaves distinct doubles and rising asset names plain', async () => {
    const { bytes } = await encode(HEADER, records, { rowsPerBatch: 1000 })
    const metadata = metadataOf(bytes)
    expect(Object.fromEntries(HEADER.map((name) => [name, dataEncoding(metadata, name)]))).toMatchObject({
      id: 'DELTA_BINARY_PACKED',
      seen: 'DELTA_BINARY_PACKED',
      audited: 'RLE_DICTIONARY',
      uptime: 'RLE_DICTIONARY',
      cost: 'PLAIN',
      host: 'DELTA_LENGTH_BYTE_ARRAY',
      asset: 'PLAIN',
      site: 'RLE_DICTIONARY',
    })
  })

  it('lists each chunk encoding in its metadata, and a dictionary page only where the chunk is dictionary-encoded', async () => {
    const { bytes } = await encode(HEADER, records, { rowsPerBatch: 1000 })
    const metadata = metadataOf(bytes)
    for (const name of HEADER) {
      const meta = chunkNamed(metadata, name).meta_data!
      const encoding = dataEncoding(metadata, name)
      expect(meta.encodings).toContain(encoding)
      expect(meta.encodings).toContain('RLE')
      if (encoding === 'RLE_DICTIONARY') {
        expect(meta.dictionary_page_offset).toBeDefined()
        expect(meta.encodings).toContain('PLAIN')
      } else {
        expect(meta.dictionary_page_offset).toBeUndefined()
      }
    }
    const listed = await query(
      `SELECT path_in_schema AS name, encodings FROM parquet_metadata('${(await encode(HEADER, records)).file}') WHERE path_in_schema IN ('id', 'seen', 'uptime', 'cost')`,
    )
    expect(Object.fromEntries(listed.map((r) => [r.name, r.encodings]))).toEqual({
      id: 'RLE, DELTA_BINARY_PACKED',
      seen: 'RLE, DELTA_BINARY_PACKED',
      uptime: 'PLAIN, RLE, RLE_DICTIONARY',
      cost: 'RLE, PLAIN',
    })
  })

  it('reads back every value, NULL and type of each encoding with DuckDB and with hyparquet, in one row group and across ten', async () => {
    // One group of 6,000 rows, and ten of 600, where string chunks after the first follow its measurement.
    const files = [
      await encode(HEADER, records, { rowsPerBatch: 1000 }),
      await encode(HEADER, records, { rowsPerBatch: 600, rowGroupLimits: { maxRows: 600, maxBytes: 1 << 20 } }),
    ]
    expect(files.map(({ bytes }) => metadataOf(bytes).row_groups.length)).toEqual([1, 10])
    // Every encoding the writer chooses, for each physical type it applies to, is among these chunks.
    const chosen = new Set(
      files.flatMap(({ bytes }) =>
        metadataOf(bytes).row_groups.flatMap((group) =>
          group.columns.flatMap((c) =>
            c
              .meta_data!.encoding_stats!.filter((e) => e.page_type === 'DATA_PAGE')
              .map((e) => `${c.meta_data!.type} ${e.encoding}`),
          ),
        ),
      ),
    )
    for (const kind of [
      'INT64 DELTA_BINARY_PACKED',
      'INT32 DELTA_BINARY_PACKED',
      'INT32 RLE_DICTIONARY',
      'DOUBLE RLE_DICTIONARY',
      'DOUBLE PLAIN',
      'BYTE_ARRAY PLAIN',
      'BYTE_ARRAY DELTA_LENGTH_BYTE_ARRAY',
      'BYTE_ARRAY RLE_DICTIONARY',
    ])
      expect(chosen).toContain(kind)
    for (const { file, bytes } of files) {
      const duck = await query(
        `SELECT id::VARCHAR AS id, epoch_ms(seen)::VARCHAR AS seen, bought::VARCHAR AS bought, audited::VARCHAR AS audited, uptime, cost, host, asset, site FROM '${file}' ORDER BY _source_row_number`,
      )
      const hyp = await readWithHyparquet(bytes)
      expect(duck).toHaveLength(ROWS)
      expect(hyp).toHaveLength(ROWS)
      records.forEach((record, i) => {
        const expected = {
          id: record[0],
          seen: record[1] ? String(Date.parse(record[1])) : null,
          bought: record[2],
          audited: record[3],
          uptime: record[4] ? Number(record[4]) : null,
          cost: Number(record[5]),
          host: record[6],
          asset: record[7],
          site: record[8],
        }
        expect(duck[i]).toEqual(expected)
        const h = hyp[i]!
        expect({
          ...h,
          id: String(h.id),
          seen: h.seen === null ? null : String((h.seen as Date).getTime()),
          bought: (h.bought as Date).toISOString().slice(0, 10),
          audited: (h.audited as Date).toISOString().slice(0, 10),
        }).toMatchObject(expected)
      })
    }
  })

  it('records min, max and NULL count for delta-packed and dictionary-encoded chunks', async () => {
    const { bytes } = await encode(HEADER, records, { rowsPerBatch: 1000 })
    const metadata = metadataOf(bytes)
    const stats = (name: string) => chunkNamed(metadata, name).meta_data!.statistics
    const seen = records.map((r) => r[1]!).filter((s) => s !== '')
    expect(stats('id')).toMatchObject({ min_value: BigInt(records[0]![0]!), max_value: BigInt(id), null_count: 0n })
    expect(stats('seen')).toMatchObject({
      min_value: new Date(seen[0]!),
      max_value: new Date(seen.at(-1)!),
      null_count: BigInt(ROWS - seen.length),
    })
    const uptimes = records.map((r) => r[4]!).filter((s) => s !== '')
    expect(stats('uptime')).toMatchObject({
      min_value: Math.min(...uptimes.map(Number)),
      max_value: Math.max(...uptimes.map(Number)),
      null_count: BigInt(ROWS - uptimes.length),
    })
    const sites = records.map((r) => r[8]!).sort()
    expect(stats('site')).toMatchObject({ min_value: sites[0], max_value: sites.at(-1), null_count: 0n })
  })
})
