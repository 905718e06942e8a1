/**
 * `npm run check` takes the command line of `npm start` as it is: the flags about what to check (`--only`, the key
 * file, `--log-format`) apply, and the flags about writing (`--out`, `--accept-changes`, `--concurrency`) are
 * accepted with one stderr line each saying why they change nothing. Run as the real process, against the stand-in.
 */
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { runCliProcess, tempDir, tokenFile } from '../support/cli.ts'

let emulator: RunningEmulator
beforeAll(async () => {
  emulator = await startInventoryEmulator()
})
afterAll(() => emulator.close())

/** A start command line for two tables, with every flag that writes or tunes the export. */
const startLine = async (...extra: string[]) => {
  const folder = await tempDir()
  const keyFile = path.join(folder, 'key')
  await writeFile(keyFile, 'k'.repeat(48))
  return [
    '--base-url',
    emulator.baseUrl,
    '--table',
    '1001=devices',
    '--table',
    '1003=users',
    '--token-file',
    await tokenFile(DEMO_TOKEN),
    '--out',
    path.join(folder, 'warehouse'),
    '--date',
    '2026-05-04',
    '--concurrency',
    '3',
    '--only',
    'users',
    '--accept-changes',
    '--pseudonymization-key-file',
    keyFile,
    ...extra,
  ]
}

const flagsOf = (help: string) => [...help.matchAll(/^ {2}(?:-\w, )?(--[\w-]+)/gm)].map((m) => m[1]).sort()

describe('npm run check with the flags of npm start', () => {
  it('lists every flag of npm start in its help', async () => {
    const start = await runCliProcess(['export', '--help'])
    const check = await runCliProcess(['check', '--help'])
    expect(flagsOf(check.stdout)).toEqual(flagsOf(start.stdout))
  })

  it('checks only the --only table, and says in one line each why --out, --accept-changes and --concurrency change nothing', async () => {
    const result = await runCliProcess(['check', ...(await startLine())])

    expect(result.stderr.trim().split('\n')).toEqual([
      '--out is ignored: check writes nothing',
      '--accept-changes is ignored: check publishes nothing, so no upstream change guard holds anything',
      '--concurrency is ignored: check reads one table at a time, and only its first rows',
    ])
    expect(result.stdout).toMatch(/^table 1003 -> users: OK/m)
    expect(result.stdout).not.toContain('-> devices')
    expect(result.stdout).toMatch(/^ready: every table can be exported$/m)
    expect(result.exitCode).toBe(0)
  })

  it('writes those lines as JSON objects with --log-format json', async () => {
    const result = await runCliProcess(['check', ...(await startLine('--log-format', 'json'))])

    const lines = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { level: string; message: string })
    expect(lines.map((line) => [line.level, line.message])).toEqual([
      ['info', '--out is ignored: check writes nothing'],
      ['info', '--accept-changes is ignored: check publishes nothing, so no upstream change guard holds anything'],
      ['info', '--concurrency is ignored: check reads one table at a time, and only its first rows'],
    ])
    expect(result.exitCode).toBe(0)
  })

  it('refuses an --only that names no configured table, as npm start does', async () => {
    const result = await runCliProcess(['check', ...(await startLine('--only', 'printers'))])

    expect(result.stderr).toMatch(/^error \[USAGE_INVALID\]: --only "printers" is not a configured table id or name$/m)
    expect(result.exitCode).toBe(2)
  })

  it('reads the pseudonymization key file as npm start does: one it cannot read fails the check', async () => {
    const argv = await startLine()
    argv[argv.indexOf('--pseudonymization-key-file') + 1] = path.join(await tempDir(), 'missing')
    const result = await runCliProcess(['check', ...argv])

    expect(result.stderr).toMatch(
      /^error \[CONFIG_INVALID\]: .*--pseudonymization-key-file .*cannot be read \(ENOENT\)/m,
    )
    expect(result.exitCode).toBe(2)
  })
})
