/**
 * Setup file of every test file (vitest.config.ts): the file's temporary folders, whoever makes them (tempDir,
 * tokenFile, a test's own mkdtemp, the CLI and the threads it starts, which inherit TMPDIR), go into one folder
 * of the OS temp folder, removed when the file's tests are done, whether they passed or failed.
 *
 * os.tmpdir() reads TMPDIR on every call, so pointing it at the file's folder before the test file is imported
 * catches every path built from it. Node's compile cache (functions/local/cli.mjs) stays in the shared temp
 * folder: it is a cache across runs, not a test's scratch.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll } from 'vitest'

const shared = os.tmpdir()
process.env.NODE_COMPILE_CACHE ||= path.join(shared, 'node-compile-cache')
const root = mkdtempSync(path.join(shared, 'inventory-tests-'))
process.env.TMPDIR = root

afterAll(() => {
  process.env.TMPDIR = shared
  rmSync(root, { recursive: true, force: true, maxRetries: 3 })
})
