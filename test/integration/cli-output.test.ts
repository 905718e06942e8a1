/**
 * What a person sees on the terminal: plain lines and a table, JSON only when asked for, colour only on a terminal.
 * Run as the real process (piped) and, for a terminal, under script(1), which gives the program a pseudo-terminal.
 */
import { execFile } from 'node:child_process'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKENS, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { colourEnabled } from '../../functions/local/colour.ts'
import { type CliResult, runCliProcess, tempDir, tokenFile } from '../support/cli.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')
const ESC = '\x1b['

let emulator: RunningEmulator
beforeAll(async () => {
  emulator = await startInventoryEmulator()
})
afterAll(() => emulator.close())

const exportArgs = async (token: string, ...extra: string[]) => [
  'export',
  '--base-url',
  emulator.baseUrl,
  '--table',
  '1001=devices',
  '--table',
  '1003=users',
  '--token-file',
  await tokenFile(token),
  '--out',
  await tempDir(),
  ...extra,
]
const exportWith = async (token: string, ...extra: string[]) => runCliProcess(await exportArgs(token, ...extra))

/** The CLI on a pseudo-terminal: stdout and stderr both arrive as the terminal's output. */
const onTerminal = (argv: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> =>
  new Promise((resolve) => {
    const command = [process.execPath, path.join(ROOT, 'functions/local/cli.mjs'), ...argv]
      .map((word) => `'${word.replaceAll("'", "'\\''")}'`)
      .join(' ')
    execFile(
      'script',
      ['-qec', command, '/dev/null'],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: '', TERM: 'xterm', ...env }, timeout: 120_000 },
      (error, stdout, stderr) =>
        resolve({ exitCode: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    )
  })

describe('a failing local run', () => {
  it('writes plain lines, no JSON, and says its next step once', async () => {
    const result = await exportWith(DEMO_TOKENS.revoked)
    expect(result.exitCode).toBe(1)
    expect(result.stderr).not.toMatch(/[{}]/)
    expect(result.stderr).toMatch(/^error: token check failed; no table was exported \[AUTH_REJECTED\]/m)
    expect(result.stderr.match(/next step: /g)).toHaveLength(1)
    expect(result.stderr).toMatch(/next step: .*--token-file FILE \(or set INVENTORY_TOKEN\)/)
    expect(result.stdout).toMatch(/^devices +FAILED AUTH_REJECTED/m)
    // Piped: no colour.
    expect(result.stdout + result.stderr).not.toContain(ESC)
  })

  it('writes one JSON object a line to stderr with --log-format json, the summary still on stdout', async () => {
    const result = await exportWith(DEMO_TOKENS.revoked, '--log-format', 'json')
    expect(result.exitCode).toBe(1)
    const events = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { level: string; message: string; error?: { code: string } })
    expect(events.find((e) => e.message === 'token check failed; no table was exported')).toMatchObject({
      level: 'error',
      error: { code: 'AUTH_REJECTED' },
    })
    expect(events.filter((e) => e.message === 'table export failed')).toHaveLength(2)
    expect(result.stdout).toMatch(/^devices +FAILED AUTH_REJECTED/m)
  })
})

describe('the demo with --log-format json', () => {
  it('writes every stderr line as a JSON object, the demo line included', async () => {
    const result = await runCliProcess(['export', '--demo', '--log-format', 'json', '--out', await tempDir()])
    expect(result.exitCode).toBe(0)
    const lines = result.stderr.trim().split('\n')
    expect(lines.filter((line) => !line.startsWith('{'))).toEqual([])
    const events = lines.map((line) => JSON.parse(line) as { level: string; message: string; baseUrl?: string })
    expect(events[0]).toMatchObject({
      level: 'info',
      message: 'demo: exporting the built-in stand-in service',
      baseUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
    })
  })
})

describe('colour', () => {
  it('paints the status words on a terminal', async () => {
    const result = await onTerminal(await exportArgs(DEMO_TOKENS.revoked))
    expect(result.stdout).toMatch(/^devices +\x1b\[1;31mFAILED AUTH_REJECTED/m)
    expect(result.stdout).toMatch(/users: \x1b\[1;31mFAILED\x1b\[0m \[AUTH_REJECTED\]/)
  })

  it('leaves a terminal plain when NO_COLOR is set', async () => {
    const result = await onTerminal(await exportArgs(DEMO_TOKENS.revoked), { NO_COLOR: '1' })
    expect(result.stdout).toMatch(/^devices +FAILED AUTH_REJECTED/m)
    expect(result.stdout).not.toMatch(/\x1b\[[\d;]*m/)
  })

  it.each([
    [true, {}, true],
    [false, {}, false],
    [true, { NO_COLOR: '1' }, false],
    [true, { NO_COLOR: '' }, true],
    [true, { TERM: 'dumb' }, false],
  ])('isTTY %s with %j: colour %s', (isTTY, env, expected) => {
    expect(colourEnabled({ isTTY }, env)).toBe(expected)
  })
})
