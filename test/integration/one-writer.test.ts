/**
 * One writer per table (path/table-lease.ts), through the real CLI in child processes: each pair of operations on
 * one table (an export and an erasure, an export with the old settings and a rewrite, two erasures, an export that
 * expires dates and a rewrite) started together ends in the state of the two run one after the other, in a folder
 * and in s3rver; both really waited for the table (each prints its wait line while the test holds the table). Then
 * each pair again with one of the two killed (SIGKILL) at a random moment and run again: the state is a serial one.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { cp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { PutObjectCommand } from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { acquireTableLease } from '../../functions/export/path/table-lease.ts'
import { FolderWarehouseStore } from '../../functions/export/publish/fs.ts'
import { S3WarehouseStore } from '../../functions/export/publish/s3.ts'
import type { WarehouseStore } from '../../functions/export/publish/store.ts'
import { runCommandInProcess, tempDir, tokenFile } from '../support/cli.ts'
import { type RunningS3, startS3 } from '../support/s3rver.ts'
import { warehouseState } from '../support/warehouse-state.ts'

const DATES = ['2026-11-20', '2026-11-21', '2026-11-22']
const NEXT = '2026-11-23'
const REPO = path.resolve(import.meta.dirname, '../..')
const DEVICES = { id: '1001', name: 'devices', key: ['device_id'], archiveRaw: true }

let emulator: RunningEmulator
let s3: RunningS3
let work: string
let pristine: string
let token: string
const configs: Record<string, string> = {}

const configFile = async (name: string, table: object): Promise<string> => {
  const file = path.join(work, `${name}.json`)
  await writeFile(file, JSON.stringify({ source: { baseUrl: emulator.baseUrl }, tables: [table] }))
  return file
}

/** An export of NEXT with the table's settings of `config`. */
const exportWith = (config: () => string) => (out: string) => [
  ...['export', '--config', config(), '--token-file', token],
  ...['--out', out, '--date', NEXT],
]
/** An erasure of one device. */
const eraseOf = (device: string) => (out: string) => [
  ...['erase', '--config', configs.base!, '--out', out],
  ...['--table', 'devices', '--where', `device_id=${device}`],
]

/** The commands of the pairs, as `npm run` arguments against `out`. */
const COMMANDS = {
  export: exportWith(() => configs.base!),
  expire: exportWith(() => configs.retained!),
  erase7: eraseOf('000007'),
  erase11: eraseOf('000011'),
  rewrite: (out: string) => ['rewrite', '--config', configs.retyped!, '--out', out, '--table', 'devices'],
} as const
type Command = keyof typeof COMMANDS
const PAIRS: readonly (readonly [Command, Command])[] = [
  ['export', 'erase7'],
  ['export', 'rewrite'],
  ['erase7', 'erase11'],
  ['expire', 'rewrite'],
]

interface Target {
  readonly name: string
  /** A fresh copy of the pristine warehouse: its `--out` and its store. */
  copy(label: string): Promise<{ out: string; store: WarehouseStore; env: Record<string, string> }>
}

const folderTarget: Target = {
  name: 'a folder',
  copy: async (label) => {
    const out = path.join(work, 'folders', label)
    await cp(pristine, out, { recursive: true })
    return { out, store: new FolderWarehouseStore(out), env: {} }
  },
}

const s3Target: Target = {
  name: 's3rver',
  copy: async (label) => {
    for (const entry of await readdir(pristine, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue
      const key = path.relative(pristine, path.join(entry.parentPath, entry.name)).split(path.sep).join('/')
      const Body = await readFile(path.join(entry.parentPath, entry.name))
      await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `${label}/${key}`, Body }))
    }
    const store = new S3WarehouseStore(s3.client, s3.bucket, label)
    return { out: `s3://${s3.bucket}/${label}`, store, env: s3Environment() }
  },
}

/** The SDK's environment for s3rver, with no shared config or instance metadata to fall back on. */
const s3Environment = () => ({
  ...s3.sdkEnvironment,
  AWS_CONFIG_FILE: path.join(work, 'no-config'),
  AWS_SHARED_CREDENTIALS_FILE: path.join(work, 'no-credentials'),
  AWS_EC2_METADATA_DISABLED: 'true',
})

