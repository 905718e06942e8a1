/**
 * The local recipe of docs/operations.md ("On the demo: retention, an erasure and a rewrite") as an operator runs
 * it: its commands are read out of the page and run as written by a shell, in a folder holding the configurations
 * it names, `npm` standing for the scripts it runs (cli.mjs on this Node); every line the page quotes is printed,
 * and the count it gives is the run record's. So the page cannot drift from the program.
 */
import { execFile } from 'node:child_process'
import { cp, readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { RunRecord } from '../../functions/export/core/run-record.ts'
import { tempDir } from '../support/cli.ts'

const REPO = path.resolve(import.meta.dirname, '../..')
const HEADING = '### On the demo: retention, an erasure and a rewrite'

/** The section under HEADING: its one shell block and the text after it. */
const recipe = async () => {
  const page = await readFile(path.join(REPO, 'docs/operations.md'), 'utf8')
  const start = page.indexOf(HEADING)
  expect(start).toBeGreaterThan(0)
  const section = page.slice(start + HEADING.length).split(/\n#{2,3} /)[0]!
  const [, script, after] = /```sh\n([\s\S]*?)```([\s\S]*)/.exec(section)!
  return { script: script!, after: after! }
}

/** `npm start -- ...` and `npm run X -- ...`, as the package's scripts run them. */
const NPM = `npm() {
  local command=$1; shift
  if [ "$command" = run ]; then command=$1; shift; elif [ "$command" = start ]; then command=export; fi
  if [ "\${1-}" = -- ]; then shift; fi
  "$RECIPE_NODE" "$RECIPE_CLI" "$command" "$@"
}
set -e
`

const run = (script: string, cwd: string): Promise<{ code: number; output: string }> =>
  new Promise((resolve) => {
    const { INVENTORY_PSEUDONYMIZATION_KEY: _key, ...env } = process.env
    execFile(
      'bash',
      ['-c', `${NPM}${script}`],
      {
        cwd,
        env: { ...env, RECIPE_NODE: process.execPath, RECIPE_CLI: path.join(REPO, 'functions/local/cli.mjs') },
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) =>
        resolve({
          code: error ? (typeof error.code === 'number' ? error.code : 1) : 0,
          output: `${stdout}\n${stderr}`,
        }),
    )
  })

/** A quoted line as a pattern: `…` stands for what varies (a request id, a byte count). */
const quotedLine = (text: string): RegExp =>
  new RegExp(
    text
      .split('…')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*'),
  )

describe('the local recipe of docs/operations.md', () => {
  it('runs as written, start to end, and prints what the page quotes', async () => {
    const { script, after } = await recipe()
    expect(script.trim().split('\n')).toHaveLength(5)
    const folder = await tempDir('demo-recipe-')
    const configs = [...new Set(script.match(/config\/[\w-]+\.json/g))]
    for (const file of configs) await cp(path.join(REPO, file), path.join(folder, file))

    const { code, output } = await run(script, folder)
    expect(code, output).toBe(0)
    const quoted = [...after.matchAll(/`((?:devices|users): [^`]+)`/g)].map((m) => m[1]!.replace(/\s*\n\s*/g, ' '))
    expect(quoted.length).toBeGreaterThanOrEqual(4)
    for (const line of quoted) expect(output, line).toMatch(quotedLine(line))

    // The last export's run record counts the rows the page says were left out.
    const stated = Number(/`erased`\s+column counts the (\d+) rows of users/.exec(after.replace(/\n\s*/g, ' '))![1])
    const lastDate = /--date (\d{4}-\d{2}-\d{2})\s*$/.exec(script.trim())![1]!
    const runs = path.join(folder, 'demo', '_runs', `dt=${lastDate}`)
    const [file] = await readdir(runs)
    const record = JSON.parse(await readFile(path.join(runs, file!), 'utf8')) as RunRecord
    expect(record.tables.find((t) => t.name === 'users')?.erased?.rows).toBe(stated)
    expect(record.tables.every((t) => t.status === 'succeeded')).toBe(true)
  }, 120_000)
})
