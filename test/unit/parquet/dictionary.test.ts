/**
 * The columnar writer's format, page by page: what Athena (Trino) relies on, read from the file's own page headers
 * and footer, and the values read back by two independent readers (DuckDB and hyparquet).
 */

import type { ColumnChunk, FileMetaData, PageHeader } from 'hyparquet'
import { parquetHeader } from 'hyparquet/src/column.js'
import { describe, expect, it } from 'vitest'
import { MAX_DICTIONARY_BYTES } from '../../../functions/export/parquet/dictionary.ts'
import { query } from '../../support/duckdb.ts'
import { encode, metadataOf } from '../../support/encoder.ts'
import { readWithHyparquet } from '../../support/hyparquet-read.ts'

/** Every page header of a column chunk, walked from its first page to its end. */
const pagesOf = (bytes: Buffer, chunk: ColumnChunk): PageHeader[] => {
  const meta = chunk.meta_data!
  const start = Number(meta.dictionary_page_offset ?? meta.data_page_offset)
  const end = start + Number(meta.total_compressed_size)
  const reader = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: start }
  const pages: PageHeader[] = []
  while (reader.offset < end) {
    const header = parquetHeader(reader)
    pages.push(header)
    reader.offset += header.compressed_page_size
  }
  expect(reader.offset).toBe(end)
  return pages
}

const chunkNamed = (metadata: FileMetaData, name: string, group = 0): ColumnChunk =>
  metadata.row_groups[group]!.columns.find((c) => c.meta_data!.path_in_schema[0] === name)!

const ROWS = 3000
/** A table with a column of every type, dense and sparse, repetitive and distinct. */
const records = Array.from({ length: ROWS }, (_, i) => [
  String(1000 + i), // id: distinct BIGINT
  `${(i % 40) / 4}`, // low-cardinality DOUBLE (two decimals)
  `${i}.${String(i % 97).padStart(2, '0')}`, // distinct DOUBLE
  i % 3 === 0 ? 'true' : 'false', // BOOLEAN
  `2026-0${1 + (i % 9)}-1${i % 10}`, // DATE
  `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}.${String(i % 50).padStart(3, '0')}Z`, // TIMESTAMP: 300 distinct
  `model ${i % 7}`, // repetitive STRING
  `serial-${i}-${'x'.repeat(12)}`, // distinct STRING
  i % 10 === 0 ? `ticket ${i}` : '', // 90% empty STRING
  i % 4 === 3 ? '' : `CC-${Math.floor(i / 16) % 6}`, // 25% empty STRING, repeating
  '', // always empty
])
const HEADER = ['id', 'uptime', 'price', 'ok', 'day', 'seen', 'model', 'serial', 'ticket', 'cost_center', 'blank']

