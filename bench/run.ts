/**
 * `npm run bench`: on the same bytes (`--dataset devices`, `sparse` or `inventory`), measures (a) the csv-parse ceiling, (b) the
 * full export path as `npm start` runs it (stand-in over loopback HTTP -> local warehouse), on every core and
 * pinned to one as a 1,769 MB Lambda has it, (c) DuckDB's CSV -> zstd Parquet with one thread and with all;
 * prints MB/s, rows/s, peak RSS and output bytes for each, the ratios (output also without the row fingerprint),
 * the Lambda cost per GB of CSV, the Lambda bundle's size and cold import time, and ends with one JSON line of all
 * figures. Medians over `--runs`. Every measurement carries the load it ran beside (bench/load.ts); a figure taken
 * on a loaded machine is marked LOADED, and then the bench exits 3 unless `--allow-load` is given.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { DEMO_TOKEN } from '../emulator/index.ts'
import { LineageColumn, NODE_RUNTIME_FLAGS } from '../functions/export/core/constants.ts'
import {
  allowLoad,
  dataset,
  EXIT_LOADED,
  runs,
  sizeMb,
  thresholds,
  values,
  waitIdleSeconds,
  withIceberg,
  withWorkbook,
  workDir,
} from './args.ts'
import { measureBundle } from './bundle.ts'
import { type ChildMeasurement, measureChild } from './child.ts'
import { lambdaCostPerGb } from './cost.ts'
import { cpuOf, type Figures, figures, loadText, peakOf, RSS_BUDGET_MIB, rssVerdict, type Sample } from './figures.ts'
import { benchInput, benchWorkbook, DATASETS } from './generate.ts'
import { BenchLoaded, LOADED_MARK, loadGate, systemProbe } from './load.ts'
import { columnBytes, compareDataColumns, type DataColumnsComparison, formatComparison } from './parquet-columns.ts'
import { benchRewrite } from './rewrite-run.ts'
import { icebergConfig, workerSettings, workersConfig, workersKey } from './workers.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const NODE = process.execPath
const RSS_PROBE = ['--import', path.join(ROOT, 'bench/report-rss.ts')]
/** util-linux's `taskset`, which pins the one-core export; without it that measurement is skipped. */
const PIN_ONE_CORE = ['/usr/bin/taskset', '/bin/taskset'].find((file) => existsSync(file))
const log = (line: string) => process.stderr.write(`${line}\n`)
const check = (m: ChildMeasurement, what: string) => {
  if (m.exitCode !== 0) throw new Error(`${what} failed (exit ${m.exitCode}):\n${m.stderr.slice(-2000)}`)
  return m
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
  return { baseUrl: line.toString('utf8').trim(), pid: child.pid, stop: () => child.kill('SIGTERM') }
}

/** The stand-in, while it runs: its CPU time is the bench's own, not another process's. */
let standInPid: number | undefined
const measured = loadGate({
  probe: systemProbe(() => (standInPid === undefined ? [] : [standInPid])),
  thresholds,
  waitIdleSeconds,
  allowLoad,
  log,
  check,
})

/** `node <flags> cli.mjs <args>` with the memory probe: a CLI command as the bench measures it. */
const cliArgs = (args: readonly string[]) => [
  ...NODE_RUNTIME_FLAGS,
  ...RSS_PROBE,
  path.join(ROOT, 'functions/local/cli.mjs'),
  ...args,
]
const measure = async (what: string, args: readonly string[]): Promise<Sample> => {
  const { measurement, load } = await measured(what, () => measureChild(NODE, args))
  return { seconds: measurement.seconds, peak: peakOf(measurement), load, ...cpuOf(measurement) }
}

