/**
 * A run killed while it held the registry's lock (a folder warehouse) does not hold up the next run: a lock whose
 * holder process is gone, or whose lease ran out, is taken over at once instead of after the 30 s lease.
 */
import { spawnSync } from 'node:child_process'
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'

const DATE = '2026-03-01'
/** Well under the lease: a run that waited the lease out fails the test by its timeout. */
const PROMPTLY_MS = 15_000

let emulator: RunningEmulator
let token: string
beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: { devices: 20, software: 20, users: 20 } }) })
  token = await tokenFile(DEMO_TOKEN)
})
afterAll(() => emulator.close())

/** A process id that ran on this host and has exited. */
const deadPid = (): number => {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' })
  return Number(child.stdout)
}

const exportWithLock = async (lock: string) => {
  const out = await tempDir('stale-lock-')
  await mkdir(path.join(out, '_schemas'), { recursive: true })
  const lockPath = path.join(out, '_schemas', 'devices.json.lock')
  await writeFile(lockPath, lock)
  const result = await runExportInProcess([
    ...['--base-url', emulator.baseUrl, '--table', '1001=devices', '--token-file', token, '--out', out],
    ...['--date', DATE],
  ])
  return { result, out, lockPath }
}

const inAnHour = () => Date.now() + 3_600_000

describe('a registry lock left behind', () => {
  it(
    'by a process of this host that has exited is taken over at once',
    async () => {
      const { result, out, lockPath } = await exportWithLock(
        JSON.stringify({ pid: deadPid(), host: os.hostname(), expiresAt: inAnHour() }),
      )

      expect(result.exitCode).toBe(0)
      expect(JSON.parse(await readFile(path.join(out, '_schemas/devices.json'), 'utf8'))).toMatchObject({
        lastExportDate: DATE,
      })
      // Released after the write, as a live run's lock is.
      await expect(stat(lockPath)).rejects.toMatchObject({ code: 'ENOENT' })
    },
    PROMPTLY_MS,
  )

  it(
    'by a process of another host whose lease ran out is taken over at once',
    async () => {
      const { result } = await exportWithLock(
        JSON.stringify({ pid: process.pid, host: 'another-host', expiresAt: Date.now() - 1 }),
      )

      expect(result.exitCode).toBe(0)
    },
    PROMPTLY_MS,
  )

  it(
    'empty, as a run killed between creating and writing it leaves it, is taken over at once',
    async () => {
      const { result } = await exportWithLock('')

      expect(result.exitCode).toBe(0)
    },
    PROMPTLY_MS,
  )
})
