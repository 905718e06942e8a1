/**
 * A column's identity is its header, not its position: headers that normalize to one name keep their names across
 * exports by their text, identical headers that change in number are held, and a `columnTypes` change on a
 * published column is refused. Through the real CLI against the stand-in.
 */
import { createHmac, randomBytes } from 'node:crypto'
import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, type Row, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import type { RunRecord } from '../../functions/export/core/run-record.ts'
import { queryWarehouse } from '../../functions/local/warehouse-sql.ts'
import { scanForNeedles } from '../support/canary.ts'
import { runCommandInProcess, runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'

const KEY = randomBytes(32).toString('hex')
const hmac = (value: string): string => createHmac('sha256', KEY).update(value, 'utf8').digest('hex').slice(0, 32)

/** `Email` holds people's private addresses, `EMAIL` the department's mailbox; both normalize to `email`. */
const PRIVATE = ['zelda.quixotewright@private.example', 'bartholomew.underhill@private.example']
const MAILBOX = ['it-desk@corp.example', 'facilities@corp.example']
const DAY1: { columns: string[]; rows: Row[] } = {
  columns: ['Device ID', 'Email', 'EMAIL'],
  rows: [
    ['D-1', PRIVATE[0]!, MAILBOX[0]!],
    ['D-2', PRIVATE[1]!, MAILBOX[1]!],
  ],
}
/** The next day the saved table shows the two in the other order, values moved with their headers. */
const DAY2 = {
  columns: ['Device ID', 'EMAIL', 'Email'],
  rows: DAY1.rows.map(([id, email, mailbox]) => [id, mailbox, email] as Row),
}

let emulator: RunningEmulator
let work: string
let token: string
let keyFile: string

const table = (id: string, shape: { columns: readonly string[]; rows: readonly Row[] }) => ({
  id,
  title: `Table ${id}`,
  columns: [...shape.columns],
  rows: () => shape.rows,
})

const writeConfig = async (name: string, tables: readonly object[]): Promise<string> => {
  const file = path.join(work, `${name}.json`)
  await writeFile(file, JSON.stringify({ source: { baseUrl: emulator.baseUrl }, tables }))
  return file
}

const exportDay = (config: string, out: string, date: string) =>
  runExportInProcess([
    ...['--config', config, '--token-file', token, '--out', out, '--date', date],
    ...['--pseudonymization-key-file', keyFile],
  ])

const select = async (root: string, sql: string) => (await queryWarehouse(root, sql)).rows.map((row) => [...row])

const runRecords = async (out: string, date: string): Promise<RunRecord[]> => {
  const folder = path.join(out, `_runs/dt=${date}`)
  const files = (await readdir(folder)).sort()
  return Promise.all(files.map(async (f) => JSON.parse(await readFile(path.join(folder, f), 'utf8')) as RunRecord))
}

beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: [table('3001', DAY1)] })
  work = await tempDir('column-identity-')
  keyFile = path.join(work, 'pseudonymization.key')
  await writeFile(keyFile, `${KEY}\n`)
  token = await tokenFile(DEMO_TOKEN)
})
afterAll(async () => {
  await emulator.close()
  await rm(work, { recursive: true, force: true })
  await rm(path.dirname(token), { recursive: true, force: true })
})

/** Exports day 1 and day 2 of table 3001 with `tables` into `out`; both must succeed. */
const exportTwoDays = async (name: string, tables: readonly object[], days: readonly (typeof DAY1)[]) => {
  const out = path.join(work, name)
  const config = await writeConfig(name, tables)
  const results = []
  for (const [i, day] of days.entries()) {
    emulator.setTable(table('3001', day))
    results.push(await exportDay(config, out, `2026-06-0${i + 1}`))
  }
  return { out, config, results }
}

