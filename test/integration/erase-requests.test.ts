/**
 * Erasure requests that stay erased, through the real CLI against a warehouse the stand-in filled: the request is
 * recorded as keyed digests, every later export (and reprocess) from a service that still has the person lands
 * none of their rows and says how many it left out, a table set to hold them is held, `--list` and `--forget`
 * manage the records; one request covers many people (`--where` values, `--where-file`), `--date`, `--from`
 * and `--to` pick dates, `--table` takes the published name or id, and bad input changes nothing.
 */
import { createHash } from 'node:crypto'
import { cp, readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import type { RunRecord } from '../../functions/export/core/run-record.ts'
import { queryWarehouse } from '../../functions/local/warehouse-sql.ts'
import { runCommandInProcess, runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'

const DATES = ['2026-11-20', '2026-11-21', '2026-11-22']
const NEXT = '2026-11-23'
const KEY = 'q'.repeat(40)

let emulator: RunningEmulator
let work: string
let pristine: string
let config: string
let keyFile: string
let token: string

const rows = async (root: string, sql: string) => (await queryWarehouse(root, sql)).rows.map((r) => r.map(String))
const count = async (root: string, where: string) =>
  Number((await rows(root, `SELECT count(*) FROM devices WHERE ${where}`))[0]![0])

const configFile = async (name: string, devices: object): Promise<string> => {
  const file = path.join(work, name)
  await writeFile(file, JSON.stringify({ source: { baseUrl: emulator.baseUrl }, tables: [devices] }))
  return file
}
const DEVICES = { id: '1001', name: 'devices', key: ['device_id'], archiveRaw: true }

const exportDay = (out: string, date: string, ...flags: string[]) => {
  emulator.upstream.setDate(date)
  return runExportInProcess([
    ...['--config', config, '--token-file', token, '--out', out, '--date', date],
    ...['--pseudonymization-key-file', keyFile, ...flags],
  ])
}
const erase = (out: string, ...flags: string[]) =>
  runCommandInProcess('erase', ['--out', out, '--pseudonymization-key-file', keyFile, ...flags])

const recordOf = async (out: string, date: string, runId: string) =>
  JSON.parse(await readFile(path.join(out, '_runs', `dt=${date}`, `${runId}.json`), 'utf8')) as RunRecord
const runIdOf = (stdout: string) => /run (\S+) for dt=/.exec(stdout)![1]!

/** Every file under `root` with a digest of its bytes: what "nothing changed" compares. */
const state = async (root: string): Promise<Record<string, string>> => {
  const files = (await readdir(root, { recursive: true, withFileTypes: true })).filter((e) => e.isFile())
  const entries = await Promise.all(
    files.map(async (e) => {
      const file = path.join(e.parentPath, e.name)
      return [
        path.relative(root, file),
        createHash('sha256')
          .update(await readFile(file))
          .digest('hex'),
      ]
    }),
  )
  return Object.fromEntries(entries)
}

beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: { devices: 300, software: 10, users: 10 } }) })
  work = await tempDir('erase-requests-')
  pristine = path.join(work, 'pristine')
  keyFile = path.join(work, 'key')
  await writeFile(keyFile, KEY)
  config = await configFile('config.json', DEVICES)
  token = await tokenFile(DEMO_TOKEN)
  for (const date of DATES) expect((await exportDay(pristine, date)).exitCode).toBe(0)
}, 120_000)
afterAll(async () => {
  await emulator?.close()
})

const copyOf = async (name: string): Promise<string> => {
  const out = path.join(work, name)
  await cp(pristine, out, { recursive: true })
  return out
}

