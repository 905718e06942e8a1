/**
 * The Parquet encoder on its own: record batches in, a file out that DuckDB reads back value for value, with row
 * groups, statistics and encodings as intended, and the same bytes whether or not a plan change forced a restart.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { LINEAGE_COLUMNS } from '../../../functions/export/core/lineage.ts'
import { nameColumns } from '../../../functions/export/normalize/columns.ts'
import { RowFingerprinter } from '../../../functions/export/normalize/fingerprint.ts'
import { ColumnTypeInferrer } from '../../../functions/export/normalize/types.ts'
import { stringValues, typedValues } from '../../../functions/export/parquet/chunk-values.ts'
import { ParquetFileEncoder } from '../../../functions/export/parquet/encode.ts'
import { TableEncoder } from '../../../functions/export/parquet/table-encoder.ts'
import type { TableSchema } from '../../../functions/export/schema/table-schema.ts'
import { tempDir } from '../../support/cli.ts'
import { query } from '../../support/duckdb.ts'
import { batchesOf, encode, metadataOf, RUN } from '../../support/encoder.ts'

describe('the Parquet encoder', () => {
  it('writes every type and NULL so that DuckDB reads the same values back, across row groups', async () => {
    const header = ['id', 'big', 'price', 'ok', 'day', 'seen', 'name']
    const records = Array.from({ length: 25 }, (_, i) => [
      String(i),
      i === 3 ? '9223372036854775807' : i === 4 ? '-9223372036854775808' : String(-i * 1_000_000_007),
      i === 5 ? '-0.0' : i % 7 === 0 ? '' : `${i}.25`,
      i % 2 === 0 ? 'true' : 'False',
      i === 6 ? '1969-12-31' : `20${String(10 + i)}-02-28`,
      i === 7 ? '1960-01-01T00:00:00.123Z' : `2026-01-0${1 + (i % 9)} 10:00:0${i % 10}+02:00`,
      i % 5 === 0 ? '' : `Größe ${i % 3} 😀`,
    ])
    const { file, rows } = await encode(header, records, {
      rowsPerBatch: 4,
      rowGroupLimits: { maxRows: 10, maxBytes: 1 << 20 },
    })
    expect(rows).toBe(25)
    const read = await query(
      `SELECT id, big::VARCHAR AS big, price, ok, day::VARCHAR AS day, epoch_ms(seen) AS seen, name, _source_row_number AS n FROM '${file}' ORDER BY n`,
    )
    expect(read).toHaveLength(25)
    read.forEach((row, i) => {
      const record = records[i]!
      expect(row.id).toBe(String(i))
      expect(row.big).toBe(BigInt(record[1]!).toString())
      expect(row.price).toBe(record[2] === '' ? null : Number(record[2]))
      expect(row.ok).toBe(i % 2 === 0)
      expect(row.day).toBe(record[4])
      expect(Number(row.seen)).toBe(Date.parse(record[5]!.replace(' ', 'T')))
      expect(row.name).toBe(record[6] === '' ? null : record[6])
      expect(row.n).toBe(String(i + 1))
    })
    const [signedZero] = await query(`SELECT 1 / price AS x FROM '${file}' WHERE _source_row_number = 6`)
    expect(signedZero!.x).toBe('-Infinity')
    const metadata = metadataOf(await readFile(file))
    // Groups of exactly 10 rows, whatever the batches of 4.
    expect(metadata.row_groups.map((g) => Number(g.num_rows))).toEqual([10, 10, 5])
  })

  it('records min, max and NULL count statistics per row group', async () => {
    const records = [
      ['3', 'b'],
      ['', 'a'],
      ['-7', ''],
      ['10', 'c'],
    ]
    const { bytes } = await encode(['n', 's'], records, {
      rowsPerBatch: 2,
      rowGroupLimits: { maxRows: 4, maxBytes: 1 << 20 },
    })
    const [n, s] = metadataOf(bytes).row_groups[0]!.columns.map((c) => c.meta_data!.statistics!)
    expect(n).toMatchObject({ min_value: -7n, max_value: 10n, null_count: 1n })
    expect(s).toMatchObject({ min_value: 'a', max_value: 'c', null_count: 1n })
  })

  it('dictionary-encodes a repetitive column and writes a column of distinct values plain', async () => {
    const records = Array.from({ length: 3000 }, (_, i) => [`model ${i % 3}`, `serial-${i}-${'x'.repeat(20)}`])
    const { file, bytes } = await encode(['model', 'serial'], records, { rowsPerBatch: 100 })
    const [model, serial] = metadataOf(bytes).row_groups[0]!.columns.map((c) => c.meta_data!)
    expect(model!.encodings).toContain('RLE_DICTIONARY')
    expect(model!.dictionary_page_offset).toBeDefined()
    expect(serial!.encodings).not.toContain('RLE_DICTIONARY')
    expect(serial!.dictionary_page_offset).toBeUndefined()
    const read = await query(`SELECT model, serial FROM '${file}' ORDER BY _source_row_number`)
    expect(read.map((r) => [r.model, r.serial])).toEqual(records)
  })

  it('writes each row the fingerprint of its own cells, with row groups that end inside a batch and after a restart', async () => {
    const header = ['Host', 'Seen', 'Cost']
    const records = Array.from({ length: 45 }, (_, i) => [
      `host-${i % 7}`,
      i % 5 === 0 ? '' : `2026-01-${String(1 + (i % 28)).padStart(2, '0')}`,
      i === 40 ? 'n/a' : `${i}.25`,
    ])
    const limits = { rowsPerBatch: 4, rowGroupLimits: { maxRows: 10, maxBytes: 1 << 20 } }
    const { file, restarts } = await encode(header, records, limits)
    expect(restarts).toBe(1)
    const names = nameColumns(header).map((c) => c.name)
    const expected = new RowFingerprinter(names).fingerprints(batchesOf(records, 3, 45), 45)
    const rows = await query(`SELECT _row_fingerprint AS f FROM '${file}' ORDER BY _source_row_number`)
    expect(rows.map((row) => BigInt(row.f as string))).toEqual([...expected])
  })

  it('writes a row group while the next one fills, and the file holds every row in order', async () => {
    const header = Array.from({ length: 12 }, (_, c) => `c${c}`)
    const records = Array.from({ length: 40 }, (_, r) => header.map((_, c) => `${r}-${c}`))
    const trace: string[] = []
    const { file } = await encode(header, records, {
      rowsPerBatch: 4,
      rowGroupLimits: { maxRows: 16, maxBytes: 1 << 20 },
      trace,
    })
    // Batch 4 closes the first group; the next batches come in while its 15 column chunks are written.
    // Batch 4 closes the first group; the next batches come in while its column chunks are written, and each
    // chunk goes to the output as soon as it is written rather than with the whole group at its end.
    const chunks = header.length + LINEAGE_COLUMNS.length
    const start = trace.lastIndexOf('write', trace.indexOf('push 4'))
    let end = start
    for (let written = 0; written < chunks; end++) if (trace[end] === 'write') written++
    const during = trace.slice(start, end)
    expect(during.filter((event) => event.startsWith('push')).slice(0, 3)).toEqual(['push 4', 'push 5', 'push 6'])
    expect(during.slice(during.indexOf('push 5'), during.indexOf('push 6'))).toContain('write')
    const rows = await query(`SELECT c0, c11 FROM '${file}' ORDER BY _source_row_number`)
    expect(rows.map((row) => [row.c0, row.c11])).toEqual(records.map((r) => [r[0], r[11]]))
  })

  it('restarts from the spool when a late value widens a type, ending with the bytes the final plan gives at once', async () => {
    const records = Array.from({ length: 40 }, (_, i) => [String(i), i === 35 ? 'n/a' : String(i * 2)])
    const limits = { rowsPerBatch: 4, rowGroupLimits: { maxRows: 8, maxBytes: 1 << 20 } }
    const widened = await encode(['id', 'qty'], records, limits)
    const planned = await encode(['id', 'qty'], records, { ...limits, forced: { qty: 'string' } })
    expect(widened.restarts).toBe(1)
    expect(planned.restarts).toBe(0)
    expect(widened.bytes.equals(planned.bytes)).toBe(true)
    const [row] = await query(`SELECT typeof(qty) AS type, qty FROM '${widened.file}' WHERE _source_row_number = 36`)
    expect(row).toEqual({ type: 'VARCHAR', qty: 'n/a' })
  })

  it('encodes from the spool once at the end however often the types widen, waiting for the output as it goes', async () => {
    // qty widens twice (BIGINT -> DOUBLE at row 13, -> VARCHAR at row 27), flag once (BOOLEAN -> VARCHAR at row 20).
    const records = Array.from({ length: 40 }, (_, i) => [
      String(i),
      i === 27 ? 'n/a' : i >= 13 ? `${i}.5` : String(i),
      i === 20 ? 'maybe' : String(i % 2 === 0),
    ])
    const limits = { rowsPerBatch: 4, rowGroupLimits: { maxRows: 8, maxBytes: 1 << 20 } }
    const widened = await encode(['id', 'qty', 'flag'], records, limits)
    const planned = await encode(['id', 'qty', 'flag'], records, {
      ...limits,
      forced: { qty: 'string', flag: 'string' },
    })
    expect(widened.restarts).toBe(1)
    expect(widened.drains).toBe(10)
    expect(planned.drains).toBe(0)
    expect(widened.bytes.equals(planned.bytes)).toBe(true)
    expect(metadataOf(widened.bytes).row_groups).toHaveLength(5)
  })

  it('keeps a published type and puts the values that no longer fit in the __text companion', async () => {
    const previous: TableSchema = {
      version: 1,
      table: 'things',
      sourceTableId: 't1',
      firstExportDate: '2025-12-31',
      lastExportDate: '2025-12-31',
      columns: [{ name: 'qty', header: 'qty', type: 'bigint', firstSeen: '2025-12-31', lastSeen: '2025-12-31' }],
    }
    const records = [['1'], ['many'], [''], ['4']]
    const { file } = await encode(['qty'], records, { previous, rowsPerBatch: 3 })
    const read = await query(`SELECT qty, qty__text FROM '${file}' ORDER BY _source_row_number`)
    expect(read).toEqual([
      { qty: '1', qty__text: null },
      { qty: null, qty__text: 'many' },
      { qty: null, qty__text: null },
      { qty: '4', qty__text: null },
    ])
  })

  it('cuts row groups at the same rows, and writes the same bytes, whatever the batches and on a thread of its own', async () => {
    const header = ['id', 'qty', 'note']
    // qty widens at row 70 (a restart), and the notes' text brings some groups to the byte limit first.
    const records = Array.from({ length: 130 }, (_, i) => [
      String(i),
      i === 70 ? 'n/a' : String(i * 3),
      i % 9 === 0 ? 'x'.repeat(400) : `note ${i % 5}`,
    ])
    const rowGroupLimits = { maxRows: 16, maxBytes: 2000 }
    const files = await Promise.all(
      [
        { rowsPerBatch: 7 },
        { rowsPerBatch: 1 },
        { rowsPerBatch: 50 },
        { rowsPerBatch: 7, thread: true },
        { rowsPerBatch: 1000, thread: true },
      ].map((options) => encode(header, records, { ...options, rowGroupLimits })),
    )
    const [first, ...others] = files
    const groups = metadataOf(first!.bytes).row_groups.map((g) => Number(g.num_rows))
    expect(groups.reduce((sum, rows) => sum + rows, 0)).toBe(130)
    // Some groups end at the byte limit before 16 rows.
    expect(groups.some((rows) => rows < 16)).toBe(true)
    // Batches that end before row 70 restart the file; one of 1,000 rows knows the final plan at once.
    expect(files.map((f) => f.restarts)).toEqual([1, 1, 1, 1, 0])
    for (const other of others) expect(other.bytes.equals(first!.bytes)).toBe(true)
  })

  it('fails as the encoder on this thread does when the thread cannot write its spool', async () => {
    const records = Array.from({ length: 50 }, (_, i) => [String(i)])
    const failures = await Promise.all(
      [false, true].map((thread) =>
        encode(['id'], records, { rowsPerBatch: 5, thread, spoolPath: '/proc/self/none/spool.bin' }).then(
          () => undefined,
          (error: unknown) => String(error),
        ),
      ),
    )
    for (const failure of failures) expect(failure).toMatch(/ENOENT/)
  })

  it('stops a thread encoding mid-table when closed, giving its batches back and leaving no spill file', async () => {
    const dir = await tempDir('inventory-encode-thread-')
    const header = Array.from({ length: 8 }, (_, c) => `c${c}`)
    const records = Array.from({ length: 6000 }, (_, r) => header.map((_, c) => `${r * c} ${'x'.repeat(c * 20)}`))
    const columns = nameColumns(header)
    const types = new ColumnTypeInferrer({ tableId: 't1', columnNames: columns.map((c) => c.name) })
    const recycled: ArrayBuffer[] = []
    const written: Uint8Array[] = []
    const encoder = new TableEncoder(
      {
        tableId: 't1',
        table: 'things',
        exportDate: RUN.exportDate,
        columns,
        types,
        previous: undefined,
        run: RUN,
        spoolPath: path.join(dir, 'spool.bin'),
        // Groups of 500 rows, of which all but 4 KiB spill: the thread writes one while the next fills.
        rowGroupLimits: { maxRows: 500, maxBytes: 1 << 30, inMemoryBytes: 4096 },
        recycle: (bytes) => recycled.push(bytes),
        thread: true,
      },
      { write: (bytes) => written.push(bytes), restart: () => undefined, drained: async () => undefined },
    )
    const batches = batchesOf(records, header.length, 100)
    for (const batch of batches.slice(0, 30)) {
      types.observe(batch)
      await encoder.push(batch)
    }
    await encoder.close()
    // Every batch it took came back, or was the thread's when it stopped; nothing of the groups is left on disk.
    expect(recycled.length).toBeGreaterThan(20)
    expect(recycled.length).toBeLessThanOrEqual(30)
    expect(written.length).toBeGreaterThan(0)
    expect((await readdir(dir)).filter((name) => name.includes('.group'))).toEqual([])
    await expect(encoder.finish()).rejects.toThrow(/closed/)
  })

  it('writes a file with the columns and no row group for a table without rows', async () => {
    const { file, bytes, rows } = await encode(['a', 'b'], [])
    expect(rows).toBe(0)
    expect(metadataOf(bytes).row_groups).toEqual([])
    expect(await query(`SELECT count(*) AS n FROM '${file}'`)).toEqual([{ n: '0' }])
  })
})

describe('ParquetFileEncoder', () => {
  it("makes each column's values only when the writer reaches that column, once, in column order", async () => {
    const columns = [
      { name: 'a', type: 'bigint' as const },
      { name: 'b', type: 'string' as const },
      { name: 'c', type: 'double' as const },
    ]
    const batches = batchesOf(
      [
        ['1', 'x', '0.5'],
        ['', '', '1.5'],
        ['3', 'zé', ''],
      ],
      3,
      2,
    )
    const values = [
      () => typedValues(batches, 0, 'bigint', 3, false),
      () => stringValues(batches, 1, 3),
      () => typedValues(batches, 2, 'double', 3, false),
    ]
    const made: number[] = []
    const makers = values.map((make, i) => () => {
      made.push(i)
      return make()
    })
    const file = new ParquetFileEncoder(columns)
    const parts = [file.start()]
    expect(made).toEqual([])
    parts.push(await file.writeRowGroup(makers, 3))
    expect(made).toEqual([0, 1, 2])
    parts.push(file.finish())
    const path_ = path.join(await tempDir('inventory-encoder-'), 'three.parquet')
    await writeFile(path_, Buffer.concat(parts))
    expect(await query(`SELECT a, b, c FROM '${path_}'`)).toEqual([
      { a: '1', b: 'x', c: 0.5 },
      { a: null, b: null, c: 1.5 },
      { a: '3', b: 'zé', c: null },
    ])
  })
})