describe('headers that normalize to one name', () => {
  it.each(['csv', 'xlsx'] as const)(
    'keep their names by header text when the service swaps them, and the pseudonymized one is never in clear (%s)',
    async (format) => {
      const { out, results } = await exportTwoDays(
        `swap-${format}`,
        [{ id: '3001', name: 'devices', format, columns: { pseudonymize: ['email'] } }],
        [DAY1, DAY2],
      )
      for (const r of results) expect(r.exitCode, r.stdout + r.stderr).toBe(0)
      for (const dt of ['2026-06-01', '2026-06-02']) {
        expect(
          await select(out, `SELECT device_id, email, email_2 FROM devices WHERE dt = '${dt}' ORDER BY device_id`),
        ).toEqual([
          ['D-1', hmac(PRIVATE[0]!), MAILBOX[0]],
          ['D-2', hmac(PRIVATE[1]!), MAILBOX[1]],
        ])
      }
      const registry = JSON.parse(await readFile(path.join(out, '_schemas/devices.json'), 'utf8'))
      expect(registry.columns.map((c: { name: string; header: string }) => [c.name, c.header])).toEqual([
        ['device_id', 'Device ID'],
        ['email', 'Email'],
        ['email_2', 'EMAIL'],
      ])
      const texts = Object.fromEntries(results.map((r, i) => [`output ${i}`, r.stdout + r.stderr]))
      expect(await scanForNeedles({ folders: [out], texts }, [...PRIVATE, KEY])).toEqual([])
    },
  )

  it('keep their values apart without personal-data controls too', async () => {
    const { out, results } = await exportTwoDays('swap-plain', [{ id: '3001', name: 'devices' }], [DAY1, DAY2])
    for (const r of results) expect(r.exitCode, r.stdout + r.stderr).toBe(0)
    expect(await select(out, 'SELECT dt, device_id, email, email_2 FROM devices ORDER BY dt, device_id')).toEqual([
      ['2026-06-01', 'D-1', PRIVATE[0], MAILBOX[0]],
      ['2026-06-01', 'D-2', PRIVATE[1], MAILBOX[1]],
      ['2026-06-02', 'D-1', PRIVATE[0], MAILBOX[0]],
      ['2026-06-02', 'D-2', PRIVATE[1], MAILBOX[1]],
    ])
  })

  it('keep their names when one of them goes: the other does not take its name', async () => {
    const day2 = { columns: ['Device ID', 'EMAIL'], rows: DAY1.rows.map(([id, , mailbox]) => [id, mailbox] as Row) }
    const { out, results } = await exportTwoDays(
      'one-goes',
      [{ id: '3001', name: 'devices', guards: false }],
      [DAY1, day2],
    )
    for (const r of results) expect(r.exitCode, r.stdout + r.stderr).toBe(0)
    expect(
      await select(out, "SELECT device_id, email, email_2 FROM devices WHERE dt = '2026-06-02' ORDER BY device_id"),
    ).toEqual([
      ['D-1', null, MAILBOX[0]],
      ['D-2', null, MAILBOX[1]],
    ])
  })

  it('with a dropped one: its values never land under the other name', async () => {
    const { out, results } = await exportTwoDays(
      'drop-swap',
      [{ id: '3001', name: 'devices', columns: { drop: ['email'] } }],
      [DAY1, DAY2],
    )
    for (const r of results) expect(r.exitCode, r.stdout + r.stderr).toBe(0)
    expect(await select(out, 'SELECT dt, device_id, email_2 FROM devices ORDER BY dt, device_id')).toEqual([
      ['2026-06-01', 'D-1', MAILBOX[0]],
      ['2026-06-01', 'D-2', MAILBOX[1]],
      ['2026-06-02', 'D-1', MAILBOX[0]],
      ['2026-06-02', 'D-2', MAILBOX[1]],
    ])
    const texts = Object.fromEntries(results.map((r, i) => [`output ${i}`, r.stdout + r.stderr]))
    expect(await scanForNeedles({ folders: [out], texts }, PRIVATE)).toEqual([])
  })
})

describe('textually identical headers', () => {
  const TWO = {
    columns: ['Device ID', 'Owner', 'Owner'],
    rows: [['D-1', 'zelda.q@private.example', 'bart.u@private.example'] as Row],
  }
  const ONE = { columns: ['Device ID', 'Owner'], rows: [['D-1', 'bart.u@private.example'] as Row] }

  it('that change in number hold the export with their own code, naming the header; the previous data stays', async () => {
    const { out, results } = await exportTwoDays(
      'identical',
      [{ id: '3001', name: 'devices', guards: false, columns: { pseudonymize: ['owner'] } }],
      [TWO, ONE],
    )
    expect(results[0]!.exitCode, results[0]!.stdout + results[0]!.stderr).toBe(0)
    const held = results[1]!
    expect(held.exitCode, held.stdout + held.stderr).toBe(1)
    expect(held.stdout).toMatch(/devices\s+HELD COLUMN_IDENTITY_AMBIGUOUS/)
    expect(held.stdout + held.stderr).toContain('"Owner"')
    const [record] = await runRecords(out, '2026-06-02')
    expect(record!.tables[0]!.error?.code).toBe('COLUMN_IDENTITY_AMBIGUOUS')
    await expect(readdir(path.join(out, 'devices/dt=2026-06-02'))).rejects.toThrow()
    expect(await select(out, 'SELECT dt, owner FROM devices_latest')).toEqual([
      ['2026-06-01', hmac('zelda.q@private.example')],
    ])
    const texts = Object.fromEntries(results.map((r, i) => [`output ${i}`, r.stdout + r.stderr]))
    expect(await scanForNeedles({ folders: [out], texts }, ['zelda.q@private.example'])).toEqual([])
  })

  it('are published once accepted', async () => {
    const out = path.join(work, 'identical')
    const config = await writeConfig('identical', [
      { id: '3001', name: 'devices', guards: false, columns: { pseudonymize: ['owner'] } },
    ])
    emulator.setTable(table('3001', ONE))
    const accepted = await runExportInProcess([
      ...['--config', config, '--token-file', token, '--out', out, '--date', '2026-06-02'],
      ...['--pseudonymization-key-file', keyFile, '--accept-changes'],
    ])
    expect(accepted.exitCode, accepted.stdout + accepted.stderr).toBe(0)
    expect(accepted.stdout).toMatch(/devices\s+ok \(COLUMN_IDENTITY_AMBIGUOUS accepted\)/)
  })
})

