/**
 * `npm run bench`: on the same bytes, measures (a) the csv-parse ceiling, (b) the full export path as
 * `npm start` runs it (stand-in over loopback HTTP -> local warehouse), (c) DuckDB's CSV -> zstd Parquet with one
 * thread and with all; prints MB/s, rows/s, peak RSS and output bytes for each, the ratios, the Lambda bundle's
 * size and cold import time, and ends with one JSON line of all figures. Medians over `--runs`.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { DEMO_TOKEN } from '../emulator/index.ts'
import { measureBundle } from './bundle.ts'
import { type ChildMeasurement, measureChild } from './child.ts'
import { benchInput, benchWorkbook } from './generate.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const NODE = process.execPath
const RSS_PROBE = ['--import', path.join(ROOT, 'bench/report-rss.ts')]

interface Figures {
  readonly seconds: number
  readonly mbPerSecond: number
  readonly rowsPerSecond: number
  readonly peakRssMiB: number
  readonly outputBytes?: number
}

const { values } = parseArgs({
  options: {
    'size-mb': { type: 'string', default: '500' },
    runs: { type: 'string', default: '3' },
    dir: { type: 'string', default: path.join(ROOT, '.bench') },
    'skip-duckdb': { type: 'boolean', default: false },
    format: { type: 'string', default: 'csv' },
  },
})
const sizeMb = Number(values['size-mb'])
const runs = Number(values.runs)
const workDir = path.resolve(values.dir!)
/** With `--format xlsx` the export path is measured from the same rows as a workbook too. */
const withWorkbook = values.format === 'xlsx'
if (!['csv', 'xlsx'].includes(values.format!)) throw new Error(`--format must be csv or xlsx, got ${values.format}`)

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
  const input = await benchInput(workDir, sizeMb)
  const mb = input.bytes / 1e6
  log(`input: ${input.file}, ${mb.toFixed(1)} MB, ${input.rows.toLocaleString('en-US')} rows, ${input.columns} columns`)

  const workbook = withWorkbook ? await benchWorkbook(input) : undefined
  if (workbook) log(`workbook: ${workbook.file}, ${(workbook.bytes / 1e6).toFixed(1)} MB`)
  const ceiling: { seconds: number; peak: number }[] = []
  const exporterXlsx: { seconds: number; peak: number; output: number }[] = []
  const exporter: { seconds: number; peak: number; output: number }[] = []
  const duck1: { seconds: number; peak: number; output: number }[] = []
  const duckAll: { seconds: number; peak: number; output: number }[] = []
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

      for (const format of withWorkbook ? ['csv', 'xlsx'] : ['csv']) {
        log(`run ${run}/${runs}: export path from the ${format} (npm start against the stand-in)`)
        const out = path.join(workDir, 'warehouse')
        await rm(out, { recursive: true, force: true })
        const exported = check(
          await measureChild(NODE, [
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
          ]),
          `export (${format})`,
        )
        const samples = format === 'xlsx' ? exporterXlsx : exporter
        samples.push({ seconds: exported.seconds, peak: peakOf(exported), output: await folderBytes(out) })
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
  // Throughput of the workbook path is counted in the CSV's bytes, so the two MB/s compare the same rows.
  const bx = exporterXlsx.length > 0 ? figures(exporterXlsx, input.bytes, input.rows) : undefined
  const c1 = duck1.length > 0 ? figures(duck1, input.bytes, input.rows) : undefined
  const cAll = duckAll.length > 0 ? figures(duckAll, input.bytes, input.rows) : undefined
  const rows: [string, Figures | undefined][] = [
    ['a. csv-parse ceiling', a],
    ['b. export path', b],
    ['b. export path, xlsx', bx],
    ['c. DuckDB, 1 thread', c1],
    [`c. DuckDB, ${os.availableParallelism()} threads`, cAll],
  ]
  log('')
  log(
    `${'measurement'.padEnd(24)} ${'MB/s'.padStart(8)} ${'rows/s'.padStart(10)} ${'peak RSS MiB'.padStart(13)} ${'output bytes'.padStart(13)}`,
  )
  for (const [name, f] of rows) {
    if (!f) continue
    log(
      `${name.padEnd(24)} ${f.mbPerSecond.toFixed(1).padStart(8)} ${Math.round(f.rowsPerSecond).toString().padStart(10)} ${f.peakRssMiB.toFixed(0).padStart(13)} ${(f.outputBytes?.toString() ?? '-').padStart(13)}`,
    )
  }
  const ratios = {
    exportVsParse: b.mbPerSecond / a.mbPerSecond,
    ...(bx ? { xlsxTimeVsCsv: bx.seconds / b.seconds } : {}),
    ...(c1 ? { exportVsDuckdb1: b.mbPerSecond / c1.mbPerSecond } : {}),
    ...(c1?.outputBytes && b.outputBytes ? { outputVsDuckdb: b.outputBytes / c1.outputBytes } : {}),
  }
  log(
    `ratios: ${Object.entries(ratios)
      .map(([k, v]) => `${k} ${v.toFixed(2)}`)
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
      input: { megabytes: mb, rows: input.rows, columns: input.columns },
      runs,
      parse: a,
      export: b,
      ...(bx && workbook ? { exportXlsx: bx, workbook: { megabytes: workbook.bytes / 1e6 } } : {}),
      ...(c1 ? { duckdb1: c1 } : {}),
      ...(cAll ? { duckdbAll: cAll } : {}),
      ratios,
      bundle,
    })}\n`,
  )
}

await mkdir(workDir, { recursive: true })
await main()
