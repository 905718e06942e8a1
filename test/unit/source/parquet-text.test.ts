/**
 * A date read back in row slices, page by page (source/parquet-text.ts), gives the CSV records, field for field, and
 * the rows left out, that hyparquet's whole-group read spelt with `cellText` gave (test/support/parquet-text-reference.ts),
 * with fields quoted only where they must be (strict csv-parse reads both):
 * for every column type the export writes, NULLs, quotes, line breaks, non-ASCII and invalid-looking text, a leading
 * byte-order mark, integers past 2^53, doubles with exponents and -0, dates and instants at the four-digit years'
 * ends, a typed column's misfits in its companion, registry types other than the file's, several row groups and
 * several pages per chunk, and filters.
 */
import { rm } from 'node:fs/promises'
import path from 'node:path'
import { parse } from 'csv-parse/sync'
import type { AsyncBuffer } from 'hyparquet'
import { parquetWriteBuffer } from 'hyparquet-writer'
import { afterAll, describe, expect, it } from 'vitest'
import { mulberry32 } from '../../../emulator/prng.ts'
import { ColumnType } from '../../../functions/export/core/constants.ts'
import { parquetSchema } from '../../../functions/export/parquet/encode.ts'
import type { TableSchema } from '../../../functions/export/schema/table-schema.ts'
import { csvRecords, type TextColumn, type TextFilter } from '../../../functions/export/source/parquet-text.ts'
import { encode, metadataOf } from '../../support/encoder.ts'
import { referenceRecords } from '../../support/parquet-text-reference.ts'

const folders: string[] = []
afterAll(() => Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true }))))

const HEADER = ['name', 'count', 'ratio', 'flag', 'day', 'seen', 'ram', 'notes']

