/**
 * How loaded the machine was while the bench measured. The 1-minute load average counts the bench's own threads
 * (an export keeps about two busy), so it cannot tell a loaded machine from a busy bench. What can is the CPU time
 * that other processes took during a measurement: the machine's busy time from /proc/stat less the CPU time of the
 * bench and of its children (/proc/self/stat's own and reaped children's time, and the still running stand-in's).
 * Where /proc is missing the load average before the measurement is all there is, and it is used instead.
 */
import { readFileSync } from 'node:fs'
import os from 'node:os'

/** Above this many cores' worth of other processes' CPU, a measurement is loaded (see docs/performance.md#running-it). */
export const DEFAULT_MAX_FOREIGN_CORES = 0.2
/** Above this 1-minute load average, a measurement without /proc is loaded (issue 31's threshold). */
export const DEFAULT_MAX_LOAD_AVERAGE = 1.0

/** CPU clock ticks at one moment: the machine's, and the bench's own (itself, its reaped children, live children). */
export interface CpuSample {
  /** All CPUs' ticks together, idle included. */
  readonly totalTicks: number
  /** All CPUs' ticks spent running something (user, nice, system, irq, softirq, steal). */
  readonly busyTicks: number
  readonly ownTicks: number
}

/** What a measurement ran beside: the load average before it and, where /proc is there, others' CPU during it. */
export interface LoadReading {
  readonly loadAverage: number
  /** Cores' worth of CPU that other processes used on average during the measurement; absent without /proc. */
  readonly foreignCores?: number
}

export interface LoadThresholds {
  readonly maxForeignCores: number
  readonly maxLoadAverage: number
}

export interface LoadVerdict extends LoadReading {
  readonly loaded: boolean
}

/** Sums /proc/stat's first line: `cpu user nice system idle iowait irq softirq steal guest guest_nice`. */
export const parseProcStat = (text: string): { totalTicks: number; busyTicks: number } | undefined => {
  const line = text.split('\n').find((l) => l.startsWith('cpu '))
  if (line === undefined) return undefined
  const [user, nice, system, idle, iowait = 0, irq = 0, softirq = 0, steal = 0] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number)
  if ([user, nice, system, idle].some((n) => n === undefined || !Number.isFinite(n))) return undefined
  // guest time is already inside user time; steal is CPU the hypervisor gave to someone else, so it counts as busy.
  const busyTicks = user! + nice! + system! + irq + softirq + steal
  return { totalTicks: busyTicks + idle! + iowait, busyTicks }
}

/**
 * utime + stime (and, with `withChildren`, cutime + cstime) of a /proc/PID/stat line. The command name sits in
 * parentheses and may hold spaces, so the fields are counted from its closing one.
 */
export const parsePidStat = (text: string, withChildren: boolean): number | undefined => {
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  // After the name: state is field 3 of the line, utime 14, stime 15, cutime 16, cstime 17.
  const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number)
  if ([utime, stime, cutime, cstime].some((n) => n === undefined || !Number.isFinite(n))) return undefined
  return utime! + stime! + (withChildren ? cutime! + cstime! : 0)
}

/**
 * Reads a sample, or undefined where /proc is missing. `livePids` are children that have not exited yet (the
 * stand-in): a child's time reaches the bench's own only once it has been reaped.
 */
export const readCpuSample = (livePids: readonly number[] = [], read = readProcFile): CpuSample | undefined => {
  const machine = parseProcStat(read('/proc/stat') ?? '')
  const self = parsePidStat(read('/proc/self/stat') ?? '', true)
  if (machine === undefined || self === undefined) return undefined
  let ownTicks = self
  for (const pid of livePids) ownTicks += parsePidStat(read(`/proc/${pid}/stat`) ?? '', true) ?? 0
  return { ...machine, ownTicks }
}

const readProcFile = (file: string): string | undefined => {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
}

/** Cores' worth of CPU that others used between two samples, given how many CPUs the machine has. */
export const foreignCores = (before: CpuSample, after: CpuSample, cpus: number): number | undefined => {
  const elapsedPerCpu = (after.totalTicks - before.totalTicks) / cpus
  if (!(elapsedPerCpu > 0)) return undefined
  const foreign = after.busyTicks - before.busyTicks - (after.ownTicks - before.ownTicks)
  return Math.max(0, foreign) / elapsedPerCpu
}

/**
 * A measurement is loaded when the load average before it was over `maxLoadAverage`, or others took more than
 * `maxForeignCores` during it. Both: a figure is to be taken on a machine whose load average is under 1.0, the
 * bench's own last measurement included (so each waits for it to settle), and others' CPU catches what starts
 * once a measurement is under way.
 */
export const judgeLoad = (reading: LoadReading, thresholds: LoadThresholds): LoadVerdict => ({
  ...reading,
  loaded:
    reading.loadAverage > thresholds.maxLoadAverage ||
    (reading.foreignCores !== undefined && reading.foreignCores > thresholds.maxForeignCores),
})

