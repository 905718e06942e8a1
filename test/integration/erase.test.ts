/**
 * `npm run erase` through the real CLI against a warehouse the stand-in filled: the matching rows leave every date,
 * every other value means what it meant, the rows keep their lineage, the raw archive of the dates goes, nothing
 * written or printed holds the value, a rerun changes nothing, and a run killed in the middle is finished by the next.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { cp, readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { parse } from 'csv-parse/sync'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import type { RunRecord } from '../../functions/export/core/run-record.ts'
import { queryWarehouse } from '../../functions/local/warehouse-sql.ts'
import { runCommandInProcess, runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'

const DATES = ['2026-11-20', '2026-11-21', '2026-11-22']
const KEY = 'k'.repeat(40)
const REPO = path.resolve(import.meta.dirname, '../..')

let emulator: RunningEmulator
let work: string
let pristine: string
let config: string
let keyFile: string

const allFiles = async (root: string): Promise<string[]> =>
  (await readdir(root, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))

/** Every file under `root` whose bytes hold `text` (Parquet footers and dictionaries keep values in clear). */
const filesHolding = async (root: string, text: string): Promise<string[]> => {
  const needle = Buffer.from(text)
  const found: string[] = []
  for (const file of await allFiles(root)) if ((await readFile(file)).includes(needle)) found.push(file)
  return found
}

const rows = async (root: string, sql: string) => (await queryWarehouse(root, sql)).rows.map((r) => r.map(String))

const erase = (out: string, ...flags: string[]) =>
  runCommandInProcess('erase', ['--config', config, '--out', out, '--pseudonymization-key-file', keyFile, ...flags])

beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: { devices: 300, software: 10, users: 50 } }) })
  work = await tempDir('erase-')
  pristine = path.join(work, 'pristine')
  config = path.join(work, 'config.json')
  keyFile = path.join(work, 'key')
  await writeFile(keyFile, KEY)
  await writeFile(
    config,
    JSON.stringify({
      source: { baseUrl: emulator.baseUrl },
      tables: [
        { id: '1001', name: 'devices', key: ['device_id'], archiveRaw: true },
        { id: '1003', name: 'users', key: ['user_id'], columns: { pseudonymize: ['e_mail'] } },
      ],
    }),
  )
  const token = await tokenFile(DEMO_TOKEN)
  for (const date of DATES) {
    emulator.upstream.setDate(date)
    const args = ['--config', config, '--token-file', token, '--out', pristine, '--date', date]
    const result = await runExportInProcess([...args, '--pseudonymization-key-file', keyFile])
    expect(result.exitCode, result.stderr).toBe(0)
  }
}, 120_000)
afterAll(async () => {
  await emulator?.close()
})

/** A fresh copy of the exported warehouse for one test. */
const copyOf = async (name: string): Promise<string> => {
  const out = path.join(work, name)
  await cp(pristine, out, { recursive: true })
  return out
}

