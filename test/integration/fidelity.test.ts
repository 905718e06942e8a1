/**
 * Every fixture of the CSV corpus goes through the real runner against the stand-in service, and the outcome is
 * checked exactly: the error, or the Parquet contents read back with DuckDB and the run record.
 */
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { LINEAGE_COLUMNS } from '../../functions/export/core/lineage.ts'
import {
  type CsvFixture,
  DUCKDB_TYPES,
  EXPORT_DATE,
  type ExpectedColumn,
  type ExpectedValue,
  exportOneTable,
  generatedFixtures,
  loadCsvFixtures,
  readParquetTable,
  sha256Hex,
  tableNameFor,
} from '../support/fixtures.ts'

const committed = await loadCsvFixtures()
const fixtures: CsvFixture[] = [...committed, ...generatedFixtures()]
const failing = fixtures.filter((f) => 'error' in f.expect)
const exported = fixtures.filter((f) => !('error' in f.expect))

let emulator: RunningEmulator
beforeAll(async () => {
  emulator = await startInventoryEmulator({
    tables: fixtures.map((f) => ({ id: f.name, title: f.name, rawCsv: f.bytes })),
  })
})
afterAll(() => emulator.close())

const existing = async (folder: string): Promise<string[]> => readdir(folder).catch(() => [])

describe('the corpus', () => {
  it('holds at least 30 committed CSV files, each with an expectation', () => {
    expect(committed.length).toBeGreaterThanOrEqual(30)
    for (const fixture of committed) expect(fixture.expect).toSatisfy((e) => 'error' in e || 'rows' in e)
  })
})

describe('a table that cannot be exported faithfully fails', () => {
  it.each(failing.map((f) => [f.name, f.description, f] as const))('%s: %s', async (_name, _description, fixture) => {
    const expected = (fixture.expect as { error: { code: string; message: string } }).error
    const { cli, outcome, parquetFiles, out } = await exportOneTable(emulator.baseUrl, fixture.name, fixture.table)

    expect(cli.exitCode).toBe(1)
    expect(outcome).toMatchObject({ tableId: fixture.name, status: 'failed', httpStatus: 200, objects: [] })
    expect(outcome.bytesReceived).toBe(fixture.bytes.length)
    expect(outcome.error?.code).toBe(expected.code)
    expect(outcome.error?.message).toBe(expected.message)
    expect(parquetFiles).toEqual([])
    expect(await existing(path.join(out, '_tmp'))).toEqual([])
  })
})

/** The fingerprint is checked by test/unit/normalize/fingerprint.test.ts; here only that every row has one. */
const lineageNames = LINEAGE_COLUMNS.map((c) => c.name).filter((name) => name !== '_row_fingerprint')

describe('a table is exported with every value intact', () => {
  it.each(exported.map((f) => [f.name, f.description, f] as const))('%s: %s', async (_name, _description, fixture) => {
    const {
      columns,
      rows,
      warnings = [],
    } = fixture.expect as {
      columns: readonly ExpectedColumn[]
      rows: readonly (readonly ExpectedValue[])[]
      warnings?: readonly string[]
    }
    const { cli, record, outcome, parquetFiles, out } = await exportOneTable(
      emulator.baseUrl,
      fixture.name,
      fixture.table,
    )
    expect(cli.exitCode, cli.stderr).toBe(0)

    // The run record: what arrived, and what it became.
    const key = `${tableNameFor(fixture.name)}/dt=${EXPORT_DATE}/data.parquet`
    expect(outcome).toMatchObject({
      tableId: fixture.name,
      status: 'succeeded',
      httpStatus: 200,
      bytesReceived: fixture.bytes.length,
      sha256: sha256Hex(fixture.bytes),
      rows: rows.length,
      objects: [{ key }],
    })
    expect(outcome.columns).toEqual([...columns, ...LINEAGE_COLUMNS])
    expect(outcome.warnings ?? []).toEqual(warnings)
    expect(parquetFiles).toEqual([path.join(out, key)])

    // The Parquet file: names, types and every value, read back by DuckDB.
    const table = await readParquetTable(parquetFiles[0]!)
    expect(table.columns).toEqual([
      ...columns.map(({ name, type }) => ({ name, type: DUCKDB_TYPES[type] })),
      ...LINEAGE_COLUMNS.map(({ name, type }) => ({ name, type: DUCKDB_TYPES[type] })),
    ])
    const values = table.rows.map((row) => columns.map((c) => row[c.name]))
    expect(values).toEqual(rows)
    const lineage = table.rows.map((row) => lineageNames.map((name) => row[name]))
    expect(lineage).toEqual(
      rows.map((_, i) => [record.runId, record.startedAt, fixture.name, String(i + 1)] as ExpectedValue[]),
    )
    expect(table.rows.every((row) => typeof row._row_fingerprint === 'string')).toBe(true)
  })
})
