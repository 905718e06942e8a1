/**
 * `node functions/local/cli.mjs` with a `node` older than package.json's engines (a system Node 20, say, where the
 * npm scripts would use the project's Node 24): one coded line saying which Node is needed, no stack trace.
 */
import { execFile, execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = path.resolve(import.meta.dirname, '../..')

/** A `node` on PATH, outside node_modules, older than engines' 22.12: the machine's own, if it is that old. */
const oldNode = (process.env.PATH ?? '')
  .split(path.delimiter)
  .filter((dir) => !dir.includes('node_modules'))
  .map((dir) => path.join(dir, 'node'))
  .find((candidate) => {
    if (!existsSync(candidate)) return false
    const [major = 0, minor = 0] = execFileSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' })
      .trim()
      .split('.')
      .map(Number)
    return major < 22 || (major === 22 && minor < 12)
  })

const run = (argv: readonly string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    execFile(oldNode!, [path.join(ROOT, 'functions/local/cli.mjs'), ...argv], { cwd: ROOT }, (error, stdout, stderr) =>
      resolve({ exitCode: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    )
  })

describe.skipIf(oldNode === undefined)(
  'the local runner on a Node older than 22.12 (no such node on PATH: skipped)',
  () => {
    it('says in one coded line which Node it needs and to run it through npm, exit 2, no stack trace', async () => {
      const engines = (
        JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }
      ).engines.node
      expect(engines).toBe('>=22.12')

      for (const argv of [[], ['export', '--demo'], ['check', '--help']]) {
        const result = await run(argv)
        expect(result.exitCode).toBe(2)
        expect(result.stdout).toBe('')
        expect(result.stderr.trim().split('\n')).toEqual([
          expect.stringMatching(
            /^error \[USAGE_INVALID\]: this command needs Node\.js 22\.12 or later; this is Node\.js \d+\.\d+\.\d+$/,
          ),
          "next step: run it through npm (npm start, npm run check, npm run help): the scripts use the project's Node 24",
        ])
      }
    })
  },
)
