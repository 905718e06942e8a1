/**
 * The reading thread's claim on a core (core/thread-priority.ts): once a table is read on a thread of its own, the
 * main thread and V8's background threads are set five nice steps above it, relative to its own value. Observed
 * from outside, in child processes, through Linux's per-thread nice values; elsewhere nothing changes and there is
 * nothing to observe.
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { runCliProcess, tempDir, tokenFile } from '../support/cli.ts'

const PER_THREAD = existsSync('/proc/thread-self')
/** util-linux's taskset, to run the CLI on one core as a 1,769 MB Lambda has it. */
const TASKSET = ['/usr/bin/taskset', '/bin/taskset'].find((file) => existsSync(file))
const CHILD = path.resolve(import.meta.dirname, '../support/thread-priority-child.ts')
const PROBE = path.resolve(import.meta.dirname, '../support/thread-priorities.mjs')
const lowered = (nice: number) => Math.min(19, nice + 5)

describe.runIf(PER_THREAD)('threads yielding to a reading thread (Linux)', () => {
  it('sets the main thread five steps above the reading thread, once, and relative to a later thread', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [CHILD])
    const seen = JSON.parse(stdout)
    expect(seen.main).toBe(seen.pid)
    expect(seen.loweredForFirst).toContain(seen.main)
    expect(seen.afterFirst).toEqual({ main: lowered(seen.start), first: seen.start })
    // Already there: nothing is set again.
    expect(seen.again).toEqual([])
    // A thread started by the lowered main thread starts lowered, and the others are set relative to it.
    expect(seen.secondStarted).toBe(lowered(seen.start))
    expect(seen.afterSecond).toEqual({
      main: lowered(lowered(seen.start)),
      first: seen.start,
      second: lowered(seen.start),
    })
  })
})

/** Rows enough for a body past the 1 MiB from which a table is read on a thread of its own. */
const ROWS = 30_000
let emulator: RunningEmulator
beforeAll(async () => {
  const folder = await tempDir()
  const csvFile = path.join(folder, 'assets.csv')
  const lines = ['asset_id,hostname,site,last_seen,cost']
  for (let i = 1; i <= ROWS; i++) {
    lines.push(
      `${i},host-${String(i).padStart(6, '0')}.corp.example,site-${i % 7},2026-05-0${1 + (i % 9)} 10:00:00,${i % 997}.25`,
    )
  }
  await writeFile(csvFile, `${lines.join('\n')}\n`)
  emulator = await startInventoryEmulator({ tables: [{ id: 'big', title: 'Big assets', csvFile }] })
})
afterAll(() => emulator?.close())

interface ThreadLine {
  readonly role: 'start' | 'main' | 'other' | 'worker'
  readonly tid: number
  readonly name: string
  readonly nice: number
}

/** A CLI export of the big table with the probe preloaded; on one core when `oneCore`. */
const exportWithProbe = async (format: 'csv' | 'xlsx', oneCore = false): Promise<ThreadLine[]> => {
  const file = path.join(await tempDir(), 'threads.jsonl')
  const result = await runCliProcess(
    [
      'export',
      '--base-url',
      emulator.baseUrl,
      '--table',
      'big=assets',
      '--format',
      format,
      '--token-file',
      await tokenFile(DEMO_TOKEN),
      '--out',
      await tempDir(),
      '--date',
      '2026-05-04',
    ],
    { NODE_OPTIONS: `--import=${PROBE}`, THREAD_PRIORITIES_FILE: file },
    // On one core, as a 1,769 MB Lambda has it: the process sees only core 0.
    oneCore ? [TASKSET!, '-c', '0'] : [],
  )
  expect(result.stderr).not.toMatch(/error \[/)
  expect(result.exitCode).toBe(0)
  return (await readFile(file, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ThreadLine)
}

describe.runIf(PER_THREAD)('an export whose table is read on a thread of its own (Linux)', () => {
  for (const format of ['csv', 'xlsx'] as const) {
    it(`leaves the ${format} reading thread at the process's priority and lowers the others`, async () => {
      const threads = await exportWithProbe(format)
      const start = threads.find((t) => t.role === 'start')!.nice
      const main = threads.find((t) => t.role === 'main')!
      const helpers = threads.filter((t) => t.role === 'other' && t.name.startsWith('V8Worker'))
      const reader = threads.filter((t) => t.role === 'worker')
      if (availableParallelism() < 2) {
        // One core: the table is read on the main thread, and nobody yields.
        expect(reader).toEqual([])
        expect(main.nice).toBe(start)
        return
      }
      expect(reader.map((t) => t.nice)).toContain(start)
      expect(main.nice).toBe(lowered(start))
      for (const helper of helpers) expect(helper.nice).toBe(lowered(start))
    })
  }
})

describe.runIf(PER_THREAD && TASKSET)('an export on one core (Linux)', () => {
  it('reads the table on the main thread and changes no priority', async () => {
    const threads = await exportWithProbe('csv', true)
    const start = threads.find((t) => t.role === 'start')!.nice
    expect(threads.filter((t) => t.role === 'worker')).toEqual([])
    expect(threads.filter((t) => t.role !== 'start').map((t) => t.nice)).toEqual(
      threads.filter((t) => t.role !== 'start').map(() => start),
    )
  })
})
