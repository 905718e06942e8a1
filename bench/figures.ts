/** One measurement's figures over its runs: medians, every run's peak memory, and the load each run ran beside. */
import type { ChildMeasurement } from './child.ts'
import { LOADED_MARK, type LoadVerdict, summarizeLoad } from './load.ts'

/** The export's memory target (issue 31): the peak RSS of every run, not only the median, within a 256 MB Lambda. */
export const RSS_BUDGET_MIB = 256

export interface Sample {
  readonly seconds: number
  readonly peak: number
  readonly output?: number
  readonly load: LoadVerdict
  /**
   * CPU seconds of the process's main thread, of its worker threads together and, where Linux's scheduler
   * statistics are there, of V8's background threads (collection and compilation), where the process reported them.
   */
  readonly cpu?: ThreadSeconds
  /** Seconds the same threads spent runnable but waiting for a core (Linux's scheduler statistics). */
  readonly waited?: Required<ThreadSeconds>
}

export interface ThreadSeconds {
  readonly main: number
  readonly workers: number
  readonly v8Helpers?: number
}

export interface Figures {
  readonly seconds: number
  readonly mbPerSecond: number
  readonly rowsPerSecond: number
  readonly peakRssMiB: number
  /** Every run's peak, lowest first: a median alone hides how far single runs reach. */
  readonly peakRssMiBRuns: number[]
  /** The highest single run's peak, which the memory target is about. */
  readonly peakRssMiBMax: number
  readonly outputBytes?: number
  /** Median CPU seconds of the main thread and of the worker threads together: the busier sets the pace. */
  readonly threadCpuSeconds?: ThreadSeconds
  /**
   * Median seconds the same threads waited, runnable, for a core: above zero, the process's threads (V8's own
   * included) wanted more cores than the machine gave them at that moment.
   */
  readonly waitedForCoreSeconds?: Required<ThreadSeconds>
  /** The load each run was taken at; `loaded` if any run was over the thresholds. */
  readonly load: ReturnType<typeof summarizeLoad>
}

const median = (numbers: number[]) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)]!
const mib = (bytes: number) => Math.round(bytes / 2 ** 20)

/** Each kind of thread's median over the runs; V8's threads only where every run reported them. */
const threadMedians = (runs: readonly ThreadSeconds[]): ThreadSeconds => {
  const helpers = runs.map((r) => r.v8Helpers).filter((h) => h !== undefined)
  return {
    main: median(runs.map((r) => r.main)),
    workers: median(runs.map((r) => r.workers)),
    ...(helpers.length === runs.length ? { v8Helpers: median(helpers) } : {}),
  }
}

export const figures = (samples: Sample[], bytes: number, rows: number): Figures => {
  const seconds = median(samples.map((s) => s.seconds))
  const outputs = samples.map((s) => s.output).filter((o): o is number => o !== undefined)
  const cpus = samples.map((s) => s.cpu).filter((c) => c !== undefined)
  const waits = samples.map((s) => s.waited).filter((w) => w !== undefined)
  return {
    seconds,
    mbPerSecond: bytes / 1e6 / seconds,
    rowsPerSecond: rows / seconds,
    peakRssMiB: median(samples.map((s) => s.peak)) / 2 ** 20,
    peakRssMiBRuns: samples.map((s) => mib(s.peak)).sort((a, b) => a - b),
    peakRssMiBMax: mib(Math.max(...samples.map((s) => s.peak))),
    ...(outputs.length > 0 ? { outputBytes: median(outputs) } : {}),
    ...(cpus.length > 0 ? { threadCpuSeconds: threadMedians(cpus) } : {}),
    ...(waits.length > 0 ? { waitedForCoreSeconds: threadMedians(waits) as Required<ThreadSeconds> } : {}),
    load: summarizeLoad(samples.map((s) => s.load)),
  }
}

/** The highest peak of each export measurement, and whether every run of every one stayed within the budget. */
export const rssVerdict = (exports: Readonly<Record<string, Figures>>) => {
  const maxMiB = Object.fromEntries(Object.entries(exports).map(([name, f]) => [name, f.peakRssMiBMax]))
  const highest = Math.max(...Object.values(maxMiB))
  return { budgetMiB: RSS_BUDGET_MIB, maxMiB, highestMiB: highest, withinBudget: highest <= RSS_BUDGET_MIB }
}

/** The load a figure was taken at, as its line shows it: the other processes' cores (or load averages) per run. */
export const loadText = (f: Figures): string =>
  `${f.load.loaded ? `${LOADED_MARK} ` : ''}${(f.load.foreignCores ?? f.load.loadAverages).join(' ')}${f.load.foreignCores ? ' cores' : ' load avg'}`

/** A figure the measured process printed as `NAME=value` (bench/report-rss.ts), if it printed it. */
const reported = (m: ChildMeasurement, name: string) => {
  const value = new RegExp(`${name}=([\\d.]+)`).exec(m.stderr)?.[1]
  return value === undefined ? undefined : Number(value)
}
export const peakOf = (m: ChildMeasurement) => {
  const kib = reported(m, 'BENCH_MAX_RSS_KB')
  return kib === undefined ? m.peakRssBytes : kib * 1024
}
const reportedSum = (m: ChildMeasurement, name: string) =>
  [...m.stderr.matchAll(new RegExp(`${name}=([\\d.]+)`, 'g'))].reduce((sum, [, s]) => sum + Number(s), 0)
/**
 * The CPU seconds the measured process's threads reported (bench/report-rss.ts), if it reported them, and where the
 * scheduler's statistics were there, V8's background threads and the seconds each kind of thread waited for a core.
 */
export const cpuOf = (m: ChildMeasurement): Pick<Sample, 'cpu' | 'waited'> => {
  const main = reported(m, 'BENCH_MAIN_CPU_S')
  if (main === undefined) return {}
  const v8 = reported(m, 'BENCH_V8_CPU_S')
  const mainWaited = reported(m, 'BENCH_MAIN_WAIT_S')
  const v8Waited = reported(m, 'BENCH_V8_WAIT_S')
  return {
    cpu: { main, workers: reportedSum(m, 'BENCH_THREAD_CPU_S'), ...(v8 === undefined ? {} : { v8Helpers: v8 }) },
    ...(mainWaited === undefined || v8Waited === undefined
      ? {}
      : { waited: { main: mainWaited, workers: reportedSum(m, 'BENCH_THREAD_WAIT_S'), v8Helpers: v8Waited } }),
  }
}
