/**
 * The CSV fidelity corpus: committed fixtures (`test/fixtures/csv/<name>.csv` + `<name>.expect.json`), the big ones
 * generated at test time, and the harness that exports one table through the real runner and reads it back.
 */
import { createHash } from 'node:crypto'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { DEMO_TOKEN } from '../../emulator/index.ts'
import type { ColumnType } from '../../functions/export/core/constants.ts'
import type { RunRecord, TableOutcome } from '../../functions/export/core/run-record.ts'
import { type CliResult, runExportInProcess, tempDir, tokenFile } from './cli.ts'
import { query } from './duckdb.ts'

const FIXTURE_DIR = path.resolve(import.meta.dirname, '../fixtures/csv')

/** A value as the expectations write it: bigint and date as text, timestamps as ISO 8601 UTC with milliseconds. */
export type ExpectedValue = string | number | boolean | null

export interface ExpectedColumn {
  readonly name: string
  readonly header: string
  readonly type: ColumnType
}

/** Per-table options, as in the configuration's `tables[]`. */
export type TableOptions = Readonly<Record<string, unknown>>

export type FixtureExpectation =
  | { readonly error: { readonly code: string; readonly message: string } }
  | {
      readonly columns: readonly ExpectedColumn[]
      readonly rows: readonly (readonly ExpectedValue[])[]
      /** The run record's warnings for the table; none when absent. */
      readonly warnings?: readonly string[]
    }

export interface CsvFixture {
  readonly name: string
  readonly description: string
  readonly bytes: Uint8Array
  readonly table: TableOptions
  readonly expect: FixtureExpectation
}

/** The committed fixtures, sorted by name. */
export const loadCsvFixtures = async (): Promise<CsvFixture[]> => {
  const files = (await readdir(FIXTURE_DIR)).filter((file) => file.endsWith('.csv')).sort()
  return Promise.all(
    files.map(async (file) => {
      const name = file.slice(0, -'.csv'.length)
      const bytes = await readFile(path.join(FIXTURE_DIR, file))
      const {
        description,
        table = {},
        ...expect
      } = JSON.parse(await readFile(path.join(FIXTURE_DIR, `${name}.expect.json`), 'utf8')) as {
        description: string
        table?: TableOptions
      } & FixtureExpectation
      return { name, description, bytes, table, expect }
    }),
  )
}

