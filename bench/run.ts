/**
 * `npm run bench`: on the same bytes (`--dataset devices`, `sparse` or `inventory`), measures (a) the csv-parse ceiling, (b) the
 * full export path as `npm start` runs it (stand-in over loopback HTTP -> local warehouse), on every core and
 * pinned to one as a 1,769 MB Lambda has it, (c) DuckDB's CSV -> zstd Parquet with one thread and with all;
 * prints MB/s, rows/s, peak RSS and output bytes for each, the ratios (output also without the row fingerprint),
 * the Lambda cost per GB of CSV, the Lambda bundle's size and cold import time, and ends with one JSON line of all
 * figures. Medians over `--runs`.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { DEMO_TOKEN } from '../emulator/index.ts'
import { LineageColumn, NODE_RUNTIME_FLAGS } from '../functions/export/core/constants.ts'
import { measureBundle } from './bundle.ts'
import { type ChildMeasurement, measureChild } from './child.ts'
import { lambdaCostPerGb } from './cost.ts'
import { benchInput, benchWorkbook, DATASETS, type Dataset } from './generate.ts'
import { columnBytes, compareDataColumns, type DataColumnsComparison, formatComparison } from './parquet-columns.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const NODE = process.execPath
const RSS_PROBE = ['--import', path.join(ROOT, 'bench/report-rss.ts')]
/** util-linux's `taskset`, which pins the one-core export; without it that measurement is skipped. */
const PIN_ONE_CORE = ['/usr/bin/taskset', '/bin/taskset'].find((file) => existsSync(file))

interface Figures {
  readonly seconds: number
  readonly mbPerSecond: number
  readonly rowsPerSecond: number
  readonly peakRssMiB: number
  /** Every run's peak, lowest first: a median alone hides how far single runs reach. */
  readonly peakRssMiBRuns: number[]
  readonly outputBytes?: number
}

const USAGE = `Usage: npm run bench -- [--size-mb N] [--runs N] [--dir DIR] [--dataset NAME] [--skip-duckdb] [--skip-one-core] [--format csv|xlsx] [--columns]

Measures the csv-parse ceiling, the export path as npm start runs it, and DuckDB, on the same generated CSV.

Flags:
  --size-mb N     size of the generated CSV in MB (default 500)
  --runs N        runs per measurement; medians are reported (default 3)
  --dir DIR       working folder for the CSV and the outputs (default .bench)
  --dataset NAME  the generated table: ${Object.keys(DATASETS).join(', ')} (default devices)
  --skip-duckdb   leave out the DuckDB measurements
  --skip-one-core leave out the export pinned to one core (the 1,769 MB Lambda)
  --format xlsx   also export the same rows from a workbook (generated once beside the CSV), beside the CSV figures
  --columns       print each data column's bytes beside DuckDB's, with both writers' encodings
  -h, --help      this text
`

/** Bad flags end the bench with one coded line and exit 2, like every other command. */
const usageError = (message: string): never => {
  process.stderr.write(`error [USAGE_INVALID]: ${message}\nnext step: run with --help for the list of flags\n`)
  process.exit(2)
}

