/**
 * The bench's flags, read and checked once: a bad flag ends the bench with one coded line and exit 2 (with "did
 * you mean" for a misspelt flag or dataset), before anything is generated or measured.
 */
import path from 'node:path'
import { parseArgs } from 'node:util'
import { closestKey } from '../functions/export/core/config/key-suggestions.ts'
import { DATASETS, type Dataset } from './generate.ts'
import { DEFAULT_MAX_FOREIGN_CORES, DEFAULT_MAX_LOAD_AVERAGE, LOADED_MARK, type LoadThresholds } from './load.ts'

const ROOT = path.resolve(import.meta.dirname, '..')

/** Exit code of a run whose figures were taken on a loaded machine (without `--allow-load`). */
export const EXIT_LOADED = 3

const USAGE = `Usage: npm run bench -- [--size-mb N] [--runs N] [--dir DIR] [--dataset NAME] [--skip-duckdb] [--skip-one-core] [--skip-parse] [--workers LIST] [--format csv|xlsx] [--allow-load] [--wait-idle S] [--max-foreign-cores N] [--max-load N] [--columns] [--rewrite]

Measures the csv-parse ceiling, the export path as npm start runs it, and DuckDB, on the same generated CSV.

Flags:
  --size-mb N     size of the generated CSV in MB (default 500)
  --runs N        runs per measurement; medians are reported (default 3)
  --dir DIR       working folder for the CSV and the outputs (default .bench)
  --dataset NAME  the generated table: ${Object.keys(DATASETS).join(', ')} (default devices)
  --skip-duckdb   leave out the DuckDB measurements
  --skip-one-core leave out the export pinned to one core (the 1,769 MB Lambda)
  --skip-parse    leave out the csv-parse ceiling (and the ratio to it), e.g. for many runs of the export's memory
  --workers LIST  also measure the export with export.workerThreads at each of these numbers, beside the default
                  auto (default 1,2; an empty list measures auto alone)
  --format xlsx   also export the same rows from a workbook (generated once beside the CSV), beside the CSV figures
  --table-format iceberg
                  also export the CSV into an Iceberg table ("tableFormat": "iceberg"), beside the Hive layout
  --allow-load    report figures taken on a loaded machine (marked ${LOADED_MARK}) and exit 0; without it such a
                  run exits ${EXIT_LOADED}, and a machine still loaded after --wait-idle ends the bench before it measures
  --wait-idle S   before each measurement, wait up to S seconds for the machine to go idle
                  (default 120; 0 with --allow-load)
  --max-foreign-cores N
                  a measurement is loaded when other processes used more than N cores' worth of CPU during it
                  (from /proc/stat less the bench's own processes; default ${DEFAULT_MAX_FOREIGN_CORES})
  --max-load N    a measurement is loaded when the 1-minute load average before it is over N
                  (default ${DEFAULT_MAX_LOAD_AVERAGE}; the bench's own last measurement counts, so each waits for it)
  --columns       print each data column's bytes beside DuckDB's, with both writers' encodings
  --rewrite       instead, time npm run rewrite over 30 dates of the table (retyping ram_gb; --dataset devices),
                  e.g. --rewrite --size-mb 100: MB/s of the CSV the dates stand for, rows/s, peak RSS
  -h, --help      this text
`

/** Bad flags end the bench with one coded line and exit 2, like every other command. */
const usageError = (message: string): never => {
  process.stderr.write(`error [USAGE_INVALID]: ${message}\nnext step: run with --help for the list of flags\n`)
  process.exit(2)
}

const BENCH_OPTIONS = {
  'size-mb': { type: 'string', default: '500' },
  runs: { type: 'string', default: '3' },
  dir: { type: 'string', default: path.join(ROOT, '.bench') },
  dataset: { type: 'string', default: 'devices' },
  'skip-duckdb': { type: 'boolean', default: false },
  'skip-one-core': { type: 'boolean', default: false },
  'skip-parse': { type: 'boolean', default: false },
  workers: { type: 'string', default: '1,2' },
  format: { type: 'string', default: 'csv' },
  'table-format': { type: 'string', default: 'hive' },
  'allow-load': { type: 'boolean', default: false },
  'wait-idle': { type: 'string' },
  'max-foreign-cores': { type: 'string', default: String(DEFAULT_MAX_FOREIGN_CORES) },
  'max-load': { type: 'string', default: String(DEFAULT_MAX_LOAD_AVERAGE) },
  columns: { type: 'boolean', default: false },
  rewrite: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const

const parseBenchArgs = () => {
  try {
    return parseArgs({ options: BENCH_OPTIONS }).values
  } catch (error) {
    // parseArgs names an unknown flag but not the one likely meant.
    const unknown = /^Unknown option '--([^']+)'/.exec((error as Error).message)?.[1]
    const guess = unknown === undefined ? undefined : closestKey(unknown, Object.keys(BENCH_OPTIONS))
    return usageError(`${(error as Error).message}${guess ? `; did you mean --${guess}?` : ''}`)
  }
}

const positive = (flag: string, value: string | undefined): number => {
  const number = Number(value)
  return Number.isFinite(number) && number > 0
    ? number
    : usageError(`--${flag} must be a positive number, got "${value}"`)
}

export const values = parseBenchArgs()
if (values.help) {
  process.stdout.write(USAGE)
  process.exit(0)
}
if (!(values.dataset in DATASETS)) {
  const guess = closestKey(values.dataset, Object.keys(DATASETS))
  const named = `--dataset is one of ${Object.keys(DATASETS).join(', ')}, got "${values.dataset}"`
  usageError(`${named}${guess ? `; did you mean ${guess}?` : ''}`)
}
export const dataset = values.dataset as Dataset
if (values.rewrite && dataset !== 'devices')
  usageError(`--rewrite retypes ram_gb of --dataset devices, got "${dataset}"`)
export const sizeMb = positive('size-mb', values['size-mb'])
export const runs = Math.round(positive('runs', values.runs))
export const workDir = path.resolve(values.dir!)
if (!['csv', 'xlsx'].includes(values.format)) usageError(`--format is csv or xlsx, got "${values.format}"`)
/** With `--format xlsx` the export path is measured from the same rows as a workbook too. */
export const withWorkbook = values.format === 'xlsx'
if (!['hive', 'iceberg'].includes(values['table-format']))
  usageError(`--table-format is hive or iceberg, got "${values['table-format']}"`)
/** With `--table-format iceberg` the export is measured into an Iceberg table too, beside the Hive layout. */
export const withIceberg = values['table-format'] === 'iceberg'
export const allowLoad = values['allow-load']
if (!/^(\d+(,\d+)*)?$/.test(values.workers))
  usageError(`--workers is a comma-separated list of numbers, got "${values.workers}"`)
const nonNegative = (flag: string, value: string | undefined): number => {
  const number = Number(value)
  return value !== '' && Number.isFinite(number) && number >= 0
    ? number
    : usageError(`--${flag} must be a number of 0 or more, got "${value}"`)
}
export const waitIdleSeconds = nonNegative('wait-idle', values['wait-idle'] ?? (allowLoad ? '0' : '120'))
export const thresholds: LoadThresholds = {
  maxForeignCores: nonNegative('max-foreign-cores', values['max-foreign-cores']),
  maxLoadAverage: nonNegative('max-load', values['max-load']),
}
