/**
 * The matrix of failing commands (test/integration/cli-failures*.test.ts): each command run as the real process
 * through a bad input must end with its exit status, one coded line that names the field or flag, and no stack
 * trace. The cases' folder, token and stand-in are set up once per test file by useCliFailures().
 */
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, expect } from 'vitest'
import { DEMO_TOKEN, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { type CliResult, tempDir, tokenFile } from './cli.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')

/** `node <script> <argv>` from the repository root, as the npm scripts run it. */
export const run = (script: string, argv: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(ROOT, script), ...argv],
      { cwd: ROOT, env: { ...process.env, INVENTORY_TOKEN: '', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        resolve({ exitCode: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr })
      },
    )
  })

export const cli = (argv: readonly string[]) => run('functions/local/cli.mjs', argv)
/** `cdk synth` runs the app with its context in CDK_CONTEXT_JSON; the app fails before any bundling. */
export const synth = (context: Record<string, unknown>, outdir = path.join(dir, 'cdk.out')) => {
  const cdkJson = JSON.parse(readFileSync(path.join(ROOT, 'cdk.json'), 'utf8')) as { context: object }
  return run('infra/app.ts', [], {
    CDK_CONTEXT_JSON: JSON.stringify({ ...cdkJson.context, ...context }),
    CDK_OUTDIR: outdir,
  })
}

export let dir: string
export let token: string
export let emulator: RunningEmulator
export const file = async (name: string, content: unknown): Promise<string> => {
  const target = path.join(dir, name)
  await writeFile(target, typeof content === 'string' ? content : JSON.stringify(content))
  return target
}
export const config = (changes: Record<string, unknown> = {}) => ({
  source: { baseUrl: 'https://inventory.example.com' },
  tables: [{ id: '1001', name: 'devices' }],
  ...changes,
})

/** Sets up the cases' folder, token file and stand-in for the test file that calls it. */
export const useCliFailures = (): void => {
  beforeAll(async () => {
    dir = await tempDir('inventory-cli-failures-')
    token = await tokenFile(DEMO_TOKEN)
    emulator = await startInventoryEmulator()
  })
  afterAll(() => emulator.close())
}

/** An export into `out` against the stand-in, asserting afterwards that it requested nothing. */
export const exportWithoutRequests = async (out: string): Promise<CliResult> => {
  const before = emulator.requests.length
  const result = await cli([
    'export',
    '--base-url',
    emulator.baseUrl,
    '--table',
    '1001',
    '--token-file',
    token,
    '--out',
    out,
  ])
  expect(emulator.requests.slice(before)).toEqual([])
  return result
}

export interface Case {
  readonly command: string
  readonly exitCode: number
  readonly code: string
  readonly names: RegExp
  /** What the `next step:` line must say; only problems with the flags themselves point at --help. */
  readonly nextStep?: RegExp
  readonly run: () => Promise<CliResult>
}

/**
 * Runs a case and checks how it fails. The test files declare the `describe.each` over their cases themselves, so
 * that lists of "tested in file Y" (faults/elsewhere.test.ts) can find each case's title in the file.
 */
export const expectCodedFailure = async (failure: Case): Promise<void> => {
  const result = await failure.run()
  expect(result.exitCode, result.stderr).toBe(failure.exitCode)
  const lines = result.stderr.split('\n').filter((line) => line.trim() !== '')
  const errorLines = lines.filter((line) => line.startsWith('error ['))
  expect(errorLines, result.stderr).toHaveLength(1)
  expect(errorLines[0]).toContain(`error [${failure.code}]: `)
  expect(errorLines[0]).toMatch(failure.names)
  expect(
    lines.filter((line) => !line.startsWith('error [') && !line.startsWith('next step: ')),
    result.stderr,
  ).toEqual([])
  expect(result.stderr).not.toMatch(/^\s+at /m)
  if (failure.nextStep) {
    expect(
      lines.find((line) => line.startsWith('next step: ')),
      result.stderr,
    ).toMatch(failure.nextStep)
    if (!failure.nextStep.source.includes('--help')) expect(result.stderr).not.toContain('--help')
  }
  expect(result.stderr).not.toContain('secretsmanager')
  // Nothing has run at synth time: the runtime's hints do not belong there.
  if (failure.command === 'synth') expect(result.stderr).not.toMatch(/previous data|run record/)
}
