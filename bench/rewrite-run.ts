/**
 * `npm run bench -- --rewrite`: the time and memory of `npm run rewrite` over 30 dates of the generated table.
 * The table is exported once through the real CLI; its object is copied under 29 more `dt=` keys (the rewrite
 * reads each date's own object, so copies stand for dates as well as 30 exports would, in a thirtieth of the time).
 * Each run starts from that warehouse, retypes `ram_gb` (bigint) to string and rewrites every date; throughput is
 * counted in the CSV the 30 dates stand for, and the peak RSS is the whole command's (bench/report-rss.ts).
 */
import { cp, mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { DATA_OBJECT_NAME, PARTITION_KEY } from '../functions/export/core/constants.ts'
import { type Figures, figures, loadText, type Sample } from './figures.ts'
import type { BenchInput } from './generate.ts'

/** Dates the rewrite goes over (issue 44: "30 dates of a 100 MB table"). */
export const REWRITE_DATES = 30
const FIRST_DATE = '2026-01-01'
const TABLE = 'bench_devices'

export interface RewriteBench {
  readonly input: BenchInput
  readonly workDir: string
  readonly runs: number
  readonly log: (line: string) => void
  /** The CLI's arguments for `export` of the bench table on FIRST_DATE into `out`. */
  readonly exportArgs: (out: string) => string[]
  /** `node <flags> cli.mjs <args>`, with the memory probe, as the measured command's arguments. */
  readonly cliArgs: (args: readonly string[]) => string[]
  /** Runs a measured command (waiting for an idle machine as every measurement does); fails on a non-zero exit. */
  readonly measure: (what: string, args: readonly string[]) => Promise<Sample>
}

const dateOf = (day: number): string => new Date(Date.parse(FIRST_DATE) + day * 86_400_000).toISOString().slice(0, 10)

/** The warehouse with 30 dates of the table, built once; the export's figures, for the rewrite's speed beside it. */
const thirtyDates = async (bench: RewriteBench, pristine: string): Promise<Sample> => {
  await rm(pristine, { recursive: true, force: true })
  bench.log(`rewrite: exporting the table once, then copying its object to ${REWRITE_DATES} dates`)
  const exported = await bench.measure('export for the rewrite', bench.exportArgs(pristine))
  const object = path.join(pristine, TABLE, `${PARTITION_KEY}=${FIRST_DATE}`, DATA_OBJECT_NAME)
  for (let day = 1; day < REWRITE_DATES; day++) {
    const folder = path.join(pristine, TABLE, `${PARTITION_KEY}=${dateOf(day)}`)
    await mkdir(folder, { recursive: true })
    await cp(object, path.join(folder, DATA_OBJECT_NAME))
  }
  return exported
}

/** Measures the rewrite `runs` times; prints its line and returns its figures, with the export's beside them. */
export const benchRewrite = async (bench: RewriteBench): Promise<{ rewrite: Figures; export: Figures }> => {
  const pristine = path.join(bench.workDir, 'warehouse-30-dates')
  const out = path.join(bench.workDir, 'warehouse-rewrite')
  const config = path.join(bench.workDir, 'rewrite-config.json')
  const exported = figures([await thirtyDates(bench, pristine)], bench.input.bytes, bench.input.rows)
  await writeFile(config, JSON.stringify({ tables: [{ id: 'bench', name: TABLE, columnTypes: { ram_gb: 'string' } }] }))
  const samples: Sample[] = []
  for (let run = 1; run <= bench.runs; run++) {
    await rm(out, { recursive: true, force: true })
    await cp(pristine, out, { recursive: true })
    bench.log(`run ${run}/${bench.runs}: npm run rewrite over ${REWRITE_DATES} dates (ram_gb to string)`)
    samples.push(
      await bench.measure('rewrite', bench.cliArgs(['rewrite', '--config', config, '--out', out, '--table', TABLE])),
    )
  }
  await rm(out, { recursive: true, force: true })
  const rewrite = figures(samples, bench.input.bytes * REWRITE_DATES, bench.input.rows * REWRITE_DATES)
  bench.log(
    `rewrite of ${REWRITE_DATES} dates (${((bench.input.bytes * REWRITE_DATES) / 1e6).toFixed(0)} MB of CSV): ${rewrite.seconds.toFixed(1)} s, ${rewrite.mbPerSecond.toFixed(1)} MB/s of CSV, ${Math.round(rewrite.rowsPerSecond)} rows/s, peak RSS ${rewrite.peakRssMiB.toFixed(0)} MiB (runs ${rewrite.peakRssMiBRuns.join(' ')}), load ${loadText(rewrite)}`,
  )
  bench.log(
    `the export of the same table: ${exported.mbPerSecond.toFixed(1)} MB/s, peak RSS ${exported.peakRssMiB.toFixed(0)} MiB, load ${loadText(exported)}; rewrite MB/s / export MB/s ${(rewrite.mbPerSecond / exported.mbPerSecond).toFixed(2)}`,
  )
  return { rewrite, export: exported }
}