describe('an erasure request that stays erased', () => {
  it('keeps a device erased in the next export from a service that still has it, until it is forgotten', async () => {
    const out = await copyOf('stays')
    const erased = await erase(out, '--config', config, '--table', 'devices', '--where', 'device_id=000007')
    expect(erased.exitCode, erased.stderr).toBe(0)
    const id = /erasure request ([0-9a-f]{12}) recorded/.exec(erased.stdout)![1]!

    const next = await exportDay(out, NEXT)
    expect(next.exitCode, next.stderr).toBe(0)
    expect(next.stdout).toMatch(/^table\s+status\s+rows\s+erased\s/)
    expect(next.stdout).toMatch(/\ndevices\s+ok\s+\S+\s+1\s/)
    expect(await count(out, `device_id = '000007' AND dt = '${NEXT}'`)).toBe(0)
    const record = await recordOf(out, NEXT, runIdOf(next.stdout))
    expect(record.tables[0]!.erased).toEqual({ requests: [id], rows: 1 })
    // The body held the device as received: it is not archived.
    expect(next.stderr).toContain('the raw archive was not kept: the body held 1 row of recorded erasure requests')
    expect(await readdir(path.join(out, '_raw', 'devices')).catch(() => [])).not.toContain(`dt=${NEXT}`)

    const listed = await erase(out, '--list')
    expect(listed.stdout.split('\n')).toEqual([
      expect.stringMatching(/^request\s+table\s+recorded\s+columns$/),
      expect.stringMatching(new RegExp(`^${id}\\s+devices\\s+\\S+Z\\s+device_id$`)),
      `1 erasure request recorded in ${out}: every export of their tables leaves their rows out`,
    ])
    const forgotten = await erase(out, '--forget', id)
    expect(forgotten.exitCode, forgotten.stderr).toBe(0)
    expect(forgotten.stdout).toMatch(new RegExp(`^forgot erasure request ${id} of devices \\(device_id; recorded`))
    const again = await exportDay(out, NEXT)
    expect(again.exitCode, again.stderr).toBe(0)
    expect(await count(out, `device_id = '000007' AND dt = '${NEXT}'`)).toBe(1)
    expect((await recordOf(out, NEXT, runIdOf(again.stdout))).tables[0]!.erased).toBeUndefined()
    expect((await erase(out, '--list')).stdout).toBe(`no erasure request is recorded in ${out}`)
  })

  it('holds a table set to hold erased rows, and --accept-changes publishes it without them', async () => {
    const out = await copyOf('hold')
    expect((await erase(out, '--config', config, '--table', 'devices', '--where', 'device_id=000009')).exitCode).toBe(0)
    const holding = await configFile('hold.json', { ...DEVICES, erasedRows: 'hold' })
    const held = await runExportInProcess([
      ...['--config', holding, '--token-file', token, '--out', out, '--date', NEXT],
      ...['--pseudonymization-key-file', keyFile],
    ])
    expect(held.exitCode).toBe(1)
    expect(held.stdout).toMatch(/devices\s+HELD ERASED_ROWS_HELD/)
    expect(held.stderr).toMatch(
      /held: 1 row matches recorded erasure requests \([0-9a-f]{12}\) that the service still has/,
    )
    expect(held.stderr).toContain('--only devices --accept-changes')
    expect(await readdir(path.join(out, 'devices'))).toEqual(DATES.map((d) => `dt=${d}`))
    const accepted = await runExportInProcess([
      ...['--config', holding, '--token-file', token, '--out', out, '--date', NEXT],
      ...['--pseudonymization-key-file', keyFile, '--only', 'devices', '--accept-changes'],
    ])
    expect(accepted.exitCode, accepted.stderr).toBe(0)
    expect(await count(out, `dt = '${NEXT}'`)).toBeGreaterThan(250)
    expect(await count(out, `device_id = '000009' AND dt = '${NEXT}'`)).toBe(0)
  })

  it('refuses the table before its download without the key, or with another key than the request was made with', async () => {
    const out = await copyOf('keys')
    expect((await erase(out, '--config', config, '--table', 'devices', '--where', 'device_id=000011')).exitCode).toBe(0)
    const other = path.join(work, 'other-key')
    await writeFile(other, 'o'.repeat(40))
    emulator.requests.length = 0
    for (const keyFlags of [[], ['--pseudonymization-key-file', other]]) {
      emulator.upstream.setDate(NEXT)
      const result = await runExportInProcess([
        ...['--config', config, '--token-file', token, '--out', out, '--date', NEXT, ...keyFlags],
      ])
      expect(result.exitCode).toBe(1)
      expect(result.stdout).toMatch(/devices\s+FAILED ERASURE_REQUEST_UNUSABLE/)
    }
    expect(emulator.requests.filter((r) => r.path.startsWith('/rest/tables/'))).toEqual([])
  })

  it('applies to a rebuild from the raw archive, which takes --table by published name or id', async () => {
    const out = await copyOf('reprocess')
    // Only the first date is erased now (its raw body goes); the second's archive still holds the device.
    const first = await erase(out, '--table', 'devices', '--where', 'device_id=000013', '--date', DATES[0]!)
    expect(first.exitCode, first.stderr).toBe(0)
    expect(await count(out, `device_id = '000013' AND dt = '${DATES[1]}'`)).toBe(1)
    for (const table of ['devices', '1001']) {
      const rebuilt = await runCommandInProcess('reprocess', [
        ...['--out', out, '--date', DATES[1]!, '--table', table, '--pseudonymization-key-file', keyFile],
      ])
      expect(rebuilt.exitCode, rebuilt.stderr).toBe(0)
      expect(rebuilt.stdout).toMatch(/\ndevices\s+ok\s+\S+\s+1\s/)
    }
    expect(await count(out, `device_id = '000013' AND dt = '${DATES[1]}'`)).toBe(0)
  })
})

