import { createHmac, randomBytes } from 'node:crypto'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { parquetMetadata } from 'hyparquet'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, type Row, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import type { RunRecord } from '../../functions/export/core/run-record.ts'
import { queryWarehouse } from '../../functions/local/warehouse-sql.ts'
import { scanForNeedles } from '../support/canary.ts'
import { type CliResult, runCommandInProcess, runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'

/** A key of 64 hex digits, random per test process: found anywhere written, it leaked. */
const KEY = randomBytes(32).toString('hex')
/** The pseudonym as docs/configuration.md defines it, computed independently of the exporter. */
const hmac = (value: string): string => createHmac('sha256', KEY).update(value, 'utf8').digest('hex').slice(0, 32)

const PEOPLE_COLUMNS = ['Employee ID', 'Full Name', 'E-mail', 'Phone', 'Department']
const PEOPLE: Row[] = [
  ['E-0001', 'Zelda Quixotewright', 'zelda.quixotewright@people.example', '+49 171 5550101', 'Finance'],
  ['E-0002', 'Bartholomew Ünderhill', 'bartholomew.underhill@people.example', '+49 171 5550102', 'IT'],
  ['E-0003', 'Xiomara Fennimore-Lisle', 'xiomara.fennimore@people.example', '', 'IT'],
  ['E-0004', '', '', '+49 171 5550104', 'Facilities'],
]
const TICKETS_COLUMNS = ['Ticket', 'Reporter E-mail', 'Summary']
const TICKETS: Row[] = [
  ['T-1', 'zelda.quixotewright@people.example', 'Laptop fan is loud'],
  ['T-2', 'xiomara.fennimore@people.example', 'Cannot print'],
]
/** Every raw value of a dropped or pseudonymized column: none may appear in any file written. */
const RAW_VALUES = [...PEOPLE.flatMap((row) => [row[1], row[2], row[3]]), ...TICKETS.map((row) => row[1])].filter(
  (v): v is string => typeof v === 'string' && v !== '',
)

const peopleTable = (rows: readonly Row[]) => ({
  id: '2001',
  title: 'People',
  columns: PEOPLE_COLUMNS,
  rows: () => rows,
})
const ticketsTable = { id: '2002', title: 'Tickets', columns: TICKETS_COLUMNS, rows: () => TICKETS }

const PEOPLE_CONFIG = {
  id: '2001',
  name: 'people',
  key: ['e_mail'],
  columns: { drop: ['phone'], pseudonymize: ['full_name', 'e_mail'] },
}
const TICKETS_CONFIG = { id: '2002', name: 'tickets', columns: { pseudonymize: ['reporter_e_mail'] } }
const TABLES = [PEOPLE_CONFIG, TICKETS_CONFIG]

let emulator: RunningEmulator
let work: string
let keyFile: string
let token: string

const writeConfig = async (name: string, tables: readonly object[]): Promise<string> => {
  const file = path.join(work, `${name}.json`)
  await writeFile(file, JSON.stringify({ source: { baseUrl: emulator.baseUrl }, tables }))
  return file
}

const exportWith = async (config: string, out: string, date: string, extra: readonly string[] = []) =>
  runExportInProcess(['--config', config, '--token-file', token, '--out', out, '--date', date, ...extra])

const rows = async (root: string, sql: string) => (await queryWarehouse(root, sql)).rows.map((row) => [...row])

const allFiles = async (folder: string): Promise<string[]> =>
  (await readdir(folder, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))

beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: [peopleTable(PEOPLE), ticketsTable] })
  work = await tempDir('personal-data-')
  keyFile = path.join(work, 'pseudonymization.key')
  await writeFile(keyFile, `${KEY}\n`)
  token = await tokenFile(DEMO_TOKEN)
})
afterAll(() => emulator.close())