const parseBenchArgs = () => {
  try {
    return parseArgs({
      options: {
        'size-mb': { type: 'string', default: '500' },
        runs: { type: 'string', default: '3' },
        dir: { type: 'string', default: path.join(ROOT, '.bench') },
        dataset: { type: 'string', default: 'devices' },
        'skip-duckdb': { type: 'boolean', default: false },
        'skip-one-core': { type: 'boolean', default: false },
        format: { type: 'string', default: 'csv' },
        columns: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values
  } catch (error) {
    return usageError((error as Error).message)
  }
}

const positive = (flag: string, value: string | undefined): number => {
  const number = Number(value)
  return Number.isFinite(number) && number > 0
    ? number
    : usageError(`--${flag} must be a positive number, got "${value}"`)
}

const values = parseBenchArgs()
if (values.help) {
  process.stdout.write(USAGE)
  process.exit(0)
}
if (!(values.dataset in DATASETS))
  usageError(`--dataset is one of ${Object.keys(DATASETS).join(', ')}, got "${values.dataset}"`)
const dataset = values.dataset as Dataset
const sizeMb = positive('size-mb', values['size-mb'])
const runs = Math.round(positive('runs', values.runs))
const workDir = path.resolve(values.dir!)
if (!['csv', 'xlsx'].includes(values.format)) usageError(`--format is csv or xlsx, got "${values.format}"`)
/** With `--format xlsx` the export path is measured from the same rows as a workbook too. */
const withWorkbook = values.format === 'xlsx'

const log = (line: string) => process.stderr.write(`${line}\n`)
const median = (numbers: number[]) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)]!
const peakOf = (m: ChildMeasurement) => {
  const reported = /BENCH_MAX_RSS_KB=(\d+)/.exec(m.stderr)?.[1]
  return reported === undefined ? m.peakRssBytes : Number(reported) * 1024
}
const check = (m: ChildMeasurement, what: string) => {
  if (m.exitCode !== 0) throw new Error(`${what} failed (exit ${m.exitCode}):\n${m.stderr.slice(-2000)}`)
  return m
}

const figures = (
  samples: { seconds: number; peak: number; output?: number }[],
  bytes: number,
  rows: number,
): Figures => {
  const seconds = median(samples.map((s) => s.seconds))
  const outputs = samples.map((s) => s.output).filter((o): o is number => o !== undefined)
  return {
    seconds,
    mbPerSecond: bytes / 1e6 / seconds,
    rowsPerSecond: rows / seconds,
    peakRssMiB: median(samples.map((s) => s.peak)) / 2 ** 20,
    peakRssMiBRuns: samples.map((s) => Math.round(s.peak / 2 ** 20)).sort((a, b) => a - b),
    ...(outputs.length > 0 ? { outputBytes: median(outputs) } : {}),
  }
}

const folderBytes = async (folder: string): Promise<number> => {
  let total = 0
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && entry.name.endsWith('.parquet'))
      total += (await stat(path.join(entry.parentPath, entry.name))).size
  }
  return total
}

