/**
 * Setup file of every test file (vitest.config.ts): the file's temporary folders, whoever makes them (tempDir,
 * tokenFile, a test's own mkdtemp, the CLI and the threads it starts, which inherit TMPDIR), go into one folder
 * of the run's temp folder (test/support/temp-check.ts), removed when the file's tests are done, whether they
 * passed or failed.
 *
 * os.tmpdir() reads TMPDIR on every call, so pointing it at the folder before the test file is imported catches
 * every path built from it. Node's compile cache (functions/local/cli.mjs) stays in the OS temp folder: it is a
 * cache across runs, not a test's scratch.
 *
 * The folder's path is one per process, made again for each file: where files share a process (the projects
 * without isolation, vitest.config.ts), a library that keeps the first os.tmpdir() it saw (aws-cdk-lib's
 * FileSystem.tmpdir) still finds it, empty, for the next file.
 */
import { mkdirSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll } from 'vitest'

interface TempRoot {
  readonly shared: string
  readonly root: string
}
const perProcess = globalThis as { inventoryTestTempRoot?: TempRoot }
perProcess.inventoryTestTempRoot ??= ((shared: string) => ({
  shared,
  root: path.join(shared, `inventory-tests-${process.pid}-${Math.random().toString(36).slice(2, 8)}`),
}))(os.tmpdir())
const { shared, root } = perProcess.inventoryTestTempRoot
process.env.NODE_COMPILE_CACHE ||= path.join(shared, 'node-compile-cache')
mkdirSync(root, { recursive: true, mode: 0o700 })
process.env.TMPDIR = root

afterAll(() => {
  process.env.TMPDIR = shared
  rmSync(root, { recursive: true, force: true, maxRetries: 3 })
})