/** Where the bench reads the machine from; tests pass their own. */
export interface LoadProbe {
  readonly sample: () => CpuSample | undefined
  readonly loadAverage: () => number
  readonly cpus: number
}

export const systemProbe = (livePids: () => readonly number[]): LoadProbe => ({
  sample: () => readCpuSample(livePids()),
  loadAverage: () => os.loadavg()[0]!,
  cpus: os.availableParallelism(),
})

/** Runs `measure` and returns its result with the load it ran beside. */
export const withLoad = async <T>(
  probe: LoadProbe,
  thresholds: LoadThresholds,
  measure: () => Promise<T>,
): Promise<{ result: T; load: LoadVerdict }> => {
  const loadAverage = probe.loadAverage()
  const before = probe.sample()
  const result = await measure()
  const after = probe.sample()
  const foreign = before && after ? foreignCores(before, after, probe.cpus) : undefined
  return {
    result,
    load: judgeLoad({ loadAverage, ...(foreign !== undefined ? { foreignCores: foreign } : {}) }, thresholds),
  }
}

/**
 * Waits, up to `maxSeconds`, for a window of `windowSeconds` in which the machine is not loaded, and returns the
 * last window's verdict (loaded if the wait ran out). Without /proc each window is judged by the load average.
 */
export const waitForIdle = async (
  probe: LoadProbe,
  thresholds: LoadThresholds,
  { maxSeconds, windowSeconds }: { maxSeconds: number; windowSeconds: number },
  sleep: (seconds: number) => Promise<void> = (s) => new Promise((r) => setTimeout(r, s * 1000)),
  onWait: (verdict: LoadVerdict, waitedSeconds: number) => void = () => undefined,
): Promise<LoadVerdict> => {
  let waited = 0
  while (true) {
    const { load } = await withLoad(probe, thresholds, () => sleep(windowSeconds))
    waited += windowSeconds
    if (!load.loaded || waited >= maxSeconds) return load
    onWait(load, waited)
  }
}

/** One figure's load over its runs: loaded if any run was, with every run's readings in run order. */
export const summarizeLoad = (
  verdicts: readonly LoadVerdict[],
): { loaded: boolean; loadAverages: number[]; foreignCores?: number[] } => {
  const foreign = verdicts.map((v) => v.foreignCores).filter((f): f is number => f !== undefined)
  return {
    loaded: verdicts.some((v) => v.loaded),
    loadAverages: verdicts.map((v) => round2(v.loadAverage)),
    ...(foreign.length > 0 ? { foreignCores: foreign.map(round2) } : {}),
  }
}

const round2 = (n: number) => Math.round(n * 100) / 100

/** The loud mark printed beside a loaded figure. */
export const LOADED_MARK = 'LOADED'

/** A machine that stayed loaded before a measurement, without `--allow-load`: the bench ends before measuring. */
export class BenchLoaded extends Error {
  readonly code = 'BENCH_LOADED'
}

export const describeLoad = (load: LoadReading): string =>
  `load average ${load.loadAverage.toFixed(2)}${load.foreignCores === undefined ? '' : `, other processes ${load.foreignCores.toFixed(2)} cores`}`

/**
 * Wraps each measurement: waits (bounded) for an idle machine, then measures it with the load it ran beside, and
 * says so loudly when that was loaded. A machine still loaded after the wait ends the bench unless load is allowed.
 */
export const loadGate =
  <M>(gate: {
    readonly probe: LoadProbe
    readonly thresholds: LoadThresholds
    readonly waitIdleSeconds: number
    readonly allowLoad: boolean
    readonly log: (line: string) => void
    readonly check: (measurement: M, what: string) => M
    readonly sleep?: (seconds: number) => Promise<void>
  }) =>
  async (what: string, run: () => Promise<M>): Promise<{ measurement: M; load: LoadVerdict }> => {
    const { probe, thresholds, waitIdleSeconds, allowLoad, log } = gate
    if (waitIdleSeconds > 0) {
      const idle = await waitForIdle(
        probe,
        thresholds,
        { maxSeconds: waitIdleSeconds, windowSeconds: 2 },
        gate.sleep,
        (load, waited) =>
          log(`  waiting for an idle machine (${describeLoad(load)}; ${waited} s of ${waitIdleSeconds} s)`),
      )
      if (idle.loaded && !allowLoad)
        throw new BenchLoaded(
          `the machine stayed loaded for ${waitIdleSeconds} s before ${what} (${describeLoad(idle)})`,
        )
    }
    const { result, load } = await withLoad(probe, thresholds, run)
    if (load.loaded) log(`  ${LOADED_MARK}: ${what} ran beside ${describeLoad(load)}`)
    return { measurement: gate.check(result, what), load }
  }
