/**
 * Global setup of `npm test` (vitest.config.ts): the run leaves nothing in the OS temp folder. Before any test
 * file starts, it points TMPDIR at a folder of the run's own there, which every worker, child process and thread
 * inherits; each test file's scratch goes into a folder of its own inside it, removed when the file's tests end
 * (test/support/temp-root.ts). When the run ends, anything still in the run's folder failed to be removed (a
 * worker killed before its file's end, a process that outlived its test): the run fails, naming it, and the folder
 * goes. Node's compile cache stays in the OS temp folder: it is a cache across runs.
 *
 * The run's own folder rather than a comparison of the whole OS temp folder before and after: on a machine doing
 * anything else (an editor, another checkout's tests), that folder gains entries during a run that no test made.
 * Paths that ignore TMPDIR are kept out of the code instead (test/unit/temp-paths.test.ts).
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

/** What is left in `root`, as paths relative to it, each folder with its contents under it, sorted. */
export const leftovers = (root: string): string[] =>
  readdirSync(root, { recursive: true, encoding: 'utf8' })
    .map((entry) => entry.split(path.sep).join('/'))
    .sort()

export default function setup(): () => void {
  const shared = os.tmpdir()
  process.env.NODE_COMPILE_CACHE ||= path.join(shared, 'node-compile-cache')
  const root = mkdtempSync(path.join(shared, 'inventory-test-run-'))
  process.env.TMPDIR = root
  return () => {
    process.env.TMPDIR = shared
    const left = leftovers(root)
    rmSync(root, { recursive: true, force: true, maxRetries: 3 })
    if (left.length > 0) {
      const shown = left.slice(0, 20).join(', ') + (left.length > 20 ? `, and ${left.length - 20} more` : '')
      throw new Error(`the tests left ${left.length} entries in the OS temp folder (${root}), removed now: ${shown}`)
    }
  }
}