describe.each(['csv', 'xlsx'] as const)('personal-data controls on a %s export', (format) => {
  let out: string
  const results: CliResult[] = []
  beforeAll(async () => {
    out = await tempDir(`personal-data-${format}-`)
    const config = await writeConfig(
      `controls-${format}`,
      TABLES.map((t) => ({ ...t, format })),
    )
    emulator.setTable(peopleTable(PEOPLE))
    results.push(await exportWith(config, out, '2026-05-01', ['--pseudonymization-key-file', keyFile]))
    // The next day Zelda moves to IT: one changed row, matched by her pseudonymized e-mail.
    emulator.setTable(peopleTable(PEOPLE.map((row, i) => (i === 0 ? [...row.slice(0, 4), 'IT'] : row))))
    results.push(await exportWith(config, out, '2026-05-02', ['--pseudonymization-key-file', keyFile]))
  })

  it('exports both dates', () => {
    for (const result of results) expect(result.exitCode, result.stderr + result.stdout).toBe(0)
  })

  it('leaves the dropped column out of the Parquet, the registry and the run record', async () => {
    const parquet = await readFile(path.join(out, 'people/dt=2026-05-01/data.parquet'))
    const schema = parquetMetadata(parquet.buffer.slice(parquet.byteOffset) as ArrayBuffer).schema.map((s) => s.name)
    expect(schema).toContain('e_mail')
    expect(schema).not.toContain('phone')
    // The registry names it only as dropped (so that taking it out of columns.drop is refused): no column, no type.
    const { dropped, ...registry } = JSON.parse(await readFile(path.join(out, '_schemas/people.json'), 'utf8'))
    expect(dropped).toEqual(['phone'])
    expect(JSON.stringify(registry)).not.toMatch(/phone/i)
    const runs = path.join(out, '_runs/dt=2026-05-01')
    for (const file of await readdir(runs)) {
      const record = JSON.parse(await readFile(path.join(runs, file), 'utf8')) as RunRecord
      const people = record.tables.find((t) => t.name === 'people')!
      expect(people.columns?.map((c) => c.name)).not.toContain('phone')
      expect(JSON.stringify(record)).not.toMatch(/phone/i)
    }
  })

  it('replaces values by their HMAC-SHA256 pseudonym, keeps empty cells NULL and types the column string', async () => {
    const landed = await rows(
      out,
      "SELECT employee_id, full_name, e_mail, typeof(e_mail) FROM people WHERE dt = '2026-05-01' ORDER BY employee_id",
    )
    expect(landed).toEqual([
      ['E-0001', hmac('Zelda Quixotewright'), hmac('zelda.quixotewright@people.example'), 'VARCHAR'],
      ['E-0002', hmac('Bartholomew Ünderhill'), hmac('bartholomew.underhill@people.example'), 'VARCHAR'],
      ['E-0003', hmac('Xiomara Fennimore-Lisle'), hmac('xiomara.fennimore@people.example'), 'VARCHAR'],
      ['E-0004', null, null, 'VARCHAR'],
    ])
  })

  it('gives the same pseudonym on every date and in every table, so the tables join', async () => {
    const joined = await rows(
      out,
      `SELECT t.ticket, p.employee_id, p.dt FROM tickets t JOIN people p ON p.e_mail = t.reporter_e_mail
       AND p.dt = t.dt ORDER BY t.ticket, p.dt`,
    )
    expect(joined).toEqual([
      ['T-1', 'E-0001', '2026-05-01'],
      ['T-1', 'E-0001', '2026-05-02'],
      ['T-2', 'E-0003', '2026-05-01'],
      ['T-2', 'E-0003', '2026-05-02'],
    ])
  })

  it('shows a change in the changes view matched by a pseudonymized key', async () => {
    const changes = await rows(out, 'SELECT dt, change, e_mail, changed_columns, department FROM people_changes')
    expect(changes).toEqual([
      ['2026-05-02', 'changed', hmac('zelda.quixotewright@people.example'), ['department'], 'IT'],
    ])
  })

  it('writes no raw value of those columns, nor the key, into any file or output', async () => {
    expect(
      await scanForNeedles(
        {
          folders: [out],
          texts: Object.fromEntries(
            results.flatMap((r, i) => [
              [`stdout ${i}`, r.stdout],
              [`stderr ${i}`, r.stderr],
            ]),
          ),
        },
        [...RAW_VALUES, KEY],
      ),
    ).toEqual([])
    expect((await allFiles(out)).length).toBeGreaterThan(6)
  })
})

