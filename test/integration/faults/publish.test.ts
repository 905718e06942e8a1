/**
 * The fault matrix, publishing: a run killed mid-download and the leftovers it leaves (in the warehouse's _tmp/
 * and in the spool folder), the same date published again (by a rerun with fewer rows, by two runs at once), a
 * warehouse folder that breaks after the start, and a race with another run for a different date over the
 * table's registry. Each checks that what is visible is one complete export and the previous data is intact.
 */
import { spawn, spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { mkdir, readdir, rm, utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { SavedTable } from '../../../emulator/index.ts'
import { FolderWarehouseStore } from '../../../functions/export/publish/fs.ts'
import { readTableSchema } from '../../../functions/export/schema/registry.ts'
import { runCliProcess, runExportInProcess, tempDir } from '../../support/cli.ts'
import { query } from '../../support/duckdb.ts'
import {
  ASSET_ROWS,
  ASSETS,
  assetsCsv,
  assetsTable,
  CLI,
  CUT,
  DATE,
  emulator,
  evidence,
  exportArgs,
  exportDate,
  exportedWorkspace,
  LOCATIONS,
  PUBLISHED,
  readObject,
  rowsIn,
  runIdOf,
  tokenPath,
  until,
  useFaultMatrix,
  visibleObjects,
  workspace,
} from '../../support/fault-matrix.ts'

useFaultMatrix()

describe('the runner killed in the middle of a download', () => {
  it('leaves the previous data untouched and nothing visible when the process dies mid-body', async () => {
    const { ws, good } = await exportedWorkspace({ timeouts: { idleSeconds: 60 } })
    emulator.faults.script(ASSETS.id, [{ kind: 'stall', afterBytes: CUT.midRow, ms: 30_000 }])
    const since = emulator.requests.length
    const child = spawn(process.execPath, [CLI, 'export', ...exportArgs(ws), '--date', DATE], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const printed: string[] = []
    child.stdout.on('data', (chunk: Buffer) => printed.push(chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => printed.push(chunk.toString()))
    const exited = once(child, 'exit')

    try {
      await until(() => emulator.requests.slice(since).some((r) => r.path === `/rest/tables/${ASSETS.id}/csv`))
      await until(async () => (await readdir(path.join(ws.out, '_tmp'))).length > 0)
    } finally {
      child.kill('SIGKILL')
      await exited
    }
    evidence.texts['killed run output'] = printed.join('')

    expect(await visibleObjects(ws.out)).toEqual(PUBLISHED)
    for (const key of [`assets/dt=${DATE}/data.parquet`, `_raw/assets/dt=${DATE}/body.csv.gz`]) {
      expect((await readObject(ws, key)).equals(good.get(key)!), key).toBe(true)
    }
    // What the killed process had open stays in _tmp/, which no table glob and no Athena table reads...
    const leftovers = await readdir(path.join(ws.out, '_tmp'))
    expect(leftovers.length).toBeGreaterThan(0)
    expect(leftovers.every((name) => name.endsWith('.partial'))).toBe(true)
    // ...until a later run finds it a day old and removes it.
    const dayAndMinuteAgo = new Date(Date.now() - 24 * 60 * 60 * 1000 - 60_000)
    for (const name of leftovers) await utimes(path.join(ws.out, '_tmp', name), dayAndMinuteAgo, dayAndMinuteAgo)
    expect((await exportDate(ws, 'run after the kill')).exitCode).toBe(0)
    expect(await readdir(path.join(ws.out, '_tmp'))).toEqual([])
  })

  it('sweeps the spool files a killed run left, and leaves those of a live run alone', async () => {
    const { ws } = await exportedWorkspace()
    // The child's os.tmpdir(), so that its spool folder is this test's own.
    const tmp = await tempDir('fault-matrix-tmp-')
    const spool = path.join(tmp, 'inventory-export-spool')
    await mkdir(spool)
    const killed = spawnSync(process.execPath, ['-e', '']).pid!
    const left = [`spool-${killed}-${randomUUID()}.bin`, `workbook-${killed}-${randomUUID()}.xlsx`]
    // This test process is alive throughout: it stands for a run exporting at the same time.
    const live = `workbook-${process.pid}-${randomUUID()}.xlsx`
    for (const name of [...left, live]) await writeFile(path.join(spool, name), 'spooled bytes')

    const result = await runCliProcess(['export', ...exportArgs(ws), '--date', DATE], { TMPDIR: tmp })
    evidence.texts['run after the kill stdout'] = result.stdout
    evidence.texts['run after the kill stderr'] = result.stderr

    expect(result.exitCode, result.stderr).toBe(0)
    expect(await readdir(spool)).toEqual([live])
    expect(await visibleObjects(ws.out)).toEqual(PUBLISHED)
    expect(await rowsIn(ws, ASSETS.name)).toEqual({ rows: ASSET_ROWS, runs: 1 })
  })
})

describe('the runner publishing the same date again', () => {
  it('replaces a date whole when the rerun has fewer rows: no leftovers, no duplicates', async () => {
    const { ws } = await exportedWorkspace()
    emulator.setTable(assetsTable(assetsCsv(15)))

    const result = await exportDate(ws, 'rerun')

    expect(result.exitCode, result.stderr).toBe(0)
    expect(await readdir(path.join(ws.out, ASSETS.name, `dt=${DATE}`))).toEqual(['data.parquet'])
    expect(await rowsIn(ws, ASSETS.name)).toEqual({ rows: 15, runs: 1 })
    const [distinct] = await query(
      `SELECT count(DISTINCT asset_tag)::INTEGER AS tags, max(_source_row_number)::INTEGER AS last FROM '${path.join(ws.out, 'assets/*/data.parquet')}'`,
    )
    expect(distinct).toEqual({ tags: 15, last: 15 })
    expect(await visibleObjects(ws.out)).toEqual(PUBLISHED)
    expect(await readdir(path.join(ws.out, '_tmp'))).toEqual([])
  })

  it('leaves one complete object from one of two runs of the same date at once, both exiting 0', async () => {
    const ws = await workspace()
    await mkdir(ws.out, { recursive: true })
    // Slow headers make the two downloads overlap.
    emulator.faults.script(ASSETS.id, [
      { kind: 'delay', ms: 300 },
      { kind: 'delay', ms: 300 },
    ])
    const args = [...exportArgs(ws), '--date', DATE]
    const results = await Promise.all([runCliProcess(['export', ...args]), runCliProcess(['export', ...args])])
    results.forEach((r, i) => {
      evidence.texts[`concurrent run ${i} stdout`] = r.stdout
      evidence.texts[`concurrent run ${i} stderr`] = r.stderr
    })

    expect(results.map((r) => r.exitCode)).toEqual([0, 0])
    const runIds = results.map(runIdOf)
    expect(await readdir(path.join(ws.out, ASSETS.name, `dt=${DATE}`))).toEqual(['data.parquet'])
    expect(await visibleObjects(ws.out)).toEqual(PUBLISHED)
    expect(await readdir(path.join(ws.out, '_tmp'))).toEqual([])
    const [written] = await query(
      `SELECT count(*)::INTEGER AS rows, list(DISTINCT _export_run_id) AS runs FROM '${path.join(ws.out, 'assets/*/data.parquet')}'`,
    )
    expect(written!.rows).toBe(ASSET_ROWS)
    expect(written!.runs).toHaveLength(1)
    expect(runIds).toContain((written!.runs as string[])[0])
  })
})

describe('the runner whose warehouse folder breaks after the start', () => {
  it('fails every table as PUBLISH_FAILED when _tmp/ cannot be made, coded, keeping the previous data', async () => {
    const { ws, good } = await exportedWorkspace()
    await rm(path.join(ws.out, '_tmp'), { recursive: true })
    await writeFile(path.join(ws.out, '_tmp'), 'a file where the upload folder belongs')

    const result = await exportDate(ws, 'broken folder run')

    expect(result.exitCode).toBe(1)
    for (const name of [ASSETS.name, LOCATIONS.name]) {
      expect(result.stderr).toMatch(new RegExp(`^${name}: FAILED \\[PUBLISH_FAILED\\] .*_tmp`, 'm'))
    }
    // The run record cannot be written either; that, too, is one coded line and no stack trace.
    expect(result.stderr).toMatch(/^error \[PUBLISH_FAILED\]: writing .*_runs.* failed/m)
    expect(result.stderr).not.toMatch(/^\s+at /m)
    for (const [key, bytes] of good) expect((await readObject(ws, key)).equals(bytes), key).toBe(true)
  })
})

describe('the runner racing another run for a different date', () => {
  it('keeps the column the faster run registered while the slower one was downloading', async () => {
    const wide = (withOwner: boolean): SavedTable => ({
      id: ASSETS.id,
      title: 'Assets',
      columns: withOwner ? ['Asset Tag', 'Model', 'Owner'] : ['Asset Tag', 'Model'],
      rows: function* () {
        // Over a MiB, so that the slow run has read the registry (after the header) before its body stalls.
        for (let i = 1; i <= 40_000; i++) {
          const tag = `A-${String(i).padStart(6, '0')}`
          yield withOwner ? [tag, `Model ${i % 7}`, `Owner ${i % 5}`] : [tag, `Model ${i % 7}`]
        }
      },
    })
    emulator.setTable(wide(false))
    const ws = await workspace({ timeouts: { idleSeconds: 30 } })
    const args = (date: string) => [
      '--config',
      ws.config,
      '--token-file',
      tokenPath,
      '--out',
      ws.out,
      '--only',
      ASSETS.name,
      '--date',
      date,
      '--accept-changes',
    ]
    expect((await runExportInProcess(args('2026-03-01'))).exitCode).toBe(0)

    emulator.faults.script(ASSETS.id, [{ kind: 'stall', afterBytes: 1_200_000, ms: 4000 }])
    const since = emulator.requests.length
    const slow = runCliProcess(['export', ...args('2026-03-02')])
    await until(() => emulator.requests.slice(since).some((r) => r.path === `/rest/tables/${ASSETS.id}/csv`))
    await new Promise((resolve) => setTimeout(resolve, 1000))
    emulator.setTable(wide(true))
    const fast = await runExportInProcess(args('2026-03-03'))
    const slowResult = await slow
    evidence.texts['fast run'] = fast.stdout + fast.stderr
    evidence.texts['slow run'] = slowResult.stdout + slowResult.stderr

    expect([fast.exitCode, slowResult.exitCode], fast.stderr + slowResult.stderr).toEqual([0, 0])
    const schema = await readTableSchema(new FolderWarehouseStore(ws.out), ASSETS.name)
    expect(schema?.columns.map((c) => c.name)).toEqual(['asset_tag', 'model', 'owner'])
    expect(schema).toMatchObject({ firstExportDate: '2026-03-01', lastExportDate: '2026-03-03' })
  }, 120_000)
})