describe('the columnar Parquet writer', () => {
  it('writes v1 data pages with RLE definition levels, each column in the encoding that compresses smallest, and delta-packed row numbers', async () => {
    const { bytes } = await encode(HEADER, records, { rowsPerBatch: 500 })
    const metadata = metadataOf(bytes)
    const encodingOf = (name: string) => {
      const pages = pagesOf(bytes, chunkNamed(metadata, name))
      for (const page of pages) expect(page.type).toMatch(/^(DATA_PAGE|DICTIONARY_PAGE)$/)
      const data = pages.filter((p) => p.type === 'DATA_PAGE')
      for (const page of data) {
        expect(page.data_page_header).toMatchObject({
          definition_level_encoding: 'RLE',
          repetition_level_encoding: 'RLE',
        })
      }
      const dictionaries = pages.filter((p) => p.type === 'DICTIONARY_PAGE')
      expect(dictionaries.length).toBeLessThanOrEqual(1)
      if (dictionaries.length === 1) expect(pages[0]!.dictionary_page_header!.encoding).toBe('PLAIN')
      return [...new Set(data.map((p) => p.data_page_header!.encoding))].join()
    }
    expect(Object.fromEntries(metadata.schema.slice(1).map((e) => [e.name, encodingOf(e.name)]))).toEqual({
      // Rising by one: deltas.
      id: 'DELTA_BINARY_PACKED',
      // Few values, but repeating in a short cycle, which zstd finds in the plain bytes: smaller than indexes.
      uptime: 'PLAIN',
      price: 'PLAIN',
      ok: 'PLAIN',
      day: 'PLAIN',
      seen: 'DELTA_BINARY_PACKED',
      model: 'RLE_DICTIONARY',
      // Distinct strings of one shape: their lengths delta-packed apart from their bytes compress best.
      serial: 'DELTA_LENGTH_BYTE_ARRAY',
      ticket: 'PLAIN',
      cost_center: 'RLE_DICTIONARY',
      blank: 'PLAIN',
      _export_run_id: 'RLE_DICTIONARY',
      _exported_at: 'RLE_DICTIONARY',
      _source_table_id: 'RLE_DICTIONARY',
      _source_row_number: 'DELTA_BINARY_PACKED',
      // A hash per row: distinct values, so a dictionary never pays.
      _row_fingerprint: 'PLAIN',
    })
    const model = chunkNamed(metadata, 'model').meta_data!
    expect(model.encoding_stats).toEqual([
      { page_type: 'DICTIONARY_PAGE', encoding: 'PLAIN', count: 1 },
      { page_type: 'DATA_PAGE', encoding: 'RLE_DICTIONARY', count: 1 },
    ])
    expect(model.codec).toBe('ZSTD')
  })

  it('declares the physical and logical types Athena maps to its column types', async () => {
    const { bytes } = await encode(HEADER, records.slice(0, 10))
    const types = Object.fromEntries(
      metadataOf(bytes)
        .schema.slice(1)
        .map((e) => [e.name, [e.type, e.repetition_type, e.converted_type, e.logical_type]]),
    )
    expect(types).toMatchObject({
      id: ['INT64', 'OPTIONAL', undefined, undefined],
      uptime: ['DOUBLE', 'OPTIONAL', undefined, undefined],
      ok: ['BOOLEAN', 'OPTIONAL', undefined, undefined],
      day: ['INT32', 'OPTIONAL', 'DATE', { type: 'DATE' }],
      seen: ['INT64', 'OPTIONAL', 'TIMESTAMP_MILLIS', { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' }],
      model: ['BYTE_ARRAY', 'OPTIONAL', 'UTF8', { type: 'STRING' }],
      _source_row_number: ['INT64', 'OPTIONAL', undefined, undefined],
    })
  })

  it('reads back the same rows with DuckDB and with hyparquet', async () => {
    const { file, bytes } = await encode(HEADER, records, {
      rowsPerBatch: 700,
      rowGroupLimits: { maxRows: 1400, maxBytes: 1 << 20 },
    })
    const duck = await query(
      `SELECT id::VARCHAR AS id, uptime, price, ok, day::VARCHAR AS day, epoch_ms(seen)::VARCHAR AS seen, model, serial, ticket, cost_center, blank, _source_row_number::VARCHAR AS n FROM '${file}' ORDER BY _source_row_number`,
    )
    const hyp = await readWithHyparquet(bytes)
    expect(duck).toHaveLength(ROWS)
    expect(hyp).toHaveLength(ROWS)
    records.forEach((record, i) => {
      const expected = {
        id: record[0],
        uptime: Number(record[1]),
        price: Number(record[2]),
        ok: record[3] === 'true',
        day: record[4],
        seen: String(Date.parse(record[5]!)),
        model: record[6],
        serial: record[7],
        ticket: record[8] || null,
        cost_center: record[9] || null,
        blank: null,
        n: String(i + 1),
      }
      expect(duck[i]).toEqual(expected)
      const h = hyp[i]!
      expect({
        ...h,
        id: String(h.id),
        day: (h.day as Date).toISOString().slice(0, 10),
        seen: String((h.seen as Date).getTime()),
        n: String(h._source_row_number),
      }).toMatchObject(expected)
    })
  })

  it('records min, max and NULL count per chunk, numbers by value and strings by their UTF-8 bytes', async () => {
    const { bytes } = await encode(HEADER, records, { rowsPerBatch: 500 })
    const stats = (name: string) => chunkNamed(metadataOf(bytes), name).meta_data!.statistics
    expect(stats('id')).toMatchObject({ min_value: 1000n, max_value: BigInt(999 + ROWS), null_count: 0n })
    expect(stats('uptime')).toMatchObject({ min_value: -0, max_value: 9.75, null_count: 0n })
    expect(stats('ok')).toMatchObject({ min_value: false, max_value: true })
    expect(stats('day')).toMatchObject({ min_value: new Date('2026-01-10'), max_value: new Date('2026-09-19') })
    expect(stats('model')).toMatchObject({ min_value: 'model 0', max_value: 'model 6', null_count: 0n })
    expect(stats('ticket')).toMatchObject({
      min_value: 'ticket 0',
      max_value: 'ticket 990',
      null_count: BigInt(ROWS - 300),
    })
    expect(stats('blank')).toMatchObject({ null_count: BigInt(ROWS) })
    expect(stats('blank')!.min_value).toBeUndefined()
    expect(stats('_source_row_number')).toMatchObject({ min_value: 1n, max_value: BigInt(ROWS) })
  })

  it('makes sparse columns and the row numbers nearly free: levels are compressed with the values', async () => {
    const { bytes } = await encode(HEADER, records, { rowsPerBatch: 500 })
    const size = (name: string) => Number(chunkNamed(metadataOf(bytes), name).meta_data!.total_compressed_size)
    // 3,000 rows: a page header, a few bytes of compressed levels, and (for the 25% empty column) 6 dictionary values.
    expect(size('blank')).toBeLessThan(100)
    expect(size('cost_center')).toBeLessThan(300)
    expect(size('_source_row_number')).toBeLessThan(200)
    expect(size('_export_run_id')).toBeLessThan(150)
  })

  it('writes no dictionary when it would pass 1 MiB, even where it would be smaller', async () => {
    const distinct = Math.ceil(MAX_DICTIONARY_BYTES / 100) + 10
    const long = Array.from({ length: 3 * distinct }, (_, i) => [
      `${String(i % distinct).padStart(8, '0')}${'y'.repeat(92)}`,
    ])
    const { file, bytes } = await encode(['code'], long, {
      rowsPerBatch: 2000,
      rowGroupLimits: { maxRows: 1e6, maxBytes: 1e9 },
    })
    const chunk = chunkNamed(metadataOf(bytes), 'code')
    expect(chunk.meta_data!.dictionary_page_offset).toBeUndefined()
    const pages = pagesOf(bytes, chunk)
    expect(pages.length).toBeGreaterThan(2)
    for (const page of pages) expect(['PLAIN', 'DELTA_LENGTH_BYTE_ARRAY']).toContain(page.data_page_header!.encoding)
    expect(await query(`SELECT count(DISTINCT code) AS n, count(*) AS rows FROM '${file}'`)).toEqual([
      { n: String(distinct), rows: String(3 * distinct) },
    ])
  })
})
