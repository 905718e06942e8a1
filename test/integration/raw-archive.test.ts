import { createHash } from 'node:crypto'
import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import type { RunRecord } from '../../functions/export/core/run-record.ts'
import { archiveSource, FolderWarehouseStore, parseExportConfig } from '../../functions/export/index.ts'
import { runCommandInProcess, runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'
import { query } from '../support/duckdb.ts'

let emulator: RunningEmulator
let out: string
let configFile: string
let served: Buffer

beforeAll(async () => {
  emulator = await startInventoryEmulator()
  out = await tempDir()
  configFile = path.join(out, '..', `config-${path.basename(out)}.json`)
  await writeFile(
    configFile,
    JSON.stringify({
      source: { baseUrl: emulator.baseUrl },
      tables: [{ id: '1003', name: 'users', archiveRaw: true }],
    }),
  )
  served = Buffer.from(
    await (await fetch(`${emulator.baseUrl}/rest/tables/1003/csv`, { headers: { token: DEMO_TOKEN } })).arrayBuffer(),
  )
  const result = await runExportInProcess([
    '--config',
    configFile,
    '--token-file',
    await tokenFile(DEMO_TOKEN),
    '--out',
    out,
    '--date',
    '2026-04-01',
  ])
  expect(result.exitCode).toBe(0)
})
afterAll(() => emulator.close())

const runRecords = async (): Promise<RunRecord[]> => {
  const folder = path.join(out, '_runs', 'dt=2026-04-01')
  const files = (await readdir(folder)).sort()
  return Promise.all(files.map(async (f) => JSON.parse(await readFile(path.join(folder, f), 'utf8')) as RunRecord))
}

const usersRows = () =>
  query(
    `SELECT * EXCLUDE (_export_run_id, _exported_at) FROM '${out}/users/dt=2026-04-01/data.parquet' ORDER BY _source_row_number`,
  )

const reprocess = (date: string) =>
  runCommandInProcess('reprocess', ['--config', configFile, '--out', out, '--date', date])

describe('the raw archive', () => {
  it('keeps the CSV exactly as received, gzip-compressed, with its SHA-256 in the run record', async () => {
    const archived = gunzipSync(await readFile(path.join(out, '_raw/users/dt=2026-04-01/body.csv.gz')))
    expect(archived.equals(served)).toBe(true)
    const [record] = await runRecords()
    const table = record!.tables[0]!
    expect(table.sha256).toBe(createHash('sha256').update(served).digest('hex'))
    expect(table.objects.map((o) => o.key)).toEqual([
      'users/dt=2026-04-01/data.parquet',
      '_raw/users/dt=2026-04-01/body.csv.gz',
    ])
  })

  it('rebuilds a date from the archive without calling the service', async () => {
    const before = await usersRows()
    await rm(path.join(out, 'users/dt=2026-04-01/data.parquet'))
    emulator.requests.length = 0
    const result = await reprocess('2026-04-01')
    expect(result.exitCode).toBe(0)
    expect(emulator.requests).toEqual([])
    expect(await usersRows()).toEqual(before)
    expect(before).toHaveLength(800)
  })

  it('rebuilds from --table flags alone, with no service named, and records the run as a reprocess', async () => {
    const before = await usersRows()
    const result = await runCommandInProcess('reprocess', [
      '--table',
      '1003=users',
      '--out',
      out,
      '--date',
      '2026-04-01',
    ])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(await usersRows()).toEqual(before)
    const record = (await runRecords()).find((r) => r.mode === 'reprocess' && r.tables[0]?.rows === 800)
    expect(record).toBeDefined()
    expect(record?.tokenOwner).toBeUndefined()
    expect(record?.tables[0]).not.toHaveProperty('httpStatus')
    expect(record?.tables[0]).not.toHaveProperty('attempts')
  })

  it('fails a corrupt archive as the table, keeping the data it would have replaced', async () => {
    const before = await usersRows()
    const archive = path.join(out, '_raw/users/dt=2026-04-01/body.csv.gz')
    const good = await readFile(archive)
    await writeFile(archive, Buffer.concat([good.subarray(0, 200), Buffer.from('not gzip any more')]))
    try {
      const result = await reprocess('2026-04-01')
      expect(result.exitCode).toBe(1)
      expect(result.stderr).toContain(
        'users: FAILED [RAW_ARCHIVE_CORRUPT] table 1003: the raw archive _raw/users/dt=2026-04-01/body.csv.gz is damaged',
      )
      expect(await usersRows()).toEqual(before)
    } finally {
      await writeFile(archive, good)
    }
  })

  it('says clearly when a date has no archive to rebuild from, and leaves the latest outcome as it was', async () => {
    expect((await reprocess('2026-04-01')).exitCode).toBe(0)
    const latest = path.join(out, '_runs/latest/users.json')
    const before = await readFile(latest, 'utf8')
    const result = await reprocess('2026-04-02')
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toContain(
      'users: FAILED [RAW_ARCHIVE_MISSING] table 1003: there is no raw archive _raw/users/dt=2026-04-02/body.csv.gz',
    )
    // Nothing was done to the table: its data and the outcome operators read stay those of the last run that acted.
    expect(await readFile(latest, 'utf8')).toBe(before)
    expect(JSON.parse(before)).toMatchObject({ status: 'succeeded', exportDate: '2026-04-01' })
  })

  it('speaks of reading the archive, not of downloading', async () => {
    const result = await reprocess('2026-04-01')
    expect(result.stderr).toContain('users: reading the archived export of table 1003')
    expect(result.stderr).not.toMatch(/download/i)
    expect(result.stdout.split('\n')[0]).toMatch(/ archive read /)
  })

  it('stops reading the archive, delivering nothing more, when the export path cancels it', async () => {
    const [users] = parseExportConfig({
      source: { baseUrl: emulator.baseUrl },
      tables: [{ id: '1003', name: 'users' }],
    }).tables
    const bytes = await archiveSource(new FolderWarehouseStore(out)).open(users!, {
      exportDate: '2026-04-01',
      attempt: 1,
    })
    bytes.cancel()

    const read: Buffer[] = []
    const reading = (async () => {
      for await (const chunk of bytes.body) read.push(chunk)
    })()
    await expect(reading).rejects.toThrow(/premature close/i)
    expect(read).toEqual([])
  })
})