const csvField = (text: string): string => (/[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text)
const csvLine = (fields: readonly string[]): string => `${fields.map(csvField).join(',')}\n`

/** 1.5 MB of text mixing multi-byte characters, delimiters, quotes and line breaks, so it spans many chunks. */
const hugeCell = (): string => {
  const piece = 'Zeile 1, "zitiert" — ü € 😀 漢字\r\n|;\t'
  return piece.repeat(Math.ceil(1_500_000 / piece.length))
}

const WIDE_COLUMNS = 500
const wideValue = (column: number, row: number): { text: string; value: ExpectedValue } => {
  switch (column % 5) {
    case 0:
      return { text: String(column * 1000 + row), value: String(column * 1000 + row) }
    case 1:
      return { text: `${column}.${row}5`, value: Number(`${column}.${row}5`) }
    case 2:
      return { text: row % 2 === 0 ? 'TRUE' : 'false', value: row % 2 === 0 }
    case 3:
      return {
        text: `2024-0${row + 1}-${String((column % 28) + 1).padStart(2, '0')}`,
        value: `2024-0${row + 1}-${String((column % 28) + 1).padStart(2, '0')}`,
      }
    default:
      return { text: `v${column}/${row}`, value: `v${column}/${row}` }
  }
}
const WIDE_TYPES: readonly ColumnType[] = ['bigint', 'double', 'boolean', 'date', 'string']

/**
 * Rows enough for several row groups; the last value of `late` is not a number, so the plan changes at the very
 * end and every batch before it is encoded again from the spool.
 */
const MANY_ROWS = 140_000

/** Fixtures too big to commit, built the same way every time. */
export const generatedFixtures = (): CsvFixture[] => {
  const blob = hugeCell()
  const wideHeaders = Array.from({ length: WIDE_COLUMNS }, (_, c) => `Column ${c + 1}`)
  const wideRows = [0, 1, 2].map((row) => Array.from({ length: WIDE_COLUMNS }, (_, c) => wideValue(c, row)))
  const manyRows: ExpectedValue[][] = []
  const manyLines: string[] = ['n,code,late\n']
  for (let n = 1; n <= MANY_ROWS; n++) {
    const late = n === MANY_ROWS ? 'not a number' : String(n * 7)
    manyLines.push(`${n},A${n},${late}\n`)
    manyRows.push([String(n), `A${n}`, late])
  }
  return [
    {
      name: 'generated-huge-cell',
      description: 'A 1.5 MB cell with multi-byte characters, quotes and line breaks arrives whole.',
      bytes: Buffer.from(`id,blob,after\n${csvLine(['1', blob, 'x'])}${csvLine(['2', 'short', 'y'])}`, 'utf8'),
      table: {},
      expect: {
        columns: [
          { name: 'id', header: 'id', type: 'bigint' },
          { name: 'blob', header: 'blob', type: 'string' },
          { name: 'after', header: 'after', type: 'string' },
        ],
        rows: [
          ['1', blob, 'x'],
          ['2', 'short', 'y'],
        ],
      },
    },
    {
      name: 'generated-500-columns',
      description: '500 columns keep their order, names and types.',
      bytes: Buffer.from(
        `${wideHeaders.join(',')}\n${wideRows.map((row) => row.map((cell) => cell.text).join(',')).join('\n')}\n`,
      ),
      table: {},
      expect: {
        columns: wideHeaders.map((header, c) => ({ name: `column_${c + 1}`, header, type: WIDE_TYPES[c % 5]! })),
        rows: wideRows.map((row) => row.map((cell) => cell.value)),
      },
    },
    {
      name: 'generated-many-rows',
      description:
        'Type inference sees every value: the last of 140,000 rows makes a column STRING, in the first row group too.',
      bytes: Buffer.from(manyLines.join('')),
      table: {},
      expect: {
        columns: [
          { name: 'n', header: 'n', type: 'bigint' },
          { name: 'code', header: 'code', type: 'string' },
          { name: 'late', header: 'late', type: 'string' },
        ],
        rows: manyRows,
      },
    },
  ]
}

export const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex')

/** The warehouse table name a fixture is exported under. */
export const tableNameFor = (tableId: string): string => `t_${tableId.toLowerCase().replace(/[^a-z0-9]+/g, '_')}`

export interface ExportedTable {
  readonly cli: CliResult
  readonly out: string
  readonly record: RunRecord
  readonly outcome: TableOutcome
  /** Every `.parquet` file of table data (folders beginning with `_`, such as `_export_dates/`, hold state). */
  readonly parquetFiles: readonly string[]
}

export const EXPORT_DATE = '2026-03-14'

/** Runs `npm start -- --config ... --out <temp>` in-process for one table of the stand-in at `baseUrl`. */
export const exportOneTable = async (
  baseUrl: string,
  tableId: string,
  options: TableOptions = {},
): Promise<ExportedTable> => {
  const out = await tempDir('inventory-fidelity-')
  const configFile = path.join(out, '..', `${path.basename(out)}.config.json`)
  const config = { source: { baseUrl }, tables: [{ id: tableId, name: tableNameFor(tableId), ...options }] }
  await writeFile(configFile, JSON.stringify(config))
  const cli = await runExportInProcess([
    '--config',
    configFile,
    '--token-file',
    await tokenFile(DEMO_TOKEN),
    '--out',
    out,
    '--date',
    EXPORT_DATE,
  ])
  const runFolder = path.join(out, '_runs', `dt=${EXPORT_DATE}`)
  const [runFile, ...more] = await readdir(runFolder)
  if (runFile === undefined || more.length > 0) throw new Error(`expected one run record in ${runFolder}`)
  const record = JSON.parse(await readFile(path.join(runFolder, runFile), 'utf8')) as RunRecord
  const outcome = record.tables[0]!
  const parquetFiles = (await readdir(out, { recursive: true }))
    .filter((file) => file.endsWith('.parquet') && !file.startsWith('_'))
    .map((file) => path.join(out, file))
  return { cli, out, record, outcome, parquetFiles }
}

export interface ParquetTable {
  /** Column names and DuckDB types, in file order. */
  readonly columns: readonly { name: string; type: string }[]
  /** Rows in `_source_row_number` order, values as `ExpectedValue` (see there). */
  readonly rows: readonly Record<string, ExpectedValue>[]
}

/** The DuckDB type a column of each warehouse type reads back as. */
export const DUCKDB_TYPES: Readonly<Record<ColumnType, string>> = {
  bigint: 'BIGINT',
  double: 'DOUBLE',
  boolean: 'BOOLEAN',
  date: 'DATE',
  timestamp: 'TIMESTAMP WITH TIME ZONE',
  string: 'VARCHAR',
}

const readBackExpression = (name: string, type: string): string => {
  const column = `"${name.replaceAll('"', '""')}"`
  if (type === 'BIGINT' || type === 'DATE') return `CAST(${column} AS VARCHAR) AS ${column}`
  if (type === 'TIMESTAMP WITH TIME ZONE') return `CAST(epoch_ms(${column}) AS VARCHAR) AS ${column}`
  return column
}

/** Reads a Parquet file with DuckDB (no hive partition column), normalizing values for comparison. */
export const readParquetTable = async (file: string): Promise<ParquetTable> => {
  const source = `read_parquet('${file.replaceAll("'", "''")}', hive_partitioning = false)`
  const typed = (await query(`DESCRIBE SELECT * FROM ${source}`)).map((row) => ({
    name: String(row.column_name),
    type: String(row.column_type),
  }))
  const select = typed.map(({ name, type }) => readBackExpression(name, type)).join(', ')
  // Ordered by the source column, not by its VARCHAR alias of the same name.
  const raw = await query(`SELECT ${select} FROM ${source} AS source ORDER BY source._source_row_number`)
  const timestamps = typed.filter((c) => c.type === 'TIMESTAMP WITH TIME ZONE').map((c) => c.name)
  const rows = raw.map((row) => {
    const out = row as Record<string, ExpectedValue>
    for (const name of timestamps) {
      const millis = out[name]
      if (typeof millis === 'string') out[name] = new Date(Number(millis)).toISOString()
    }
    return out
  })
  return { columns: typed, rows }
}