const startStandIn = async (file: string, workbook?: string) => {
  const args = [path.join(ROOT, 'bench/serve.ts'), file, ...(workbook ? [workbook] : [])]
  const child = spawn(NODE, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  const [line] = (await once(child.stdout, 'data')) as [Buffer]
  return { baseUrl: line.toString('utf8').trim(), stop: () => child.kill('SIGTERM') }
}

const main = async () => {
  log(`generating (or reusing) a ${sizeMb} MB CSV in ${workDir} ...`)
  const input = await benchInput(workDir, sizeMb, dataset)
  const mb = input.bytes / 1e6
  log(`input: ${input.file}, ${mb.toFixed(1)} MB, ${input.rows.toLocaleString('en-US')} rows, ${input.columns} columns`)

  const workbook = withWorkbook ? await benchWorkbook(input, dataset) : undefined
  if (workbook) log(`workbook: ${workbook.file}, ${(workbook.bytes / 1e6).toFixed(1)} MB`)
  const ceiling: { seconds: number; peak: number }[] = []
  const exporterXlsx: { seconds: number; peak: number; output: number }[] = []
  const exporter: { seconds: number; peak: number; output: number }[] = []
  const oneCore: { seconds: number; peak: number; output: number }[] = []
  const duck1: { seconds: number; peak: number; output: number }[] = []
  const duckAll: { seconds: number; peak: number; output: number }[] = []
  /** Bytes of the `_row_fingerprint` column: a distinct 8-byte hash per row, which DuckDB's copy has no column for. */
  let fingerprintBytes = 0
  /** The CSV export's files of the last run, compared column by column with DuckDB's 1-thread file. */
  const ourFiles = path.join(workDir, 'warehouse-csv')
  const tokenFile = path.join(workDir, 'token')
  await writeFile(tokenFile, DEMO_TOKEN)
  const standIn = await startStandIn(input.file, workbook?.file)
  try {
    for (let run = 1; run <= runs; run++) {
      log(`run ${run}/${runs}: csv-parse ceiling`)
      const parsed = check(
        await measureChild(NODE, [...RSS_PROBE, path.join(ROOT, 'bench/parse-ceiling.ts'), input.file]),
        'parse',
      )
      ceiling.push({ seconds: JSON.parse(parsed.stdout).seconds, peak: peakOf(parsed) })

      const exportArgs = (out: string, format = 'csv') => [
        ...NODE_RUNTIME_FLAGS,
        ...RSS_PROBE,
        path.join(ROOT, 'functions/local/cli.ts'),
        'export',
        '--base-url',
        standIn.baseUrl,
        '--table',
        'bench=bench_devices',
        '--format',
        format,
        '--token-file',
        tokenFile,
        '--out',
        out,
        '--date',
        '2026-01-01',
      ]
      log(`run ${run}/${runs}: export path (npm start against the stand-in)`)
      const out = path.join(workDir, 'warehouse')
      await rm(out, { recursive: true, force: true })
      const exported = check(await measureChild(NODE, exportArgs(out)), 'export')
      exporter.push({ seconds: exported.seconds, peak: peakOf(exported), output: await folderBytes(out) })
      // The same in every run: the hash's bytes depend on the rows only.
      fingerprintBytes = await columnBytes(out, LineageColumn.ROW_FINGERPRINT)
      // Kept for the column-by-column comparison with DuckDB's file once that is written.
      await rm(ourFiles, { recursive: true, force: true })
      await rename(out, ourFiles)

      if (workbook) {
        log(`run ${run}/${runs}: export path from the same rows as a workbook (--format xlsx)`)
        await rm(out, { recursive: true, force: true })
        const fromWorkbook = check(await measureChild(NODE, exportArgs(out, 'xlsx')), 'export (xlsx)')
        exporterXlsx.push({ seconds: fromWorkbook.seconds, peak: peakOf(fromWorkbook), output: await folderBytes(out) })
      }

      if (!values['skip-one-core'] && PIN_ONE_CORE) {
        // One core, as a 1,769 MB Lambda has: the parse stage then runs inline, as it does there.
        log(`run ${run}/${runs}: export path on one core (as a 1,769 MB Lambda)`)
        await rm(out, { recursive: true, force: true })
        const pinned = check(
          await measureChild(PIN_ONE_CORE, ['-c', '0', NODE, ...exportArgs(out)]),
          'export on one core',
        )
        oneCore.push({ seconds: pinned.seconds, peak: peakOf(pinned), output: await folderBytes(out) })
      }

      if (!values['skip-duckdb']) {
        for (const [threads, samples] of [
          ['1', duck1],
          [String(os.availableParallelism()), duckAll],
        ] as const) {
          log(`run ${run}/${runs}: DuckDB COPY, ${threads} thread(s)`)
          const parquet = path.join(workDir, `duckdb-${threads}.parquet`)
          const copied = check(
            await measureChild(NODE, [
              ...RSS_PROBE,
              path.join(ROOT, 'bench/duckdb-copy.ts'),
              input.file,
              parquet,
              threads,
            ]),
            'duckdb',
          )
          const result = JSON.parse(copied.stdout)
          samples.push({ seconds: result.seconds, peak: peakOf(copied), output: result.outputBytes })
        }
      }
    }
  } finally {
    standIn.stop()
  }
  log('bundle: building the handler as the stack does and timing cold imports')
  const bundle = await measureBundle(ROOT)

  const a = figures(ceiling, input.bytes, input.rows)
  const b = figures(exporter, input.bytes, input.rows)
  const b1 = oneCore.length > 0 ? figures(oneCore, input.bytes, input.rows) : undefined
  // Throughput of the workbook path is counted in the CSV's bytes, so the two MB/s compare the same rows.
  const bx = exporterXlsx.length > 0 ? figures(exporterXlsx, input.bytes, input.rows) : undefined
  const c1 = duck1.length > 0 ? figures(duck1, input.bytes, input.rows) : undefined
  const cAll = duckAll.length > 0 ? figures(duckAll, input.bytes, input.rows) : undefined
  const rows: [string, Figures | undefined][] = [
    ['a. csv-parse ceiling', a],
    ['b. export path', b],
    ['b. export, one core', b1],
    ['b. export path, xlsx', bx],
    ['c. DuckDB, 1 thread', c1],
    [`c. DuckDB, ${os.availableParallelism()} threads`, cAll],
  ]
  log('')
  log(
    `${'measurement'.padEnd(24)} ${'MB/s'.padStart(8)} ${'rows/s'.padStart(10)} ${'peak RSS MiB'.padStart(13)} ${'output bytes'.padStart(13)}  runs' peaks`,
  )
  for (const [name, f] of rows) {
    if (!f) continue
    log(
      `${name.padEnd(24)} ${f.mbPerSecond.toFixed(1).padStart(8)} ${Math.round(f.rowsPerSecond).toString().padStart(10)} ${f.peakRssMiB.toFixed(0).padStart(13)} ${(f.outputBytes?.toString() ?? '-').padStart(13)}  ${f.peakRssMiBRuns.join(' ')}`,
    )
  }
  // Data columns only: the lineage columns are a feature DuckDB's copy lacks (reported apart, as outputVsDuckdb).
  const columns: DataColumnsComparison | undefined = c1
    ? await compareDataColumns(ourFiles, path.join(workDir, 'duckdb-1.parquet'), DATASETS[dataset].columns)
    : undefined
  if (columns && values.columns) for (const line of formatComparison(columns)) log(line)
  const ratios = {
    exportVsParse: b.mbPerSecond / a.mbPerSecond,
    ...(bx ? { xlsxTimeVsCsv: bx.seconds / b.seconds } : {}),
    ...(c1 ? { exportVsDuckdb1: b.mbPerSecond / c1.mbPerSecond } : {}),
    ...(c1?.outputBytes && b.outputBytes ? { outputVsDuckdb: b.outputBytes / c1.outputBytes } : {}),
    ...(c1?.outputBytes && b.outputBytes
      ? { outputWithoutFingerprintVsDuckdb: (b.outputBytes - fingerprintBytes) / c1.outputBytes }
      : {}),
    ...(columns ? { dataColumnsVsDuckdb: columns.dataColumnsVsDuckdb } : {}),
  }
  log(
    `ratios: ${Object.entries(ratios)
      .map(([k, v]) => `${k} ${v.toFixed(2)}`)
      .join(', ')}`,
  )
  const cost = {
    ...(b1 ? { mb1769: lambdaCostPerGb(b1.mbPerSecond, 1769) } : {}),
    mb3538: lambdaCostPerGb(b.mbPerSecond, 3538),
  }
  log(
    `Lambda arm64 cost per GB of CSV: ${Object.entries(cost)
      .map(([memory, usd]) => `${memory.slice(2)} MB $${usd.toFixed(4)}`)
      .join(', ')}`,
  )
  log(`bundle: ${(bundle.bytes / 1e6).toFixed(2)} MB, cold import ${bundle.coldImportMs.toFixed(0)} ms`)
  process.stdout.write(
    `${JSON.stringify({
      date: new Date().toISOString(),
      machine: {
        cpus: os.availableParallelism(),
        memoryGiB: Math.round(os.totalmem() / 2 ** 30),
        node: process.version,
      },
      input: { dataset, megabytes: mb, rows: input.rows, columns: input.columns },
      runs,
      parse: a,
      export: { ...b, fingerprintBytes },
      ...(b1 ? { exportOneCore: b1 } : {}),
      ...(bx && workbook ? { exportXlsx: bx, workbook: { megabytes: workbook.bytes / 1e6 } } : {}),
      ...(c1 ? { duckdb1: c1 } : {}),
      ...(cAll ? { duckdbAll: cAll } : {}),
      ratios,
      ...(columns ? { columns: columns.columns } : {}),
      costPerGbUsd: cost,
      bundle,
    })}\n`,
  )
}

await mkdir(workDir, { recursive: true })
await main().catch((error: unknown) => {
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ')
  process.stderr.write(`error [BENCH_FAILED]: ${message}\n`)
  process.exitCode = 1
})
