/**
 * The guard example of the docs, run as written: the stand-in started from its command line (npm run emulator's
 * script) without and then with an upstream change, the exporter run against it as a user runs it.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { DEMO_TOKEN } from '../../emulator/index.ts'
import { runCliProcess, tempDir, tokenFile } from '../support/cli.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')
let running: ChildProcess | undefined

/** `npm run emulator -- --port 0 <flags>` until it says where it listens. */
const startEmulator = (flags: readonly string[]): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'emulator/main.ts'), '--port', '0', ...flags], { cwd: ROOT })
    running = child
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      const url = /listening on (http:\/\/\S+)/.exec(output)?.[1]
      if (url && output.includes('Press Ctrl-C')) resolve(output)
    })
    child.stderr.on('data', (chunk: Buffer) => reject(new Error(chunk.toString())))
    child.on('exit', (code) => reject(new Error(`the emulator exited with ${code}: ${output}`)))
  })

const stopEmulator = async () => {
  if (running?.exitCode === null) {
    const exited = new Promise((resolve) => running!.once('exit', resolve))
    running.kill('SIGTERM')
    await exited
  }
  running = undefined
}
afterEach(stopEmulator)

const baseUrlOf = (banner: string) => /listening on (http:\/\/\S+)/.exec(banner)![1]!

describe('the upstream change guards, tried against the stand-in from its command line', () => {
  it('holds a table whose rows drop, warns of a removed column, and publishes after --accept-changes', async () => {
    const out = await tempDir()
    const token = await tokenFile(DEMO_TOKEN)
    const exportOn = (baseUrl: string, date: string, ...extra: string[]) =>
      runCliProcess([
        'export',
        '--base-url',
        baseUrl,
        '--table',
        '1001=devices',
        '--token-file',
        token,
        '--out',
        out,
        '--date',
        date,
        ...extra,
      ])

    const first = await exportOn(baseUrlOf(await startEmulator([])), '2026-05-04')
    expect(first.exitCode, first.stderr).toBe(0)
    await stopEmulator()

    const banner = await startEmulator(['--keep-rows', '1001=0.05', '--drop-column', '1001=OS Version'])
    expect(banner).toContain('upstream change: table 1001 serves 5% of its rows')
    expect(banner).toContain('upstream change: table 1001 without column "OS Version"')
    const held = await exportOn(baseUrlOf(banner), '2026-05-05')
    expect(held.exitCode).toBe(1)
    expect(held.stdout).toMatch(/^devices +HELD ROW_COUNT_DROP/m)
    expect(held.stderr).toMatch(/next step: .*--only devices --accept-changes/)

    const accepted = await exportOn(baseUrlOf(banner), '2026-05-05', '--only', 'devices', '--accept-changes')
    expect(accepted.exitCode, accepted.stderr).toBe(0)
    expect(accepted.stdout).toMatch(/^devices +ok \(ROW_COUNT_DROP accepted, COLUMNS_REMOVED warned\) +125 /m)
  })

  it('refuses a change to a table it does not serve', async () => {
    await expect(startEmulator(['--keep-rows', '9999=0.5'])).rejects.toThrow(/no table 9999 to change/)
  })
})
