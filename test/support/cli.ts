/** Runs the local runner the way a user does: in-process for speed, or as a real child process. */
import { execFile } from 'node:child_process'
import { mkdtemp, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { main } from '../../functions/local/commands.ts'

export interface CliResult {
  readonly exitCode: number
  readonly stdout: string
  readonly stderr: string
}

/** A fresh temporary folder. */
export const tempDir = (prefix = 'inventory-test-'): Promise<string> => mkdtemp(path.join(os.tmpdir(), prefix))

/** Writes `token` to a temporary file and returns its path, for --token-file. */
export const tokenFile = async (token: string): Promise<string> => {
  const file = path.join(await tempDir('inventory-token-'), 'token')
  await writeFile(file, token)
  return file
}

/** `node functions/local/cli.mjs <command> <argv>` in this process, output captured. */
export const runCommandInProcess = async (command: string, argv: readonly string[]): Promise<CliResult> => {
  const out: string[] = []
  const err: string[] = []
  const exitCode = await main([command, ...argv], { out: (l) => out.push(l), err: (l) => err.push(l) })
  return { exitCode, stdout: out.join('\n'), stderr: err.join('\n') }
}

/** `npm start -- <argv>` in this process, output captured. */
export const runExportInProcess = (argv: readonly string[]): Promise<CliResult> => runCommandInProcess('export', argv)

const REPO_ROOT = path.resolve(import.meta.dirname, '../..')

/**
 * `node functions/local/cli.mjs <argv>` as a child process on the same Node, for exit statuses and real output;
 * `launcher` runs it under another command (e.g. `['taskset', '-c', '0']`).
 */
export const runCliProcess = (
  argv: readonly string[],
  env: NodeJS.ProcessEnv = {},
  launcher: readonly string[] = [],
): Promise<CliResult> =>
  new Promise((resolve) => {
    const [command = process.execPath, ...launcherArgs] = launcher
    execFile(
      command,
      [
        ...launcherArgs,
        ...(launcher.length > 0 ? [process.execPath] : []),
        path.join(REPO_ROOT, 'functions/local/cli.mjs'),
        ...argv,
      ],
      { cwd: REPO_ROOT, env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const exitCode = error ? (typeof error.code === 'number' ? error.code : 1) : 0
        resolve({ exitCode, stdout, stderr })
      },
    )
  })
