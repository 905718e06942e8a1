import { describe, expect, it } from 'vitest'
import {
  BenchLoaded,
  type CpuSample,
  foreignCores,
  judgeLoad,
  type LoadProbe,
  loadGate,
  parsePidStat,
  parseProcStat,
  readCpuSample,
  summarizeLoad,
  waitForIdle,
  withLoad,
} from '../../../bench/load.ts'

const thresholds = { maxForeignCores: 0.2, maxLoadAverage: 1.0 }

/** A probe that returns the given samples in turn, with a fixed load average. */
const scripted = (samples: (CpuSample | undefined)[], loadAverage = 0.1, cpus = 2): LoadProbe => {
  let next = 0
  return { sample: () => samples[next++], loadAverage: () => loadAverage, cpus }
}

/** Two samples 100 ticks apart on each of 2 CPUs, during which the machine was busy `busy` ticks and we `own`. */
const window = (busy: number, own: number): CpuSample[] => [
  { totalTicks: 1000, busyTicks: 400, ownTicks: 50 },
  { totalTicks: 1200, busyTicks: 400 + busy, ownTicks: 50 + own },
]

describe('the bench load reading', () => {
  it('sums /proc/stat busy time with steal and without guest time, and idle with iowait', () => {
    const stat = 'cpu  100 5 30 800 20 1 2 7 50 0\ncpu0 50 2 15 400 10 0 1 3 25 0\nintr 1 2 3\n'
    expect(parseProcStat(stat)).toEqual({ busyTicks: 145, totalTicks: 965 })
  })

  it('reads nothing from a /proc/stat without a cpu line', () => {
    expect(parseProcStat('intr 1 2\n')).toBeUndefined()
  })

  it("reads a process's own and reaped children's ticks past a command name with spaces and parentheses", () => {
    const line = '4242 (node (bench) x) S 1 4242 4242 0 -1 4194304 100 0 0 0 70 30 900 100 20 0 11 0 5 6 7'
    expect(parsePidStat(line, false)).toBe(100)
    expect(parsePidStat(line, true)).toBe(1100)
  })

  it('counts live children such as the stand-in as the bench’s own time', () => {
    const files: Record<string, string> = {
      '/proc/stat': 'cpu  100 0 0 900 0 0 0 0 0 0\n',
      '/proc/self/stat': '1 (node) S 0 0 0 0 0 0 0 0 0 0 10 5 20 5 0',
      '/proc/77/stat': '77 (node) S 1 0 0 0 0 0 0 0 0 0 3 2 0 0 0',
    }
    expect(readCpuSample([77], (file) => files[file])).toEqual({ totalTicks: 1000, busyTicks: 100, ownTicks: 45 })
    expect(readCpuSample([], () => undefined)).toBeUndefined()
  })

  it("takes other processes' CPU as the machine's busy time less the bench's own, in cores", () => {
    const [before, after] = window(150, 60)
    // 200 ticks over 2 CPUs is 100 ticks of wall time; others were busy 90 of them.
    expect(foreignCores(before!, after!, 2)).toBeCloseTo(0.9)
  })

  it('never reports negative foreign CPU when the bench’s own time runs ahead of the machine’s counters', () => {
    const [before, after] = window(100, 120)
    expect(foreignCores(before!, after!, 2)).toBe(0)
  })

  it("judges by others' CPU and by the load average, the bench's own included: either over its threshold is loaded", () => {
    expect(judgeLoad({ loadAverage: 0.4, foreignCores: 0.05 }, thresholds).loaded).toBe(false)
    expect(judgeLoad({ loadAverage: 2.4, foreignCores: 0.05 }, thresholds).loaded).toBe(true)
    expect(judgeLoad({ loadAverage: 0.1, foreignCores: 0.5 }, thresholds).loaded).toBe(true)
  })

  it('judges by the load average where /proc gives no reading', () => {
    expect(judgeLoad({ loadAverage: 1.5 }, thresholds).loaded).toBe(true)
    expect(judgeLoad({ loadAverage: 0.9 }, thresholds).loaded).toBe(false)
  })

  it('measures around the measurement and falls back to the load average without samples', async () => {
    const measured = await withLoad(scripted(window(170, 40)), thresholds, async () => 'done')
    expect(measured).toEqual({ result: 'done', load: { loadAverage: 0.1, foreignCores: 1.3, loaded: true } })
    const blind = await withLoad(scripted([undefined, undefined], 3), thresholds, async () => 'done')
    expect(blind.load).toEqual({ loadAverage: 3, loaded: true })
  })

  it('waits for an idle window and gives up, still loaded, once the bound is reached', async () => {
    const slept: number[] = []
    const sleep = async (seconds: number) => void slept.push(seconds)
    const busyThenIdle = scripted([...window(100, 0), ...window(0, 0)])
    expect((await waitForIdle(busyThenIdle, thresholds, { maxSeconds: 60, windowSeconds: 2 }, sleep)).loaded).toBe(
      false,
    )
    expect(slept).toEqual([2, 2])
    const alwaysBusy = scripted(Array.from({ length: 3 }, () => window(100, 0)).flat())
    slept.length = 0
    expect((await waitForIdle(alwaysBusy, thresholds, { maxSeconds: 6, windowSeconds: 2 }, sleep)).loaded).toBe(true)
    expect(slept).toEqual([2, 2, 2])
  })

  it('marks a figure loaded when any of its runs was, keeping every run’s reading', () => {
    const summary = summarizeLoad([
      { loadAverage: 0.123, foreignCores: 0.01, loaded: false },
      { loadAverage: 0.5, foreignCores: 0.456, loaded: true },
    ])
    expect(summary).toEqual({ loaded: true, loadAverages: [0.12, 0.5], foreignCores: [0.01, 0.46] })
  })
})

describe('the bench load gate', () => {
  const gate = (samples: CpuSample[], allowLoad: boolean, lines: string[] = []) =>
    loadGate<{ ok: boolean }>({
      probe: scripted(samples),
      thresholds,
      waitIdleSeconds: 4,
      allowLoad,
      log: (line) => lines.push(line),
      check: (m) => m,
      sleep: async () => undefined,
    })

  it('ends the bench with BENCH_LOADED when the machine stays loaded through the wait', async () => {
    const busy = Array.from({ length: 2 }, () => window(100, 0)).flat()
    const failure = await gate(busy, false)('export', async () => ({ ok: true })).catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(BenchLoaded)
    expect((failure as BenchLoaded).code).toBe('BENCH_LOADED')
    expect((failure as BenchLoaded).message).toMatch(/stayed loaded for 4 s before export \(.*1\.00 cores\)/)
  })

  it('measures anyway with --allow-load, and prints the LOADED mark beside the measurement', async () => {
    const lines: string[] = []
    const busy = Array.from({ length: 3 }, () => window(100, 0)).flat()
    const { measurement, load } = await gate(busy, true, lines)('export', async () => ({ ok: true }))
    expect(measurement).toEqual({ ok: true })
    expect(load).toEqual({ loadAverage: 0.1, foreignCores: 1, loaded: true })
    expect(lines.at(-1)).toBe('  LOADED: export ran beside load average 0.10, other processes 1.00 cores')
  })

  it('prints no mark for a measurement on an idle machine', async () => {
    const lines: string[] = []
    const idle = Array.from({ length: 2 }, () => window(10, 0)).flat()
    const { load } = await gate(idle, false, lines)('export', async () => ({ ok: true }))
    expect(load.loaded).toBe(false)
    expect(lines).toEqual([])
  })
})