const table = (seed: number, rows: number, longNotes: boolean): string[][] => {
  const random = mulberry32(seed)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!
  const maybe = (text: string) => (random() < 0.15 ? '' : text)
  const names = ['plain', 'with "quotes"', 'a, b', 'two\nlines', 'crlf\r\nin it', 'Zürich ✓', '\uFEFFbom first', '"']
  const counts = ['0', '-1', '42', '9007199254740993', '-9223372036854775808', '9223372036854775807', '123456789012']
  const ratios = ['0.5', '-0.0', '12.25', '1.5e-7', '3.0e21', '-2.5E+300', '100.0', '0.1']
  const days = ['0001-01-01', '9999-12-31', '1970-01-01', '1969-12-31', '2026-02-28', '2000-02-29']
  const seen = ['2026-01-02T03:04:05.678Z', '2026-01-02T03:04:05Z', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z']
  // Seed 4: dates and instants rising one by one, which the writer delta-packs.
  const rising = seed === 4
  return Array.from({ length: rows }, (_, i) => [
    maybe(`${pick(names)} ${i % 97}`),
    maybe(pick(counts)),
    maybe(pick(ratios)),
    maybe(random() < 0.5 ? 'true' : 'false'),
    maybe(rising ? new Date(Date.UTC(1990, 0, 1 + i)).toISOString().slice(0, 10) : pick(days)),
    maybe(rising ? new Date(Date.UTC(2026, 0, 1) + 1000 * i + (i % 1000)).toISOString() : pick(seen)),
    i === 0 || random() < 0.1 ? 'n/a' : maybe(String(Math.floor(random() * 64))),
    maybe(longNotes ? `note ${i} `.repeat(300 + Math.floor(random() * 200)) : pick(names)),
  ])
}

/** A registry that has `ram` as a bigint already: its misfits ('n/a') go to `ram__text`. */
const registry: TableSchema = {
  version: 1,
  table: 'things',
  sourceTableId: 't1',
  firstExportDate: '2025-12-31',
  lastExportDate: '2025-12-31',
  columns: [{ name: 'ram', header: 'ram', type: ColumnType.BIGINT, firstSeen: '2025-12-31', lastSeen: '2025-12-31' }],
}

const asyncBuffer = (bytes: Buffer): AsyncBuffer => ({
  byteLength: bytes.length,
  slice: (start, end = bytes.length) =>
    bytes.buffer.slice(bytes.byteOffset + start, bytes.byteOffset + end) as ArrayBuffer,
})

const sliced = async (bytes: Buffer, columns: readonly TextColumn[], filters: readonly TextFilter[]) => {
  const parts: Buffer[] = []
  let removed = 0
  for await (const chunk of csvRecords({
    readAt: async (target, position) => {
      target.set(bytes.subarray(position, position + target.length))
    },
    metadata: metadataOf(bytes),
    columns,
    filters,
    cancelled: () => false,
    onRemoved: () => removed++,
  })) {
    // A chunk's bytes are reused once two more chunks are taken (csv-fields.ts): kept, it is copied.
    parts.push(Buffer.from(chunk))
  }
  return { text: Buffer.concat(parts), removed }
}

/** The records of a CSV text, read strictly (a stray quote fails), with each field's quoting. */
const recordsOf = (text: Buffer) => parse(text, { relax_column_count: false, skip_empty_lines: false }) as string[][]

/** The same records, and no more bytes than quoting every field took. */
const expectSameRecords = (mine: Buffer, reference: Buffer) => {
  expect(recordsOf(mine)).toEqual(recordsOf(reference))
  expect(mine.length).toBeLessThanOrEqual(reference.length)
}

const columnsOf = (types: Record<string, ColumnType>): TextColumn[] =>
  HEADER.map((name) => ({ name, type: types[name]!, ...(name === 'ram' ? { companion: 'ram__text' } : {}) }))

const FILE_TYPES = {
  name: ColumnType.STRING,
  count: ColumnType.BIGINT,
  ratio: ColumnType.DOUBLE,
  flag: ColumnType.BOOLEAN,
  day: ColumnType.DATE,
  seen: ColumnType.TIMESTAMP,
  ram: ColumnType.BIGINT,
  notes: ColumnType.STRING,
}

describe('a date read back in row slices', () => {
  it.each([
    { seed: 1, rows: 5000, longNotes: false, maxRows: 1200 },
    { seed: 2, rows: 3000, longNotes: true, maxRows: 122_880 },
    { seed: 3, rows: 7, longNotes: false, maxRows: 3 },
    { seed: 4, rows: 4000, longNotes: false, maxRows: 122_880 },
  ])(
    'is the whole-group read, record for record (seed $seed, $rows rows)',
    async ({ seed, rows, longNotes, maxRows }) => {
      const encoded = await encode(HEADER, table(seed, rows, longNotes), {
        rowsPerBatch: 700,
        previous: registry,
        rowGroupLimits: { maxRows, maxBytes: 32 * 1024 * 1024 },
      })
      folders.push(path.dirname(encoded.file))
      const metadata = metadataOf(encoded.bytes)
      expect(metadata.schema.map((element) => element.name)).toContain('ram__text')
      if (longNotes) {
        // The long column spans pages, which the slices cross.
        const notes = metadata.row_groups[0]!.columns.find((c) => c.meta_data!.path_in_schema[0] === 'notes')!
        expect(Number(notes.meta_data!.total_uncompressed_size)).toBeGreaterThan(3 * 1024 * 1024)
      }
      const file = asyncBuffer(encoded.bytes)
      // As stored, and read under other registry types: an instant as a date, a date as an instant.
      for (const types of [FILE_TYPES, { ...FILE_TYPES, seen: ColumnType.DATE, day: ColumnType.TIMESTAMP }]) {
        const columns = columnsOf(types)
        const reference = await referenceRecords(file, metadata, columns, [])
        const mine = await sliced(encoded.bytes, columns, [])
        expectSameRecords(mine.text, reference.text)
      }
      const columns = columnsOf(FILE_TYPES)
      const filterSets: TextFilter[][] = [
        [{ index: 6, matches: (text) => text === 'n/a' }],
        [
          { index: 1, matches: (text) => text === '42' },
          { index: 5, matches: (text) => text.startsWith('2026') },
        ],
        [{ index: 4, matches: (text) => text === '' }],
        [{ index: -1, matches: () => true }],
      ]
      for (const filters of filterSets) {
        const reference = await referenceRecords(file, metadata, columns, filters)
        const mine = await sliced(encoded.bytes, columns, filters)
        expect(mine.removed).toBe(reference.removed)
        expectSameRecords(mine.text, reference.text)
      }
    },
  )

  it('reads pages this exporter does not write (v2 pages, as hyparquet-writer writes them) as hyparquet converts them', async () => {
    const rows = 3000
    const random = mulberry32(5)
    const sometimes = <T>(value: T): T | null => (random() < 0.2 ? null : value)
    const columnData = [
      { name: 'name', data: Array.from({ length: rows }, (_, i) => sometimes(`"x", ${i % 13} ✓`)) },
      { name: 'count', data: Array.from({ length: rows }, (_, i) => sometimes(BigInt(i) * 1_000_000_007n)) },
      { name: 'ratio', data: Array.from({ length: rows }, (_, i) => sometimes(i % 7 === 0 ? -0 : i / 8)) },
      { name: 'flag', data: Array.from({ length: rows }, (_, i) => sometimes(i % 3 === 0)) },
      {
        name: 'day',
        data: Array.from({ length: rows }, (_, i) => sometimes(new Date(Date.UTC(2020, 0, 1 + (i % 400))))),
      },
      { name: 'seen', data: Array.from({ length: rows }, (_, i) => sometimes(new Date(1_700_000_000_000 + 1234 * i))) },
    ]
    const columns = columnData.map(({ name }) => ({ name, type: FILE_TYPES[name as keyof typeof FILE_TYPES] }))
    const schema = parquetSchema(columns)
    const bytes = Buffer.from(parquetWriteBuffer({ columnData, schema, codec: 'UNCOMPRESSED', rowGroupSize: 1000 }))
    const metadata = metadataOf(bytes)
    const pageTypes = metadata.row_groups.flatMap((g) => g.columns.flatMap((c) => c.meta_data!.encoding_stats ?? []))
    expect(new Set(pageTypes.map((stat) => stat.page_type))).toContain('DATA_PAGE_V2')
    for (const types of [FILE_TYPES, { ...FILE_TYPES, seen: ColumnType.DATE }]) {
      const text = columns.map((c) => ({ ...c, type: types[c.name as keyof typeof FILE_TYPES] }))
      const reference = await referenceRecords(asyncBuffer(bytes), metadata, text, [])
      const mine = await sliced(bytes, text, [])
      expectSameRecords(mine.text, reference.text)
    }
  })
})
