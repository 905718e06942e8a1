import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { tempDir } from '../support/cli.ts'

const run = promisify(execFile)
const ROOT = path.resolve(import.meta.dirname, '../..')

describe('npm run bench (small smoke variant; timings are never asserted)', () => {
  it('--rewrite times npm run rewrite over 30 dates and prints its throughput, peak RSS and load, beside the export of the same table', async () => {
    const dir = await tempDir('inventory-bench-rewrite-')
    try {
      const { stdout, stderr } = await run(
        process.execPath,
        [path.join(ROOT, 'bench/run.ts'), '--rewrite', '--size-mb', '0.2', '--runs', '1', '--dir', dir, '--allow-load'],
        { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
      )
      expect(stderr).toMatch(/rewrite of 30 dates \(\d+ MB of CSV\): .* MB\/s of CSV, \d+ rows\/s, peak RSS \d+ MiB/)
      expect(stderr).toMatch(/the export of the same table: .* MB\/s, .*; rewrite MB\/s \/ export MB\/s [\d.]+/)
      const { rewrite, export: exported, rewriteVsExport } = JSON.parse(stdout.trim().split('\n').at(-1)!)
      for (const figures of [rewrite, exported]) {
        expect(figures).toEqual(
          expect.objectContaining({ mbPerSecond: expect.any(Number), peakRssMiB: expect.any(Number) }),
        )
        expect(figures.load.loadAverages).toEqual([expect.any(Number)])
      }
      expect(rewriteVsExport).toBeCloseTo(rewrite.mbPerSecond / exported.mbPerSecond, 9)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }, 300_000)

  it('measures the ceiling, the export path (at 1 and 2 worker threads and auto, also on one core), DuckDB, the cost per GB and the bundle, and ends with one JSON line of figures with the load each was taken at', async () => {
    const dir = await tempDir('inventory-bench-')
    const { stdout, stderr } = await run(
      process.execPath,
      // The test suite runs beside other tests, so the machine is loaded: the figures are accepted and marked.
      [path.join(ROOT, 'bench/run.ts'), '--size-mb', '2', '--runs', '1', '--dir', dir, '--allow-load', '--columns'],
      { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
    )
    const figures = JSON.parse(stdout.trim().split('\n').at(-1)!)
    const keys = ['parse', 'export', 'exportWorkers1', 'exportWorkers2', 'duckdb1', 'duckdbAll']
    // The one-core run needs util-linux's taskset; without it the bench says so by leaving it out.
    if (figures.exportOneCore !== undefined) keys.push('exportOneCore')
    for (const key of keys) {
      expect(figures[key]).toEqual(
        expect.objectContaining({
          mbPerSecond: expect.any(Number),
          rowsPerSecond: expect.any(Number),
          peakRssMiB: expect.any(Number),
        }),
      )
      expect(figures[key].peakRssMiB).toBeGreaterThan(0)
      expect(figures[key].peakRssMiBMax).toBe(Math.max(...figures[key].peakRssMiBRuns))
      // Where /proc is there, each run carries the CPU that other processes took during it; elsewhere only the load average.
      expect(figures[key].load).toEqual({
        loaded: expect.any(Boolean),
        loadAverages: [expect.any(Number)],
        ...(figures[key].load.foreignCores !== undefined ? { foreignCores: [expect.any(Number)] } : {}),
      })
    }
    const loadedKeys = keys.filter((key) => figures[key].load.loaded)
    expect(figures.load).toEqual({
      loaded: loadedKeys.length > 0,
      loadedFigures: expect.arrayContaining(loadedKeys),
      thresholds: { maxForeignCores: 0.2, maxLoadAverage: 1 },
      waitIdleSeconds: 0,
    })
    expect(figures.load.loadedFigures).toHaveLength(loadedKeys.length)
    if (loadedKeys.length > 0) expect(stderr).toMatch(/^ {2}LOADED: .+ ran beside load average \d+\.\d\d/m)
    expect(figures.rss).toEqual({
      budgetMiB: 256,
      maxMiB: {
        export: figures.export.peakRssMiBMax,
        exportWorkers1: figures.exportWorkers1.peakRssMiBMax,
        exportWorkers2: figures.exportWorkers2.peakRssMiBMax,
        ...(keys.includes('exportOneCore') ? { exportOneCore: figures.exportOneCore.peakRssMiBMax } : {}),
      },
      highestMiB: Math.max(
        ...['export', 'exportWorkers1', 'exportWorkers2', 'exportOneCore'].map((k) => figures[k]?.peakRssMiBMax ?? 0),
      ),
      withinBudget: expect.any(Boolean),
    })
    expect(figures.export.outputBytes).toBeGreaterThan(0)
    // Each thread's CPU, which says which of the export's threads sets the pace.
    expect(figures.export.threadCpuSeconds.main).toBeGreaterThan(0)
    expect(figures.export.threadCpuSeconds.workers).toBeGreaterThanOrEqual(0)
    if (existsSync('/proc/thread-self/schedstat')) {
      // V8's own threads (collection, compilation) and how long each kind of thread waited for a core.
      expect(figures.export.threadCpuSeconds.v8Helpers).toBeGreaterThan(0)
      expect(figures.export.waitedForCoreSeconds).toEqual({
        main: expect.any(Number),
        workers: expect.any(Number),
        v8Helpers: expect.any(Number),
      })
      expect(stderr).toMatch(
        /b\. export path: CPU seconds, .+, V8's background threads [\d.]+; waited for a core: main /,
      )
    }
    // One run: its export against the ceiling just before it is the ratio of the medians.
    expect(figures.exportVsParseByRun).toEqual([expect.closeTo(figures.ratios.exportVsParse, 9)])
    expect(figures.exportWorkersVsParseByRun).toEqual({
      1: [expect.closeTo(figures.ratios.exportWorkers1VsParse, 9)],
      2: [expect.closeTo(figures.ratios.exportWorkers2VsParse, 9)],
    })
    // The same rows, so the same file whatever the threads.
    expect(figures.exportWorkers2.outputBytes).toBe(figures.export.outputBytes)
    // A distinct 8-byte hash per row: random bits, so close to 8 bytes a row however it is encoded.
    expect(figures.export.fingerprintBytes).toBeGreaterThan(8 * figures.input.rows * 0.9)
    expect(figures.export.fingerprintBytes).toBeLessThan(figures.export.outputBytes)
    expect(figures.ratios).toEqual({
      exportVsParse: expect.any(Number),
      exportWorkers1VsParse: expect.any(Number),
      exportWorkers2VsParse: expect.any(Number),
      exportVsDuckdb1: expect.any(Number),
      outputVsDuckdb: expect.any(Number),
      outputWithoutFingerprintVsDuckdb: expect.any(Number),
      dataColumnsVsDuckdb: expect.any(Number),
    })
    // Every data column of the devices table, each beside DuckDB's with both writers' encodings.
    expect(figures.columns).toHaveLength(20)
    expect(figures.columns).toContainEqual(
      expect.objectContaining({
        column: 'last_seen',
        ours: expect.any(Number),
        ourEncodings: expect.stringMatching(/\w/),
      }),
    )
    expect(figures.input.dataset).toBe('devices')
    expect(figures.costPerGbUsd.mb3538).toBeGreaterThan(0)
    if (figures.exportOneCore !== undefined) expect(figures.costPerGbUsd.mb1769).toBeGreaterThan(0)
    expect(figures.bundle).toEqual({ bytes: expect.any(Number), coldImportMs: expect.any(Number) })
    expect(stderr).toMatch(/b\. export path/)
    expect(stderr).toMatch(/data columns \(lineage aside\): [\d.]+ x DuckDB's bytes/)
  }, 180_000)

  it('bench:shapes exports generated tables of untuned shapes and prints every column beside DuckDB, marking those over 1.25 x', async () => {
    const dir = await tempDir('inventory-shapes-')
    try {
      const args = [path.join(ROOT, 'bench/shapes-run.ts'), '--rows', '3000', '--skip-datasets', '--dir', dir]
      // Exit 1 when a column is over the limit, which a table this small may have: the report says so either way.
      const { stdout, stderr, code } = await run(process.execPath, args, { cwd: ROOT }).then(
        (result) => ({ ...result, code: 0 }),
        (error: { stdout: string; stderr: string; code: number }) => error,
      )
      const report = JSON.parse(stdout.trim())
      expect(report).toMatchObject({ seed: 20_261_201, rows: 3000, peakRssMiB: expect.any(Number) })
      // One table per decade of distinct values, each count within its decade.
      expect(
        report.tables.map((t: { description: string }) => Number(/^(\d+) distinct/.exec(t.description)?.[1])),
      ).toEqual([
        expect.toSatisfy((n: number) => n >= 10 && n < 100),
        expect.toSatisfy((n: number) => n >= 100 && n < 1000),
        expect.toSatisfy((n: number) => n >= 1000 && n < 10_000),
        expect.toSatisfy((n: number) => n >= 10_000 && n < 100_000),
      ])
      for (const table of report.tables) {
        expect(table.columns).toHaveLength(12)
        for (const column of table.columns) {
          expect(column).toMatchObject({
            ours: expect.any(Number),
            duckdb: expect.any(Number),
            ourEncodings: expect.stringMatching(/\w/),
          })
        }
        const over = table.columns
          .filter((c: { ratio: number }) => c.ratio > 1.25)
          .map((c: { column: string }) => c.column)
        expect(table.overLimit).toEqual(over)
        for (const column of over) expect(stderr).toMatch(new RegExp(`^${column} .+ OVER 1.25 x$`, 'm'))
      }
      const failing = report.tables.some(
        (t: { overLimit: string[]; dataColumnsVsDuckdb: number }) =>
          t.overLimit.length > 0 || t.dataColumnsVsDuckdb > 1,
      )
      expect(code).toBe(failing ? 1 : 0)
      expect(stderr).toMatch(failing ? /^OVER: shapes_/m : /^every table's data columns within 1 x DuckDB's bytes/m)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }, 180_000)
})
