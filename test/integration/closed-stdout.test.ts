/**
 * `npm start | head -1` and `npm run query ... | head`: a reader that closes stdout after its first line ends the
 * command quietly, with the command's own exit status, and an export still finishes its work.
 */
import { spawn } from 'node:child_process'
import { access, rm } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir } from '../support/cli.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')

interface HeadResult {
  readonly exitCode: number | null
  readonly firstLine: string
  readonly stderr: string
}

/** The CLI with stdout read up to its first line, then closed, as `| head -1` does. */
const throughHead = (argv: readonly string[]): Promise<HeadResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'functions/local/cli.mjs'), ...argv], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8')
      if (stdout.includes('\n')) child.stdout.destroy()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8')
    })
    child.on('error', reject)
    child.on('close', (exitCode) => resolve({ exitCode, firstLine: stdout.split('\n')[0]!, stderr }))
  })

let work: string
beforeAll(async () => {
  work = await tempDir('closed-stdout-')
})
afterAll(() => rm(work, { recursive: true, force: true }))

describe('a closed stdout', () => {
  it('ends the demo export quietly with status 0, after it has published', async () => {
    const out = path.join(work, 'warehouse')
    const result = await throughHead(['export', '--demo', '--out', out])
    expect(result.firstLine).toMatch(/^table +status/)
    expect(result.stderr).not.toMatch(/EPIPE|\n\s+at /)
    expect(result.exitCode).toBe(0)
    await access(path.join(out, 'devices'))
  })

  it('ends a query with more rows than the reader wanted quietly with status 0', async () => {
    const result = await throughHead(['query', '--out', path.join(work, 'warehouse'), 'SELECT * FROM range(200000)'])
    expect(result.firstLine).toMatch(/^range/)
    expect(result.stderr).not.toMatch(/EPIPE|\n\s+at /)
    expect(result.exitCode).toBe(0)
  })
})
