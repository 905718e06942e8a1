/**
 * `npm run bench:shapes`: bytes only, no timing. Exports the generated tables of bench/shapes.ts and the bench's
 * own three tables through the export path (the CLI against the stand-in), has DuckDB copy the same CSVs to zstd
 * Parquet, and prints every data column's bytes beside DuckDB's, marking each over the limit (1.25 x), and each
 * table's data columns against DuckDB's. Exits 1 when a column is over the limit or a table's data columns
 * over 1.0 x, so a regression on a shape nobody tuned for shows up in one run.
 */
import { once } from 'node:events'
import { createWriteStream, existsSync } from 'node:fs'
import { mkdir, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { DuckDBInstance } from '@duckdb/node-api'
import { encodeCsvRecord } from '../emulator/csv.ts'
import { DEMO_TOKEN, startInventoryEmulator } from '../emulator/index.ts'
import type { Row } from '../emulator/tables.ts'
import { NODE_RUNTIME_FLAGS } from '../functions/export/core/constants.ts'
import { measureChild } from './child.ts'
import { benchInput, DATASETS, type Dataset } from './generate.ts'
import { compareDataColumns, type DataColumnsComparison, formatComparison } from './parquet-columns.ts'
import { SHAPE_COLUMNS, shapeRows, shapeTables } from './shapes.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
/** A column over this many times DuckDB's bytes is marked, and fails the run. */
export const COLUMN_LIMIT = 1.25
/** A table's data columns together over this many times DuckDB's bytes fail the run. */
export const TABLE_LIMIT = 1.0

const USAGE = `Usage: npm run bench:shapes -- [--rows N] [--seed N] [--size-mb N] [--skip-datasets] [--dir DIR]

Bytes only: each data column of the generated tables (and of the bench's own tables) beside DuckDB's.

Flags:
  --rows N         rows per generated table (default 200000)
  --seed N         seed of the generated tables' parameters and values (default 20261201)
  --size-mb N      size of the bench's own tables in MB (default 60)
  --skip-datasets  leave out the bench's own tables
  --dir DIR        working folder (default .bench/shapes)
  -h, --help       this text
`

const usageError = (message: string): never => {
  process.stderr.write(`error [USAGE_INVALID]: ${message}\nnext step: run with --help for the list of flags\n`)
  process.exit(2)
}

const parsed = (() => {
  try {
    return parseArgs({
      options: {
        rows: { type: 'string', default: '200000' },
        seed: { type: 'string', default: '20261201' },
        'size-mb': { type: 'string', default: '60' },
        'skip-datasets': { type: 'boolean', default: false },
        dir: { type: 'string', default: path.join(ROOT, '.bench/shapes') },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values
  } catch (error) {
    return usageError((error as Error).message)
  }
})()
if (parsed.help) {
  process.stdout.write(USAGE)
  process.exit(0)
}
const positive = (flag: string, value: string): number => {
  const number = Number(value)
  return Number.isFinite(number) && number > 0
    ? number
    : usageError(`--${flag} must be a positive number, got "${value}"`)
}
const rows = Math.round(positive('rows', parsed.rows))
const seed = Math.round(positive('seed', parsed.seed))
const sizeMb = positive('size-mb', parsed['size-mb'])
const workDir = path.resolve(parsed.dir)
const log = (line: string) => process.stderr.write(`${line}\n`)

interface BenchTable {
  readonly name: string
  readonly description: string
  readonly file: string
  readonly columns: readonly string[]
}

const writeCsv = async (file: string, columns: readonly string[], body: Iterable<Row>): Promise<void> => {
  if (existsSync(file)) return
  const partial = `${file}.partial`
  const out = createWriteStream(partial)
  let pending = encodeCsvRecord(columns)
  for (const row of body) {
    pending += encodeCsvRecord(row)
    if (pending.length >= 256 * 1024) {
      if (!out.write(pending)) await once(out, 'drain')
      pending = ''
    }
  }
  out.end(pending)
  await once(out, 'finish')
  await rename(partial, file)
}

const tables = async (): Promise<BenchTable[]> => {
  const generated: BenchTable[] = []
  for (const shape of shapeTables(seed)) {
    const file = path.join(workDir, `${shape.name}-${seed}-${rows}-rows.csv`)
    await writeCsv(file, SHAPE_COLUMNS, shapeRows(shape, rows))
    const description = `${shape.distinct} distinct, ${shape.skewed ? 'skewed' : 'uniform'}, cycle ${shape.cycle}`
    generated.push({ name: shape.name, description, file, columns: SHAPE_COLUMNS })
  }
  if (parsed['skip-datasets']) return generated
  // The bench's own tables; the generated shapes are above, at this run's seed and size.
  for (const dataset of (Object.keys(DATASETS) as Dataset[]).filter((name) => !name.startsWith('shapes_'))) {
    const input = await benchInput(workDir, sizeMb, dataset)
    const description = `the bench's table, ${input.rows} rows`
    generated.push({ name: dataset, description, file: input.file, columns: DATASETS[dataset].columns })
  }
  return generated
}

const duckdbCopy = async (csv: string, parquet: string): Promise<void> => {
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' })
  const connection = await instance.connect()
  try {
    const quoted = (file: string) => `'${file.replaceAll("'", "''")}'`
    await connection.run(
      `COPY (SELECT * FROM read_csv(${quoted(csv)})) TO ${quoted(parquet)} (FORMAT parquet, COMPRESSION zstd)`,
    )
  } finally {
    connection.closeSync()
    instance.closeSync()
  }
}

export interface TableVerdict {
  readonly table: string
  readonly description: string
  readonly comparison: DataColumnsComparison
  readonly overLimit: readonly string[]
  readonly peakRssMiB: number
}

const main = async () => {
  await mkdir(workDir, { recursive: true })
  log(`generating (or reusing) the tables in ${workDir} ...`)
  const all = await tables()
  const tokenFile = path.join(workDir, 'token')
  await writeFile(tokenFile, DEMO_TOKEN)
  const emulator = await startInventoryEmulator({
    tables: all.map((t) => ({ id: t.name, title: t.name, csvFile: t.file })),
  })
  const out = path.join(workDir, 'warehouse')
  await rm(out, { recursive: true, force: true })
  const peaks = new Map<string, number>()
  try {
    for (const table of all) {
      log(`exporting ${table.name} (${table.description})`)
      const exported = await measureChild(process.execPath, [
        ...NODE_RUNTIME_FLAGS,
        path.join(ROOT, 'functions/local/cli.mjs'),
        'export',
        ...['--base-url', emulator.baseUrl, '--table', `${table.name}=${table.name}`, '--format', 'csv'],
        ...['--token-file', tokenFile, '--out', out, '--date', '2026-01-01'],
      ])
      if (exported.exitCode !== 0) throw new Error(`export of ${table.name} failed: ${exported.stderr.slice(-2000)}`)
      peaks.set(table.name, exported.peakRssBytes / 2 ** 20)
    }
  } finally {
    await emulator.close()
  }
  const verdicts: TableVerdict[] = []
  for (const table of all) {
    const duckdbFile = path.join(workDir, `${table.name}.duckdb.parquet`)
    await duckdbCopy(table.file, duckdbFile)
    const comparison = await compareDataColumns(path.join(out, table.name), duckdbFile, table.columns)
    const overLimit = comparison.columns.filter((c) => c.ratio > COLUMN_LIMIT).map((c) => c.column)
    const peakRssMiB = peaks.get(table.name) ?? 0
    verdicts.push({ table: table.name, description: table.description, comparison, overLimit, peakRssMiB })
    log('')
    log(`${table.name}: ${table.description}; the export's peak RSS ${peakRssMiB.toFixed(0)} MiB`)
    for (const line of formatComparison(comparison, COLUMN_LIMIT)) log(line)
  }
  const failing = verdicts.filter((v) => v.overLimit.length > 0 || v.comparison.dataColumnsVsDuckdb > TABLE_LIMIT)
  log('')
  const peakMiB = Math.max(...peaks.values())
  log(`peak RSS of the exports: max ${peakMiB.toFixed(0)} MiB`)
  log(
    failing.length === 0
      ? `every table's data columns within ${TABLE_LIMIT} x DuckDB's bytes, no column over ${COLUMN_LIMIT} x`
      : `OVER: ${failing.map((v) => `${v.table} (${v.comparison.dataColumnsVsDuckdb.toFixed(3)} x${v.overLimit.length > 0 ? `; ${v.overLimit.join(', ')}` : ''})`).join('; ')}`,
  )
  process.stdout.write(
    `${JSON.stringify({
      seed,
      rows,
      peakRssMiB: peakMiB,
      tables: verdicts.map((v) => ({
        table: v.table,
        description: v.description,
        dataColumnsVsDuckdb: v.comparison.dataColumnsVsDuckdb,
        overLimit: v.overLimit,
        peakRssMiB: v.peakRssMiB,
        columns: v.comparison.columns,
      })),
    })}\n`,
  )
  if (failing.length > 0) process.exitCode = 1
}

await main().catch((error: unknown) => {
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ')
  process.stderr.write(`error [BENCH_FAILED]: ${message}\n`)
  process.exitCode = 1
})