describe('npm run erase', () => {
  it('--dry-run names the dates and rows that would change, and changes nothing', async () => {
    const out = await copyOf('dry')
    const before = await rows(out, 'SELECT dt, count(*) FROM devices GROUP BY dt ORDER BY dt')
    const result = await erase(out, '--table', 'devices', '--where', 'device_id=000007', '--dry-run')
    expect(result.exitCode, result.stderr).toBe(0)
    // The plan and its summary on one stream, in order; the progress once, on the other.
    expect(result.stdout.split('\n')).toEqual([
      ...DATES.map((date) => `devices: dt=${date}: 1 row would be removed`),
      `devices: 3 rows matching device_id would be removed from 3 dates (${DATES.map((d) => `dt=${d}`).join(', ')})`,
    ])
    expect(result.stderr).toBe('devices: looking for the rows matching device_id in every export date')
    expect(existsSync(path.join(out, '_erasures'))).toBe(false)
    expect(await rows(out, 'SELECT dt, count(*) FROM devices GROUP BY dt ORDER BY dt')).toEqual(before)
  })

  it('removes the rows from every date, keeps every other value and the rows lineage, and deletes the dates raw bodies', async () => {
    const out = await copyOf('by-id')
    const others =
      "SELECT * EXCLUDE (_source_row_number, _row_fingerprint) FROM devices WHERE device_id <> '000007' ORDER BY dt, device_id"
    const before = await rows(out, others)
    const result = await erase(out, '--table', 'devices', '--where', 'device_id=000007')
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toMatch(/devices: 3 rows matching device_id removed from 3 dates/)
    expect(await rows(out, "SELECT count(*) FROM devices WHERE device_id = '000007'")).toEqual([['0']])
    // Every other row, its run id and export time included, is as it was.
    expect(await rows(out, others)).toEqual(before)
    expect(await readdir(path.join(out, '_raw', 'devices')).catch(() => [])).toEqual([])
    // Each date's run record says what went, by column and count, never by value.
    const records = (await allFiles(path.join(out, '_runs'))).filter((f) => /dt=.*\.json$/.test(f))
    const erasures = []
    for (const file of records) {
      const record = JSON.parse(await readFile(file, 'utf8')) as RunRecord
      if (record.mode === 'erase') erasures.push({ dt: record.exportDate, erasure: record.tables[0]?.erasure })
    }
    expect(erasures.sort((a, b) => a.dt.localeCompare(b.dt))).toEqual(
      DATES.map((dt) => ({ dt, erasure: { columns: ['device_id'], rowsRemoved: 1 } })),
    )
    // The changes view does not report the erased device as removed.
    expect(await rows(out, "SELECT count(*) FROM devices_changes WHERE device_id = '000007'")).toEqual([['0']])
  })

  it('matches a pseudonymized column by the pseudonym of the value given in clear, and leaves no trace of either', async () => {
    const out = await copyOf('by-owner')
    const pseudonymOf = async (root: string) =>
      rows(root, "SELECT e_mail FROM users WHERE dt = '2026-11-22' ORDER BY user_id LIMIT 1")
    const [[email]] = (await pseudonymOf(pristine)) as [[string]]
    // The clear address behind the pseudonym, as the stand-in serves it (it still acts out the last date).
    const csv = await (
      await fetch(`${emulator.baseUrl}/rest/tables/1003/csv`, { headers: { token: DEMO_TOKEN } })
    ).text()
    const [header, ...records] = parse(csv, { bom: true }) as string[][]
    const at = (name: string) => header!.indexOf(name)
    const first = records.sort((a, b) => a[at('User ID')]!.localeCompare(b[at('User ID')]!))[0]!
    const clear = first[at('E-mail')]!
    expect(Number((await rows(pristine, `SELECT count(*) FROM users WHERE e_mail = '${email}'`))[0]![0])).toBe(3)
    const result = await erase(out, '--table', 'users', '--where', `e_mail=${clear}`)
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toContain('users: 3 rows matching e_mail removed from 3 dates')
    expect(`${result.stdout}\n${result.stderr}`).not.toContain(clear)
    expect(await rows(out, `SELECT count(*) FROM users WHERE e_mail = '${email}'`)).toEqual([['0']])
    // Only the recorded request holds the pseudonym: the digest it is matched by, never the value.
    const [request] = await readdir(path.join(out, '_erasures', 'users'))
    expect(await filesHolding(out, email)).toEqual([path.join(out, '_erasures', 'users', request!)])
    expect(await filesHolding(out, clear)).toEqual([])
  })

  it('changes nothing when run again', async () => {
    const out = await copyOf('again')
    expect((await erase(out, '--table', 'devices', '--where', 'device_id=000003')).exitCode).toBe(0)
    const objects = async () =>
      Promise.all(DATES.map((d) => readFile(path.join(out, 'devices', `dt=${d}`, 'data.parquet'))))
    const first = await objects()
    const again = await erase(out, '--table', 'devices', '--where', 'device_id=000003')
    expect(again.exitCode, again.stderr).toBe(0)
    expect(again.stdout).toContain('devices: 0 rows matching device_id removed from 0 dates')
    expect(await objects()).toEqual(first)
  })

  it('--aws-event prints the state machine input with digests only, and refuses without the key', async () => {
    const printed = await erase(work, '--table', 'users', '--where', 'e_mail=jane.doe@example.com', '--aws-event')
    expect(printed.exitCode, printed.stderr).toBe(0)
    const event = JSON.parse(printed.stdout) as { history: { where: { column: string; digest: string }[] } }
    expect(event.history.where).toEqual([{ column: 'e_mail', digest: expect.stringMatching(/^[0-9a-f]{32}$/) }])
    expect(printed.stdout).not.toContain('jane.doe')
    const keyless = await runCommandInProcess('erase', [
      ...['--config', config, '--table', 'users', '--where', 'e_mail=jane.doe@example.com', '--aws-event'],
    ])
    expect(keyless.exitCode).toBe(2)
    expect(keyless.stdout).toBe('')
    expect(keyless.stderr).toContain(
      'error [CONFIG_INVALID]: invalid pseudonymization key: --pseudonymization-key-file: is needed with --aws-event',
    )
    expect(keyless.stderr).not.toContain('jane.doe')
  })

  it('refuses a column the table does not have, naming it and never the value', async () => {
    const out = await copyOf('bad')
    const result = await erase(out, '--table', 'devices', '--where', 'e_mail=someone@example.com')
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toMatch(
      /error \[USAGE_INVALID\]: --where names "e_mail", which is not a data column of devices/,
    )
    expect(result.stderr).not.toContain('someone@example.com')
  })

  it('after a SIGKILL in the middle, a rerun ends in the state of an uninterrupted run', async () => {
    const whole = await copyOf('whole')
    const killed = await copyOf('killed')
    const flags = ['--table', 'devices', '--where', 'device_id=000005']
    expect((await erase(whole, ...flags)).exitCode).toBe(0)
    // Killed as soon as the first date is rewritten: the second may be half written.
    const signal = await new Promise<NodeJS.Signals | null>((resolve) => {
      const child = spawn(
        process.execPath,
        [
          path.join(REPO, 'functions/local/cli.mjs'),
          'erase',
          '--config',
          config,
          '--out',
          killed,
          '--pseudonymization-key-file',
          keyFile,
          ...flags,
        ],
        { cwd: REPO, stdio: ['ignore', 'pipe', 'ignore'] },
      )
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('row removed')) child.kill('SIGKILL')
      })
      child.on('close', (_code, killedBy) => resolve(killedBy))
    })
    expect(signal).toBe('SIGKILL')
    // It was stopped before the last date: that date still holds the row.
    expect(await rows(killed, "SELECT count(*) FROM devices WHERE device_id = '000005' AND dt = '2026-11-22'")).toEqual(
      [['1']],
    )
    const rerun = await erase(killed, ...flags)
    expect(rerun.exitCode, rerun.stderr).toBe(0)
    const state = 'SELECT * EXCLUDE (_source_row_number, _row_fingerprint) FROM devices ORDER BY dt, device_id'
    expect(await rows(killed, state)).toEqual(await rows(whole, state))
    expect(await readdir(path.join(killed, '_raw', 'devices')).catch(() => [])).toEqual([])
  })
})