/** `npm run <argv>` in a child process, its stderr read as it comes. */
const start = (argv: readonly string[], env: Record<string, string>) => {
  const child: ChildProcess = spawn(process.execPath, [path.join(REPO, 'functions/local/cli.mjs'), ...argv], {
    cwd: REPO,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  let stdout = ''
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
  })
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; stdout: string }>(
    (resolve) => child.on('close', (code, signal) => resolve({ code, signal, stderr, stdout })),
  )
  /** Resolves once stderr holds one of `texts`, or (`orEnd`) the process has ended. */
  const printed = async (texts: readonly string[], orEnd = false) => {
    while (!texts.some((text) => stderr.includes(text))) {
      if (child.exitCode !== null || child.signalCode !== null) {
        if (orEnd) return
        throw new Error(`${argv[0]} ended before printing "${texts[0]}": ${stderr}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  return { child, done, printed }
}

/** Runs `first` then `second` in this process, each to its end, and answers the state they leave. */
const serialState = async (target: Target, label: string, first: Command, second: Command) => {
  const { out, store } = await target.copy(label)
  for (const command of [first, second]) {
    const [name, ...argv] = COMMANDS[command](out)
    const result = await runCommandInProcess(name!, argv)
    expect(result.exitCode, `${command}: ${result.stderr}`).toBe(0)
  }
  return warehouseState(store)
}

beforeAll(async () => {
  work = await tempDir('one-writer-')
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: { devices: 60, software: 5, users: 5 } }) })
  s3 = await startS3('warehouse')
  // The commands run in this process reach s3rver as those in child processes do: through the SDK's environment.
  // An erasure records its request with the key, and every later run of the table matches it with the same key.
  Object.assign(process.env, s3Environment(), { INVENTORY_PSEUDONYMIZATION_KEY: 'k'.repeat(32) })
  token = await tokenFile(DEMO_TOKEN)
  configs.base = await configFile('base', DEVICES)
  configs.retained = await configFile('retained', { ...DEVICES, retention: { days: 2 } })
  configs.retyped = await configFile('retyped', { ...DEVICES, columnTypes: { ram_gb: 'string' } })
  pristine = path.join(work, 'pristine')
  await mkdir(path.join(work, 'folders'))
  for (const date of DATES) {
    emulator.upstream.setDate(date)
    const result = await runCommandInProcess('export', [
      ...['--config', configs.base, '--token-file', token, '--out', pristine, '--date', date],
    ])
    expect(result.exitCode, result.stderr).toBe(0)
  }
  // Every later export is of NEXT, as the stand-in serves it that day.
  emulator.upstream.setDate(NEXT)
}, 120_000)
afterAll(async () => {
  await emulator?.close()
  await s3?.close()
  if (work) await rm(work, { recursive: true, force: true })
})

describe.each([folderTarget, s3Target])('two writers of one table in $name', (target) => {
  it.concurrent.each(PAIRS)('%s and %s started together end as the two run one after the other', async (a, b) => {
    const label = `${target === s3Target ? 's3' : 'fs'}-${a}-${b}`
    const serial = [await serialState(target, `${label}-ab`, a, b), await serialState(target, `${label}-ba`, b, a)]
    const { out, store, env } = await target.copy(`${label}-together`)
    // The test holds the table until both are waiting for it, so that they start on it together.
    const gate = await acquireTableLease(
      store,
      { id: '1001', name: 'devices' },
      {
        owner: 'test-gate',
        operation: 'export',
        waitMs: 0,
      },
    )
    const runs = [start(COMMANDS[a](out), env), start(COMMANDS[b](out), env)]
    await Promise.all(runs.map((run) => run.printed(['devices: waiting for another export of the table'])))
    await gate.release()
    const results = await Promise.all(runs.map((run) => run.done))
    for (const result of results) expect(result.stderr).not.toMatch(/INTERNAL|TABLE_BUSY/)
    expect(serial).toContainEqual(await warehouseState(store))
  })
})

describe('two writers of one table, one killed at a random moment and run again', () => {
  it.concurrent.each(PAIRS)('%s and %s end in a serial state', async (a, b) => {
    const label = `kill-${a}-${b}`
    const serial = [
      await serialState(folderTarget, `${label}-ab`, a, b),
      await serialState(folderTarget, `${label}-ba`, b, a),
    ]
    const { out, store } = await folderTarget.copy(`${label}-killed`)
    const victim = Math.random() < 0.5 ? a : b
    const delayMs = Math.round(Math.random() * 600)
    const runs = [a, b].map((command) => ({ command, run: start(COMMANDS[command](out), {}) }))
    const killed = runs.find((r) => r.command === victim)!
    // Somewhere in its work: from the moment its first run starts (or it waits for the table) on.
    await killed.run.printed(['export run started', 'waiting for another'], true)
    await new Promise((resolve) => setTimeout(resolve, delayMs))
    killed.run.child.kill('SIGKILL')
    await Promise.all(runs.map((r) => r.run.done))
    const [name, ...argv] = COMMANDS[victim](out)
    const rerun = await runCommandInProcess(name!, argv)
    expect(rerun.stderr, `${victim} killed after ${delayMs} ms`).not.toMatch(/INTERNAL|TABLE_BUSY/)
    expect(serial, `${victim} killed after ${delayMs} ms`).toContainEqual(await warehouseState(store))
  })
})