describe('personal-data configuration errors', () => {
  it('refuses a table that pseudonymizes without a key, with exit 2, before anything is requested', async () => {
    const config = await writeConfig('no-key', TABLES)
    const out = await tempDir('personal-data-no-key-')
    emulator.requests.length = 0
    const result = await exportWith(config, out, '2026-05-01')
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toMatch(/tables\[0\]\.columns\.pseudonymize: needs the pseudonymization key/)
    expect(result.stderr).toMatch(/tables\[1\]\.columns\.pseudonymize/)
    expect(emulator.requests).toEqual([])
    expect(await allFiles(out)).toEqual([])
  })

  it('refuses archiveRaw with drop or pseudonymize on the same table, naming both keys', async () => {
    const config = await writeConfig('archive', [{ ...PEOPLE_CONFIG, archiveRaw: true }])
    const result = await exportWith(config, await tempDir(), '2026-05-01', ['--pseudonymization-key-file', keyFile])
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toMatch(
      /tables\[0\]\.archiveRaw: must not be true with columns\.drop or columns\.pseudonymize/,
    )
  })

  it('refuses a key that is too short, without printing it', async () => {
    const short = path.join(work, 'short.key')
    await writeFile(short, 'tiny-secret-key')
    const result = await exportWith(await writeConfig('short', TABLES), await tempDir(), '2026-05-01', [
      '--pseudonymization-key-file',
      short,
    ])
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toMatch(/shorter than 32 characters/)
    expect(result.stderr + result.stdout).not.toContain('tiny-secret-key')
  })

  it('fails a table whose controls name a column it does not have, publishing nothing of it', async () => {
    const config = await writeConfig('unknown', [
      { ...PEOPLE_CONFIG, columns: { drop: ['mobile'], pseudonymize: ['e_mail'] } },
      TICKETS_CONFIG,
    ])
    const out = await tempDir('personal-data-unknown-')
    const result = await exportWith(config, out, '2026-05-01', ['--pseudonymization-key-file', keyFile])
    expect(result.exitCode).toBe(1)
    expect(result.stdout + result.stderr).toMatch(/CONTROLLED_COLUMN_MISSING/)
    expect(result.stdout + result.stderr).toMatch(/"mobile" \(columns\.drop\)/)
    const files = await allFiles(out)
    expect(files.some((f) => f.includes(`${path.sep}people${path.sep}`))).toBe(false)
    expect(files.some((f) => f.includes(`${path.sep}tickets${path.sep}`))).toBe(true)
    expect(await scanForNeedles({ folders: [out], texts: { out: result.stdout + result.stderr } }, RAW_VALUES)).toEqual(
      [],
    )
  })
})

describe('personal-data controls set after a date was published', () => {
  it('refuse a reprocess of it; npm run rewrite drops and pseudonymizes it as an export does, and deletes its raw body', async () => {
    const out = await tempDir('personal-data-reprocess-')
    emulator.setTable(peopleTable(PEOPLE))
    const archived = await writeConfig('archived', [{ id: '2001', name: 'people', archiveRaw: true }])
    expect((await exportWith(archived, out, '2026-05-01')).exitCode).toBe(0)
    const controlled = await writeConfig('controlled', [PEOPLE_CONFIG])
    const flags = ['--config', controlled, '--out', out, '--pseudonymization-key-file', keyFile]
    const refused = await runCommandInProcess('reprocess', [...flags, '--date', '2026-05-01'])
    expect(refused.exitCode).toBe(1)
    expect(refused.stderr).toContain('[HISTORY_REWRITE_NEEDED]')
    const result = await runCommandInProcess('rewrite', [...flags, '--table', 'people'])
    expect(result.exitCode, result.stdout + result.stderr).toBe(0)
    const landed = await rows(
      out,
      "SELECT * EXCLUDE (_export_run_id, _exported_at) FROM people WHERE employee_id = 'E-0001'",
    )
    expect(landed[0]).toContain(hmac('zelda.quixotewright@people.example'))
    const parquet = await readFile(path.join(out, 'people/dt=2026-05-01/data.parquet'))
    const names = parquetMetadata(parquet.buffer.slice(parquet.byteOffset) as ArrayBuffer).schema.map((s) => s.name)
    expect(names).not.toContain('phone')
    // The registry (and so the catalog) loses the column the earlier export registered, and records it as dropped.
    const { dropped, ...registry } = JSON.parse(await readFile(path.join(out, '_schemas/people.json'), 'utf8'))
    expect(dropped).toEqual(['phone'])
    expect(JSON.stringify(registry)).not.toMatch(/phone/i)
    expect(await readdir(path.join(out, '_raw/people')).catch(() => [])).toEqual([])
  })
})