describe('npm run erase: what a request covers', () => {
  it('covers many people in one request: several --where values and a --where-file, one run record per date', async () => {
    const out = await copyOf('many')
    const people = path.join(work, 'people.txt')
    await writeFile(people, '000003\n\n000004\r\n')
    const result = await erase(
      out,
      ...['--table', 'devices', '--where', 'device_id=000001', '--where', 'device_id=000002'],
      ...['--where-file', `device_id=${people}`],
    )
    expect(result.exitCode, result.stderr).toBe(0)
    expect(result.stdout).toContain('devices: 12 rows matching device_id (4 values) removed from 3 dates')
    expect(`${result.stdout}\n${result.stderr}`).not.toMatch(/00000[1-4]/)
    expect(await count(out, "device_id IN ('000001', '000002', '000003', '000004')")).toBe(0)
    const records = (await readdir(path.join(out, '_runs'), { recursive: true })).filter((f) => f.endsWith('.json'))
    const erasures: unknown[] = []
    for (const file of records.filter((f) => f.startsWith('dt='))) {
      const record = JSON.parse(await readFile(path.join(out, '_runs', file), 'utf8')) as RunRecord
      if (record.mode === 'erase') erasures.push(record.tables[0]!.erasure)
    }
    expect(erasures).toEqual(DATES.map(() => ({ columns: ['device_id'], rowsRemoved: 4 })))
    expect((await erase(out, '--list')).stdout).toMatch(/devices\s+\S+Z\s+device_id \(4 values\)\n1 erasure request/)
  })

  it('works on the dates --date, --from and --to pick, with --table by published name or saved table id', async () => {
    const out = await copyOf('dates')
    const one = await erase(out, '--table', 'devices', '--where', 'device_id=000005', '--date', DATES[1]!)
    expect(one.exitCode, one.stderr).toBe(0)
    expect(one.stderr.split('\n')[0]).toBe('devices: erasing the rows matching device_id from 1 export date')
    expect(one.stdout).toContain(`devices: 1 row matching device_id removed from 1 date (dt=${DATES[1]})`)
    const range = await erase(out, '--table', '1001', '--where', 'device_id=000006', '--from', DATES[1]!, '--to', NEXT)
    expect(range.exitCode, range.stderr).toBe(0)
    expect(range.stdout).toContain(`removed from 2 dates (dt=${DATES[1]}, dt=${DATES[2]})`)
    // A date rewritten applies every recorded request: 000005 went from the third date with 000006.
    const left = "SELECT device_id, dt FROM devices WHERE device_id IN ('000005', '000006') ORDER BY 1, 2"
    expect(await rows(out, left)).toEqual([
      ['000005', DATES[0]],
      ['000006', DATES[0]],
    ])
  })

  it('refuses bad input with one coded line and exit status 2, and changes nothing', async () => {
    const out = await copyOf('bad-input')
    const empty = path.join(work, 'empty.txt')
    await writeFile(empty, '\n\n')
    const people = path.join(work, 'secret-people.txt')
    await writeFile(people, 'person-one\n')
    const before = await state(out)
    const where = ['--table', 'devices', '--where', 'device_id=000001']
    const cases: [string[], RegExp][] = [
      [[...where, '--date', '2026-02-30'], /--date .*"2026-02-30"/],
      [[...where, '--from', DATES[2]!, '--to', DATES[0]!], /--from 2026-11-22 is after --to 2026-11-20/],
      [[...where, '--date', '2026-11-01'], /devices has no export date dt=2026-11-01 \(its dates: 3, dt=2026-11-20 to/],
      [[...where, '--date', DATES[0]!, '--from', DATES[0]!], /give one or the other/],
      [['--table', 'devices', '--where-file', 'device_id=/no/such/file'], /the file cannot be read \(ENOENT\)/],
      [['--table', 'devices', '--where-file', `device_id=${empty}`], /the file holds no value/],
      [['--table', 'devices', '--where-file', people], /--where-file must be COLUMN=FILE/],
      [
        ['--table', 'devics', '--where', 'device_id=1'],
        /"devics" is not a table published in .*; did you mean "devices"\?/,
      ],
      [['--forget', '0123456789ab'], /no erasure request 0123456789ab is recorded/],
      [['--forget', 'nope'], /--forget must name a request as --list prints it/],
      [['--list', '--where', 'device_id=1'], /--list goes with --out \(or --stack\) only and --table; drop --where/],
    ]
    for (const [flags, message] of cases) {
      const result = await erase(out, ...flags)
      expect(result.exitCode, flags.join(' ')).toBe(2)
      const [line, ...rest] = result.stderr.split('\n')
      expect(line).toMatch(/^error \[USAGE_INVALID\]: /)
      expect(line).toMatch(message)
      expect(rest.every((l) => l.startsWith('next step: '))).toBe(true)
      expect(result.stderr).not.toContain('person-one')
    }
    expect(await state(out)).toEqual(before)
  })
})

describe("the history commands' help", () => {
  it("is each command's own, and shows the optional flags as optional", async () => {
    const help = async (command: string) => (await runCommandInProcess(command, ['--help'])).stdout
    const configLine = (text: string | undefined) => /^ {2}--config FILE +(.*)$/m.exec(text ?? '')![1]
    const [eraseHelp, rewriteHelp, reprocessHelp] = await Promise.all(['erase', 'rewrite', 'reprocess'].map(help))
    expect(new Set([eraseHelp, rewriteHelp, reprocessHelp].map(configLine)).size).toBe(3)
    expect(configLine(eraseHelp!)).not.toMatch(/rebuild/)
    expect(configLine(rewriteHelp!)).not.toMatch(/rebuild/)
    expect(eraseHelp).toMatch(/^Usage: npm run erase -- --table NAME\|ID .*\n.* \[--dry-run\] \[--config FILE\]/)
    expect(eraseHelp).toContain('npm run erase -- --list [--table NAME|ID]')
    expect(eraseHelp).toContain('npm run erase -- --forget ID')
    expect(rewriteHelp).toMatch(/^Usage: npm run rewrite -- --table NAME\|ID --config FILE \[--date/)
  })
})
