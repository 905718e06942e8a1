/**
 * The fault matrix, runs refused at the start: a bad --out, a malformed --table, a date outside the window, a
 * token an HTTP header cannot carry. Each is a usage or configuration error (exit 2) in one coded line naming
 * the flag, before any request, with the previous good data byte for byte intact and the token (a canary) nowhere.
 * Corrupt state files (registry, run index, raw archive) are tested in ../corrupt-state.test.ts.
 */
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ErrorCode } from '../../../functions/export/core/errors.ts'
import { CANARY_TOKEN } from '../../support/canary.ts'
import { runExportInProcess, tokenFile } from '../../support/cli.ts'
import {
  DATE,
  emulator,
  evidence,
  exportArgs,
  exportedWorkspace,
  readObject,
  tokenPath,
  useFaultMatrix,
  type Workspace,
} from '../../support/fault-matrix.ts'

useFaultMatrix()

/** Refused before any request: a usage or configuration error (exit 2) that names the flag, the data untouched. */
const refusedAtStart: readonly {
  readonly name: string
  readonly code: ErrorCode
  readonly message: RegExp
  /** The flags of the run, given the workspace. */
  readonly argv: (ws: Workspace) => Promise<string[]>
}[] = [
  {
    name: '--out is a file',
    code: 'USAGE_INVALID',
    message: /--out .*warehouse-file is not a folder/,
    argv: async (ws) => {
      const file = path.join(path.dirname(ws.config), 'warehouse-file')
      await writeFile(file, 'x')
      return ['--config', ws.config, '--token-file', tokenPath, '--out', file, '--date', DATE]
    },
  },
  {
    name: '--out under /proc, where a recursive mkdir would spin forever',
    code: 'USAGE_INVALID',
    message: /--out \/proc\/warehouse cannot be written/,
    argv: async (ws) => ['--config', ws.config, '--token-file', tokenPath, '--out', '/proc/warehouse', '--date', DATE],
  },
  {
    name: '--table with a second "="',
    code: 'USAGE_INVALID',
    message: /--table must be ID or ID=NAME with one "=", got "1=a=b"/,
    argv: async (ws) => [
      '--base-url',
      emulator.baseUrl,
      '--table',
      '1=a=b',
      '--token-file',
      tokenPath,
      '--out',
      ws.out,
    ],
  },
  ...['1999-12-31', '9999-12-31'].map((date) => ({
    name: `--date ${date}, outside the export-date window`,
    code: 'USAGE_INVALID' as const,
    message: new RegExp(`--date must be between 2000-01-01 and .*, got "${date}"`),
    argv: async (ws: Workspace) => [...exportArgs(ws), '--date', date],
  })),
  {
    name: 'a token with a character an HTTP header cannot carry',
    code: 'TOKEN_UNAVAILABLE',
    message: /character \d+ of the token cannot be sent in an HTTP header/,
    argv: async (ws) => {
      const bad = await tokenFile(`${CANARY_TOKEN.slice(0, 8)}\u0007${CANARY_TOKEN.slice(8)}`)
      return ['--config', ws.config, '--token-file', bad, '--out', ws.out, '--date', DATE]
    },
  },
]

describe('the runner refusing to start', () => {
  it.each(refusedAtStart)('$name: exits 2 naming it, requests nothing, keeps the previous data', async (refusal) => {
    const { ws, good } = await exportedWorkspace()
    const since = emulator.requests.length

    const result = await runExportInProcess(await refusal.argv(ws))
    evidence.texts['refused run stdout'] = result.stdout
    evidence.texts['refused run stderr'] = result.stderr

    expect(result.exitCode, result.stderr).toBe(2)
    expect(result.stderr).toMatch(new RegExp(`^error \\[${refusal.code}\\]: `, 'm'))
    expect(result.stderr).toMatch(refusal.message)
    expect(result.stderr).not.toMatch(/^\s+at /m)
    expect(emulator.requests.slice(since)).toEqual([])
    for (const [key, bytes] of good) expect((await readObject(ws, key)).equals(bytes), key).toBe(true)
  })
})