describe('a dropped column with a textually identical twin', () => {
  const TWO = {
    columns: ['Device ID', 'Owner', 'Owner'],
    rows: [['D-1', 'zelda.q@private.example', 'it-desk@corp.example'] as Row],
  }
  const ONE = { columns: ['Device ID', 'Owner'], rows: [['D-1', 'zelda.q@private.example'] as Row] }

  it('stays dropped while both are there, and fails the table rather than guess when one goes', async () => {
    const { out, results } = await exportTwoDays(
      'dropped-twin',
      [{ id: '3001', name: 'devices', columns: { drop: ['owner'] } }],
      [TWO, TWO, ONE],
    )
    expect(results.map((r) => r.exitCode)).toEqual([0, 0, 1])
    expect(results[2]!.stdout).toMatch(/devices\s+FAILED CONTROLLED_COLUMN_MISSING/)
    expect(await select(out, 'SELECT dt, owner_2 FROM devices ORDER BY dt')).toEqual([
      ['2026-06-01', 'it-desk@corp.example'],
      ['2026-06-02', 'it-desk@corp.example'],
    ])
    const texts = Object.fromEntries(results.map((r, i) => [`output ${i}`, r.stdout + r.stderr]))
    expect(await scanForNeedles({ folders: [out], texts }, ['zelda.q@private.example'])).toEqual([])
  })
})

describe('columnTypes on a published column', () => {
  const RAM = { columns: ['Device ID', 'RAM GB'], rows: [['D-1', '16'] as Row, ['D-2', '32'] as Row] }

  it('is refused with HISTORY_REWRITE_NEEDED by the export and by reprocess, naming npm run rewrite; the last good data stays', async () => {
    const { out, results } = await exportTwoDays('types', [{ id: '3001', name: 'devices', archiveRaw: true }], [RAM])
    expect(results[0]!.exitCode, results[0]!.stdout + results[0]!.stderr).toBe(0)
    const parquet = path.join(out, 'devices/dt=2026-06-01/data.parquet')
    const before = await readFile(parquet)
    const registryBefore = await readFile(path.join(out, '_schemas/devices.json'), 'utf8')
    const changed = await writeConfig('types-changed', [
      { id: '3001', name: 'devices', archiveRaw: true, columnTypes: { ram_gb: 'string' } },
    ])
    const reprocess = await runCommandInProcess('reprocess', [
      '--config',
      changed,
      '--out',
      out,
      '--date',
      '2026-06-01',
    ])
    const exported = await exportDay(changed, out, '2026-06-02')
    for (const result of [reprocess, exported]) {
      expect(result.exitCode, result.stdout + result.stderr).toBe(1)
      expect(result.stdout).toMatch(/devices\s+FAILED HISTORY_REWRITE_NEEDED/)
      expect(result.stdout + result.stderr).toContain('ram_gb: string (published as bigint)')
      expect(result.stdout + result.stderr).toContain('npm run rewrite -- --table devices')
    }
    expect(await readFile(parquet)).toEqual(before)
    expect(await readFile(path.join(out, '_schemas/devices.json'), 'utf8')).toBe(registryBefore)
    await expect(readdir(path.join(out, 'devices/dt=2026-06-02'))).rejects.toThrow()
  })

  it('that matches the published type is fine', async () => {
    const { results } = await exportTwoDays(
      'types-same',
      [{ id: '3001', name: 'devices', columnTypes: { ram_gb: 'bigint' } }],
      [RAM, RAM],
    )
    for (const r of results) expect(r.exitCode, r.stdout + r.stderr).toBe(0)
  })
})

describe('companion __text columns', () => {
  it('count as data columns in the summary and the run record', async () => {
    const RAM = { columns: ['Device ID', 'RAM GB'], rows: [['D-1', '16'] as Row] }
    const MISFIT = { columns: ['Device ID', 'RAM GB'], rows: [['D-1', 'sixteen'] as Row] }
    const { out, results } = await exportTwoDays('companions', [{ id: '3001', name: 'devices' }], [RAM, MISFIT])
    for (const r of results) expect(r.exitCode, r.stdout + r.stderr).toBe(0)
    // table, status, rows, data columns, lineage columns
    expect(results[1]!.stdout).toMatch(/^devices\s+ok\s+1\s+3\s+5\s/m)
    const [record] = await runRecords(out, '2026-06-02')
    const columns = record!.tables[0]!.columns!
    expect(columns.find((c) => c.name === 'ram_gb__text')).toEqual({
      name: 'ram_gb__text',
      type: 'string',
      textOf: 'ram_gb',
    })
    expect(columns.filter((c) => c.name.startsWith('_')).map((c) => c.name)).toHaveLength(5)
  })
})
