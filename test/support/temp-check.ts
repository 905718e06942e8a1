/**
 * Global setup of `npm test` (vitest.config.ts): the run leaves nothing in the OS temp folder. It lists the folder
 * when the run starts and again when it ends, and fails the run naming every entry that is new. Each test file's
 * scratch goes into a folder of its own that is removed afterwards (test/support/temp-root.ts); what this catches
 * is whatever escaped it: a process started without TMPDIR, a path built from a hard-coded /tmp, a file's folder
 * left behind by a worker that was killed.
 *
 * Left out: Node's compile cache (a cache across runs), and the temp folders of other test runs still going on
 * the same machine (test/support/temp-root.ts names them after their process, which is still alive).
 */
import { readdirSync } from 'node:fs'
import os from 'node:os'

const CACHES = new Set(['node-compile-cache'])
const TEST_FILE_ROOT = /^inventory-tests-(\d+)-/

/** Whether process `pid` is running (signal 0 only checks). */
const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The entries of `after` that were not in `before`, except caches and the folders of test files still running. */
export const leftovers = (
  before: ReadonlySet<string>,
  after: readonly string[],
  alive: (pid: number) => boolean = isAlive,
): string[] =>
  after
    .filter((name) => !before.has(name) && !CACHES.has(name))
    .filter((name) => {
      const pid = TEST_FILE_ROOT.exec(name)?.[1]
      return pid === undefined || !alive(Number(pid))
    })
    .sort()

export default function setup(): () => void {
  const folder = os.tmpdir()
  const before = new Set(readdirSync(folder))
  return () => {
    const left = leftovers(before, readdirSync(folder))
    if (left.length > 0) {
      throw new Error(
        `the tests left ${left.length} entries in ${folder}, which a test must remove (pass or fail): ${left.join(', ')}`,
      )
    }
  }
}
