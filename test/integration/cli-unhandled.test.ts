/**
 * A promise that rejects with nobody listening is a bug; the CLI must still end it as one coded line and a non-zero
 * exit, not as Node's stack trace, and the run it interrupted still writes its record. The rejection is planted
 * in the real process by a module preloaded with --import, so the test does not depend on a bug being there.
 */
import { readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { runCliProcess, tempDir } from '../support/cli.ts'

/** Rejects a promise nobody awaits 300 ms in, on the main thread only (the parse threads preload it too). */
const PLANTED = `data:text/javascript,${encodeURIComponent(
  "import { isMainThread } from 'node:worker_threads'; if (isMainThread) setTimeout(() => { Promise.reject(new Error('planted rejection')) }, 300)",
)}`

let out: string | undefined
afterEach(async () => {
  if (out) await rm(out, { recursive: true, force: true })
  out = undefined
})

it('reports a rejection nobody handled as error [INTERNAL], exits 1 and still writes the run record', async () => {
  out = await tempDir('cli-unhandled-')
  const result = await runCliProcess(['export', '--demo', '--out', out, '--date', '2026-01-15'], {
    NODE_OPTIONS: `--import=${PLANTED}`,
  })

  expect(result.exitCode).toBe(1)
  expect(result.stderr).toContain('error [INTERNAL]: unexpected failure: planted rejection')
  expect(result.stderr).not.toMatch(/\n\s+at /)
  const records = await readdir(path.join(out, '_runs', 'dt=2026-01-15'))
  expect(records.length).toBe(1)
}, 60_000)
