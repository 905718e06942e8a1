/**
 * The footer held as bytes: it is exactly the metadata hyparquet-writer writes from the row groups as objects,
 * for any number of groups, while what it holds per group is that group's serialized metadata and nothing more.
 */
import type { FileMetaData, RowGroup } from 'hyparquet'
import { ByteWriter } from 'hyparquet-writer/src/bytewriter.js'
import { writeMetadata } from 'hyparquet-writer/src/metadata.js'
import { describe, expect, it } from 'vitest'
import { ColumnType } from '../../../functions/export/core/constants.ts'
import { constantValues, stringValues, typedValues } from '../../../functions/export/parquet/chunk-values.ts'
import { writeColumnChunk } from '../../../functions/export/parquet/column-chunk.ts'
import { PAGE_CODEC, parquetSchema } from '../../../functions/export/parquet/encode.ts'
import { FooterMetadata } from '../../../functions/export/parquet/footer.ts'
import { batchesOf } from '../../support/encoder.ts'

const schema = parquetSchema([
  { name: 'name', type: ColumnType.STRING },
  { name: 'size', type: ColumnType.BIGINT },
  { name: 'price', type: ColumnType.DOUBLE },
  { name: 'run', type: ColumnType.STRING },
])

/** A row group of real column chunks (statistics included), its values depending on `group`. */
const rowGroup = (group: number): RowGroup => {
  const rows = 5 + (group % 4)
  const records = Array.from({ length: rows }, (_, i) => [
    i === 2 ? '' : `device ${group}-${i} ü`,
    String(group * 1000 - i),
    i % 3 === 0 ? '' : `${group}.${i}5`,
  ])
  const batches = batchesOf(records, 3, 3)
  const writer = new ByteWriter()
  const columns = [
    writeColumnChunk(writer, 'name', 'BYTE_ARRAY', stringValues(batches, 0, rows), PAGE_CODEC).chunk,
    writeColumnChunk(writer, 'size', 'INT64', typedValues(batches, 1, 'bigint', rows, false), PAGE_CODEC).chunk,
    writeColumnChunk(writer, 'price', 'DOUBLE', typedValues(batches, 2, 'double', rows, false), PAGE_CODEC).chunk,
    writeColumnChunk(writer, 'run', 'BYTE_ARRAY', constantValues('20260101T000000Z-abcdef01', rows), PAGE_CODEC).chunk,
  ]
  return {
    columns,
    total_byte_size: BigInt(writer.offset + group),
    num_rows: BigInt(rows),
    file_offset: BigInt(4 + group * 1000),
    total_compressed_size: BigInt(writer.offset),
  }
}

const FIELDS = {
  version: 1,
  created_by: 'inventory-athena-export',
  key_value_metadata: [{ key: 'inventory.source_table_id', value: 't1' }],
}

describe('the footer metadata', () => {
  it.each([0, 1, 3, 14, 15, 200])('writes the same bytes as writeMetadata for %i row groups', (count) => {
    const groups = Array.from({ length: count }, (_, g) => rowGroup(g))
    const num_rows = groups.reduce((sum, g) => sum + g.num_rows, 0n)
    const expected = new ByteWriter()
    writeMetadata(expected, { ...FIELDS, num_rows, schema, row_groups: groups } as FileMetaData)

    const footer = new FooterMetadata(schema)
    for (const group of groups) footer.addRowGroup(group)
    const written = new ByteWriter()
    footer.write(written, { ...FIELDS, num_rows })
    expect(Buffer.from(written.getBytes())).toEqual(Buffer.from(expected.getBytes()))
  })

  it('holds each row group as its serialized metadata only', () => {
    const footer = new FooterMetadata(schema)
    const empty = new ByteWriter()
    footer.write(empty, { ...FIELDS, num_rows: 0n })
    for (let g = 0; g < 100; g++) footer.addRowGroup(rowGroup(g))
    const full = new ByteWriter()
    footer.write(full, { ...FIELDS, num_rows: 0n })
    expect(footer.rowGroups).toBe(100)
    // The list header grows by a varint byte; everything else held is what the footer writes for the groups.
    expect(footer.rowGroupBytes).toBe(full.offset - empty.offset - 1)
  })
})