const main = async () => {
  log(`generating (or reusing) a ${sizeMb} MB CSV in ${workDir} ...`)
  const input = await benchInput(workDir, sizeMb, dataset)
  const mb = input.bytes / 1e6
  log(`input: ${input.file}, ${mb.toFixed(1)} MB, ${input.rows.toLocaleString('en-US')} rows, ${input.columns} columns`)

  const workbook = withWorkbook ? await benchWorkbook(input, dataset) : undefined
  if (workbook) log(`workbook: ${workbook.file}, ${(workbook.bytes / 1e6).toFixed(1)} MB`)
  const ceiling: Sample[] = []
  const exporterXlsx: Sample[] = []
  const exporter: Sample[] = []
  const exporterIceberg: Sample[] = []
  const oneCore: Sample[] = []
  const duck1: Sample[] = []
  const duckAll: Sample[] = []
  /** The export at each `--workers` setting, run by run beside the default one. */
  const byWorkers = new Map(workerSettings(values.workers).map((workers) => [workers, [] as Sample[]]))
  /** Bytes of the `_row_fingerprint` column: a distinct 8-byte hash per row, which DuckDB's copy has no column for. */
  let fingerprintBytes = 0
  /** The CSV export's files of the last run, compared column by column with DuckDB's 1-thread file. */
  const ourFiles = path.join(workDir, 'warehouse-csv')
  const tokenFile = path.join(workDir, 'token')
  await writeFile(tokenFile, DEMO_TOKEN)
  const standIn = await startStandIn(input.file, workbook?.file)
  standInPid = standIn.pid
  try {
    const commonArgs = (out: string) => ['--token-file', tokenFile, '--out', out, '--date', '2026-01-01']
    const exportArgs = (out: string, format = 'csv') =>
      cliArgs([
        'export',
        '--base-url',
        standIn.baseUrl,
        '--table',
        'bench=bench_devices',
        '--format',
        format,
        ...commonArgs(out),
      ])
    if (values.rewrite) {
      const { rewrite, export: exported } = await benchRewrite({
        input,
        workDir,
        runs,
        log,
        exportArgs,
        cliArgs,
        measure,
      })
      const rewriteVsExport = rewrite.mbPerSecond / exported.mbPerSecond
      process.stdout.write(
        `${JSON.stringify({ date: new Date().toISOString(), input, rewrite, export: exported, rewriteVsExport })}\n`,
      )
      if ((rewrite.load.loaded || exported.load.loaded) && !allowLoad) process.exitCode = EXIT_LOADED
      return
    }
    for (let run = 1; run <= runs; run++) {
      if (!values['skip-parse']) {
        log(`run ${run}/${runs}: csv-parse ceiling`)
        const { measurement: parsed, load: parseLoad } = await measured('parse', () =>
          measureChild(NODE, [...RSS_PROBE, path.join(ROOT, 'bench/parse-ceiling.ts'), input.file]),
        )
        ceiling.push({ seconds: JSON.parse(parsed.stdout).seconds, peak: peakOf(parsed), load: parseLoad })
      }

      log(`run ${run}/${runs}: export path (npm start against the stand-in)`)
      const out = path.join(workDir, 'warehouse')
      await rm(out, { recursive: true, force: true })
      const { measurement: exported, load } = await measured('export', () => measureChild(NODE, exportArgs(out)))
      exporter.push({
        seconds: exported.seconds,
        peak: peakOf(exported),
        output: await folderBytes(out),
        load,
        ...cpuOf(exported),
      })
      // The same in every run: the hash's bytes depend on the rows only.
      fingerprintBytes = await columnBytes(out, LineageColumn.ROW_FINGERPRINT)
      // Kept for the column-by-column comparison with DuckDB's file once that is written.
      await rm(ourFiles, { recursive: true, force: true })
      await rename(out, ourFiles)
      if (withIceberg) {
        log(`run ${run}/${runs}: export path into an Iceberg table`)
        await rm(out, { recursive: true, force: true })
        const args = [...(await icebergConfig(workDir, standIn.baseUrl)), ...commonArgs(out)]
        const { measurement: m, load: l } = await measured('export, Iceberg', () =>
          measureChild(NODE, cliArgs(['export', ...args])),
        )
        exporterIceberg.push({
          seconds: m.seconds,
          peak: peakOf(m),
          output: await folderBytes(out),
          load: l,
          ...cpuOf(m),
        })
      }
      for (const [workers, samples] of byWorkers) {
        log(`run ${run}/${runs}: export path with export.workerThreads ${workers}`)
        await rm(out, { recursive: true, force: true })
        const args = [...(await workersConfig(workDir, standIn.baseUrl, workers, 'csv')), ...commonArgs(out)]
        const { measurement: m, load: l } = await measured(`export, ${workers} workers`, () =>
          measureChild(NODE, cliArgs(['export', ...args])),
        )
        samples.push({ seconds: m.seconds, peak: peakOf(m), output: await folderBytes(out), load: l, ...cpuOf(m) })
      }

      if (workbook) {
        log(`run ${run}/${runs}: export path from the same rows as a workbook (--format xlsx)`)
        await rm(out, { recursive: true, force: true })
        const xlsx = await measured('export (xlsx)', () => measureChild(NODE, exportArgs(out, 'xlsx')))
        const fromWorkbook = xlsx.measurement
        exporterXlsx.push({
          seconds: fromWorkbook.seconds,
          peak: peakOf(fromWorkbook),
          output: await folderBytes(out),
          load: xlsx.load,
          ...cpuOf(fromWorkbook),
        })
      }

      if (!values['skip-one-core'] && PIN_ONE_CORE) {
        // One core, as a 1,769 MB Lambda has: the parse stage then runs inline, as it does there.
        log(`run ${run}/${runs}: export path on one core (as a 1,769 MB Lambda)`)
        await rm(out, { recursive: true, force: true })
        const { measurement: pinned, load: pinnedLoad } = await measured('export on one core', () =>
          measureChild(PIN_ONE_CORE, ['-c', '0', NODE, ...exportArgs(out)]),
        )
        oneCore.push({
          seconds: pinned.seconds,
          peak: peakOf(pinned),
          output: await folderBytes(out),
          load: pinnedLoad,
          ...cpuOf(pinned),
        })
      }

      if (!values['skip-duckdb']) {
        for (const [threads, samples] of [
          ['1', duck1],
          [String(os.availableParallelism()), duckAll],
        ] as const) {
          log(`run ${run}/${runs}: DuckDB COPY, ${threads} thread(s)`)
          const parquet = path.join(workDir, `duckdb-${threads}.parquet`)
          const { measurement: copied, load: duckLoad } = await measured('duckdb', () =>
            measureChild(NODE, [...RSS_PROBE, path.join(ROOT, 'bench/duckdb-copy.ts'), input.file, parquet, threads]),
          )
          const result = JSON.parse(copied.stdout)
          samples.push({ seconds: result.seconds, peak: peakOf(copied), output: result.outputBytes, load: duckLoad })
        }
      }
    }
  } finally {
    standIn.stop()
    standInPid = undefined
  }
  log('bundle: building the handler as the stack does and timing cold imports')
  const bundle = await measureBundle(ROOT)

  const a = ceiling.length > 0 ? figures(ceiling, input.bytes, input.rows) : undefined
  const b = figures(exporter, input.bytes, input.rows)
  const bw = [...byWorkers].map(([workers, samples]) => [workers, figures(samples, input.bytes, input.rows)] as const)
  const b1 = oneCore.length > 0 ? figures(oneCore, input.bytes, input.rows) : undefined
  const bi = exporterIceberg.length > 0 ? figures(exporterIceberg, input.bytes, input.rows) : undefined
  // Throughput of the workbook path is counted in the CSV's bytes, so the two MB/s compare the same rows.
  const bx = exporterXlsx.length > 0 ? figures(exporterXlsx, input.bytes, input.rows) : undefined
  const c1 = duck1.length > 0 ? figures(duck1, input.bytes, input.rows) : undefined
  const cAll = duckAll.length > 0 ? figures(duckAll, input.bytes, input.rows) : undefined
  /** Each figure's name on the terminal and its key in the JSON line. */
  const rows: [string, string, Figures | undefined][] = [
    ['a. csv-parse ceiling', 'parse', a],
    ['b. export path', 'export', b],
    ...bw.map(([workers, f]): [string, string, Figures] => [workersKey(workers)[1], workersKey(workers)[0], f]),
    ['b. export, one core', 'exportOneCore', b1],
    ['b. export path, xlsx', 'exportXlsx', bx],
    ['b. export, Iceberg', 'exportIceberg', bi],
    ['c. DuckDB, 1 thread', 'duckdb1', c1],
    [`c. DuckDB, ${os.availableParallelism()} threads`, 'duckdbAll', cAll],
  ]
  log('')
  log(
    `${'measurement'.padEnd(24)} ${'MB/s'.padStart(8)} ${'rows/s'.padStart(10)} ${'peak RSS MiB'.padStart(13)} ${'output bytes'.padStart(13)}  runs' peaks  load`,
  )
  for (const [name, , f] of rows) {
    if (!f) continue
    log(
      `${name.padEnd(24)} ${f.mbPerSecond.toFixed(1).padStart(8)} ${Math.round(f.rowsPerSecond).toString().padStart(10)} ${f.peakRssMiB.toFixed(0).padStart(13)} ${(f.outputBytes?.toString() ?? '-').padStart(13)}  ${f.peakRssMiBRuns.join(' ')}  ${loadText(f)}`,
    )
  }
  for (const [name, , f] of rows) {
    if (f?.threadCpuSeconds && name.startsWith('b.')) {
      const { main, workers, v8Helpers } = f.threadCpuSeconds
      const helpers = v8Helpers === undefined ? '' : `, V8's background threads ${v8Helpers.toFixed(2)}`
      const waited = f.waitedForCoreSeconds
        ? `; waited for a core: main ${f.waitedForCoreSeconds.main.toFixed(2)}, workers ${f.waitedForCoreSeconds.workers.toFixed(2)}, V8's ${f.waitedForCoreSeconds.v8Helpers.toFixed(2)}`
        : ''
      log(
        `${name}: CPU seconds, main thread ${main.toFixed(2)}, worker threads ${workers.toFixed(2)}${helpers}${waited} (medians)`,
      )
    }
  }
  const rss = rssVerdict({
    export: b,
    ...Object.fromEntries(bw.map(([workers, f]) => [workersKey(workers)[0], f])),
    ...(b1 ? { exportOneCore: b1 } : {}),
    ...(bx ? { exportXlsx: bx } : {}),
    ...(bi ? { exportIceberg: bi } : {}),
  })
  log(
    `peak RSS of every export run: max ${rss.highestMiB} MiB, ${rss.withinBudget ? 'within' : 'OVER'} the ${RSS_BUDGET_MIB} MiB budget`,
  )
  const loadedFigures = rows.filter(([, , f]) => f?.load.loaded).map(([, key]) => key)
  // Data columns only: the lineage columns are a feature DuckDB's copy lacks (reported apart, as outputVsDuckdb).
  const columns: DataColumnsComparison | undefined = c1
    ? await compareDataColumns(ourFiles, path.join(workDir, 'duckdb-1.parquet'), DATASETS[dataset].columns)
    : undefined
  if (columns && values.columns) for (const line of formatComparison(columns)) log(line)
  const ratios = {
    ...(a ? { exportVsParse: b.mbPerSecond / a.mbPerSecond } : {}),
    ...Object.fromEntries(
      a ? bw.map(([workers, f]) => [`${workersKey(workers)[0]}VsParse`, f.mbPerSecond / a.mbPerSecond]) : [],
    ),
    ...(bx ? { xlsxTimeVsCsv: bx.seconds / b.seconds } : {}),
    ...(bi ? { icebergVsHive: bi.mbPerSecond / b.mbPerSecond } : {}),
    ...(c1 ? { exportVsDuckdb1: b.mbPerSecond / c1.mbPerSecond } : {}),
    ...(c1?.outputBytes && b.outputBytes ? { outputVsDuckdb: b.outputBytes / c1.outputBytes } : {}),
    ...(c1?.outputBytes && b.outputBytes
      ? { outputWithoutFingerprintVsDuckdb: (b.outputBytes - fingerprintBytes) / c1.outputBytes }
      : {}),
    ...(columns ? { dataColumnsVsDuckdb: columns.dataColumnsVsDuckdb } : {}),
  }
  // Each export against the ceiling measured just before it: a host whose pace drifts moves both alike.
  const exportVsParseByRun = ceiling.map((c, i) => c.seconds / exporter[i]!.seconds)
  const byRun = Object.fromEntries(
    [...byWorkers].map(([workers, samples]) => [workers, ceiling.map((c, i) => c.seconds / samples[i]!.seconds)]),
  )
  if (exportVsParseByRun.length > 0) {
    const text = (ratios: number[]) => ratios.map((r) => r.toFixed(2)).join(' ')
    const workers = Object.entries(byRun).map(([n, r]) => `; ${n} worker(s) ${text(r)}`)
    log(
      `export vs the ceiling, run by run (each against the ceiling of its run): auto ${text(exportVsParseByRun)}${workers.join('')}`,
    )
  }
  log(
    `ratios${loadedFigures.length > 0 ? ` (${LOADED_MARK}: from figures taken on a loaded machine)` : ''}: ${Object.entries(
      ratios,
    )
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
      load: { loaded: loadedFigures.length > 0, loadedFigures, thresholds, waitIdleSeconds },
      rss,
      ...(a ? { parse: a } : {}),
      export: { ...b, fingerprintBytes },
      ...Object.fromEntries(bw.map(([workers, f]) => [workersKey(workers)[0], f])),
      ...(b1 ? { exportOneCore: b1 } : {}),
      ...(bx && workbook ? { exportXlsx: bx, workbook: { megabytes: workbook.bytes / 1e6 } } : {}),
      ...(c1 ? { duckdb1: c1 } : {}),
      ...(cAll ? { duckdbAll: cAll } : {}),
      ratios,
      ...(exportVsParseByRun.length > 0 ? { exportVsParseByRun, exportWorkersVsParseByRun: byRun } : {}),
      ...(columns ? { columns: columns.columns } : {}),
      costPerGbUsd: cost,
      bundle,
    })}\n`,
  )
  if (loadedFigures.length > 0) {
    log(
      `${LOADED_MARK}: ${loadedFigures.join(', ')} ran beside other processes' load (over ${thresholds.maxForeignCores} cores, or a load average over ${thresholds.maxLoadAverage} without /proc); rerun on an idle machine${allowLoad ? '' : ', or pass --allow-load to accept them'}`,
    )
    if (!allowLoad) process.exitCode = EXIT_LOADED
  }
}

await mkdir(workDir, { recursive: true })
await main().catch((error: unknown) => {
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ')
  if (error instanceof BenchLoaded) {
    process.stderr.write(
      `error [${error.code}]: ${message}\nnext step: rerun on an idle machine, raise --wait-idle, or pass --allow-load\n`,
    )
    process.exitCode = EXIT_LOADED
    return
  }
  process.stderr.write(`error [BENCH_FAILED]: ${message}\n`)
  process.exitCode = 1
})