describe('npm run check and personal data', () => {
  const check = async (tables: readonly object[]) =>
    runCommandInProcess('check', [
      '--config',
      await writeConfig(`check-${tables.length}`, tables),
      '--token-file',
      token,
    ])

  it('lists the columns that look personal, with the reason and the line that would pseudonymize each', async () => {
    emulator.setTable(peopleTable(PEOPLE))
    const result = await check([
      { id: '2001', name: 'people' },
      { id: '2002', name: 'tickets' },
    ])
    expect(result.exitCode, result.stdout).toBe(0)
    const lines = result.stdout.split('\n')
    const hints = lines.filter((line) => line.startsWith('      ')).map((line) => line.trim())
    expect(hints).toEqual([
      'employee_id: its header names a person ("employee"); to pseudonymize it: "columns": { "pseudonymize": ["employee_id"] }',
      'full_name: its header names a person ("name"); to pseudonymize it: "columns": { "pseudonymize": ["full_name"] }',
      'e_mail: its values look like e-mail addresses; to pseudonymize it: "columns": { "pseudonymize": ["e_mail"] }',
      'phone: its values look like phone numbers; to pseudonymize it: "columns": { "pseudonymize": ["phone"] }',
      'reporter_e_mail: its values look like e-mail addresses; to pseudonymize it: "columns": { "pseudonymize": ["reporter_e_mail"] }',
    ])
    expect(lines.filter((line) => line.trim() === 'possible personal data:')).toHaveLength(2)
  })

  it("tells a thing's name or address from a person's: the demo devices name their owner, not their host or IP", async () => {
    const result = await runCommandInProcess('check', ['--demo'])
    expect(result.exitCode, result.stdout).toBe(0)
    const devices = result.stdout.split(/^table /m).find((section) => section.includes('-> devices:'))!
    const hints = devices
      .split('\n')
      .filter((line) => line.startsWith('      '))
      .map((line) => line.trim().split(':')[0])
    expect(hints).toContain('owner')
    expect(hints).not.toContain('hostname')
    expect(hints).not.toContain('ip_address')
    expect(hints).not.toContain('mac_address')
  })

  it('leaves out what is already dropped or pseudonymized, and needs no key to do so', async () => {
    emulator.setTable(peopleTable(PEOPLE))
    const result = await check([PEOPLE_CONFIG])
    expect(result.exitCode, result.stdout).toBe(0)
    expect(result.stdout).not.toMatch(/^\s+phone\s/m)
    expect(result.stdout).toMatch(/^\s+e_mail\s+string\s/m)
    expect(result.stdout).toMatch(/employee_id: its header names a person/)
    expect(result.stdout).not.toMatch(/(full_name|e_mail|phone): its/)
    expect(await scanForNeedles({ texts: { stdout: result.stdout } }, RAW_VALUES)).toEqual([])
  })

  it('reports a control naming no column of the table as not ready', async () => {
    const result = await check([{ id: '2001', name: 'people', columns: { drop: ['mobile'] } }])
    expect(result.exitCode).toBe(1)
    expect(result.stdout).toMatch(/NOT READY \[CONTROLLED_COLUMN_MISSING\].*"mobile" \(columns\.drop\)/)
  })
})
