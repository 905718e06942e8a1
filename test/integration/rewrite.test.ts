/**
 * `npm run rewrite` through the real CLI against a warehouse the stand-in filled over three dates, after the
 * configuration retyped two columns, dropped one and pseudonymized one: the export refuses the table until the
 * rewrite ran; then every date has one type per column, no file or line holds a dropped or a now-pseudonymized
 * value in clear, the rows keep their lineage, the next export goes through, a rerun changes nothing, and a run
 * killed in the middle is finished by the next; `--aws-event` prints the state machine's input instead.
 */
import { spawn } from 'node:child_process'
import { cp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { parseConfigWithoutSource } from '../../functions/export/core/config/parse.ts'
import { PseudonymizationKey } from '../../functions/export/core/pseudonymization-key.ts'
import { rewriteEvent } from '../../functions/export/lambda/history-event.ts'
import { rewriteHistory } from '../../functions/export/path/rewrite.ts'
import { FolderWarehouseStore } from '../../functions/export/publish/fs.ts'
import { queryWarehouse } from '../../functions/local/warehouse-sql.ts'
import { runCommandInProcess, runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'
import { describe as describeParquet } from '../support/duckdb.ts'
import { silentTelemetry } from '../support/telemetry.ts'

const DATES = ['2026-11-20', '2026-11-21', '2026-11-22']
const NEXT = '2026-11-23'
const KEY = 'r'.repeat(40)
const REPO = path.resolve(import.meta.dirname, '../..')
const DEVICES = { id: '1001', name: 'devices', key: ['device_id'], archiveRaw: true }
// The raw archive keeps the export as received: a table that drops or pseudonymizes may not keep one.
const CHANGED = {
  ...DEVICES,
  archiveRaw: false,
  columnTypes: { ram_gb: 'string', os_version: 'double' },
  columns: { drop: ['serial_number'], pseudonymize: ['owner'] },
}
// Once rewritten, os_version is published as double: without its entry, a later version that is no double goes to
// os_version__text (with it, columnTypes would fail the table on such a value).
const SETTLED = { ...CHANGED, columnTypes: { ram_gb: 'string' } }

let emulator: RunningEmulator
let work: string
let pristine: string
let before: string
let after: string
let settled: string
let keyFile: string
let token: string

const allFiles = async (root: string): Promise<string[]> =>
  (await readdir(root, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))

/** Every file under `root` whose bytes hold `text` (Parquet dictionaries and statistics keep values in clear). */
const filesHolding = async (root: string, text: string): Promise<string[]> => {
  const needle = Buffer.from(text)
  const found: string[] = []
  for (const file of await allFiles(root)) if ((await readFile(file)).includes(needle)) found.push(file)
  return found
}

const rows = async (root: string, sql: string) =>
  (await queryWarehouse(root, sql)).rows.map((r) => r.map((v) => (v === null ? null : String(v))))

const configFile = async (name: string, table: object): Promise<string> => {
  const file = path.join(work, name)
  await writeFile(file, JSON.stringify({ source: { baseUrl: emulator.baseUrl }, tables: [table] }))
  return file
}

const ROWS = { devices: 300, software: 10, users: 10 }

/** An export of `date`, the stand-in acting out that day (devices bought, retired, upgraded). */
const exportDate = (config: string, out: string, date: string) => {
  emulator.upstream.setDate(date)
  emulator.setTable(demoTables({ rows: ROWS, date }).find((t) => t.id === '1001')!)
  return runExportInProcess([
    ...['--config', config, '--token-file', token, '--out', out, '--date', date],
    ...['--pseudonymization-key-file', keyFile],
  ])
}

const rewriteArgs = (out: string) => ['--config', after, '--out', out, '--pseudonymization-key-file', keyFile]
const rewrite = (out: string, ...flags: string[]) =>
  runCommandInProcess('rewrite', [...rewriteArgs(out), '--table', 'devices', ...flags])

const copyOf = async (name: string): Promise<string> => {
  const out = path.join(work, name)
  await cp(pristine, out, { recursive: true })
  return out
}

const objects = (out: string) =>
  Promise.all(DATES.map((d) => readFile(path.join(out, 'devices', `dt=${d}`, 'data.parquet'))))

beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: ROWS }) })
  work = await tempDir('rewrite-')
  pristine = path.join(work, 'pristine')
  keyFile = path.join(work, 'key')
  await writeFile(keyFile, KEY)
  token = await tokenFile(DEMO_TOKEN)
  before = await configFile('before.json', DEVICES)
  after = await configFile('after.json', CHANGED)
  settled = await configFile('settled.json', SETTLED)
  for (const date of DATES) {
    const result = await exportDate(before, pristine, date)
    expect(result.exitCode, result.stderr).toBe(0)
  }
}, 120_000)
afterAll(async () => {
  await emulator?.close()
  if (work) await rm(work, { recursive: true, force: true })
})

describe('npm run rewrite', () => {
  it('is what the export asks for: a changed column setting on a published column refuses the table', async () => {
    const out = await copyOf('refused')
    emulator.requests.length = 0
    const result = await exportDate(after, out, NEXT)
    expect(result.exitCode).toBe(1)
    // Decided from the configuration and the registry, before the table is downloaded.
    expect(emulator.requests.filter((r) => r.path.startsWith('/rest/tables/'))).toEqual([])
    expect(result.stdout).toMatch(/devices\s+FAILED HISTORY_REWRITE_NEEDED/)
    expect(result.stderr).toContain(
      'the configuration of devices changes published columns (serial_number: dropped; os_version: double (published as string); ram_gb: string (published as bigint); owner: pseudonymized)',
    )
    expect(result.stderr).toContain('npm run rewrite -- --table devices')
    expect(await readdir(path.join(out, 'devices'))).toEqual(DATES.map((d) => `dt=${d}`))
  })

  it('refuses a published column newly dropped or pseudonymized, which would otherwise change new dates only', async () => {
    const out = await copyOf('refused-personal')
    const personal = await configFile('personal.json', { ...CHANGED, columnTypes: {} })
    const result = await exportDate(personal, out, NEXT)
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toContain('changes published columns (serial_number: dropped; owner: pseudonymized)')
    expect(await readdir(path.join(out, 'devices'))).toEqual(DATES.map((d) => `dt=${d}`))
  })

  it('--dry-run lists each date with its rows and bytes, exits 0 and changes nothing', async () => {
    const out = await copyOf('dry')
    const first = await objects(out)
    const schema = await readFile(path.join(out, '_schemas', 'devices.json'))
    const result = await rewrite(out, '--dry-run')
    expect(result.exitCode, result.stderr).toBe(0)
    // The plan and its summary on one stream, in order.
    const lines = result.stdout.split('\n')
    expect(lines).toHaveLength(4)
    for (const [i, date] of DATES.entries()) {
      expect(lines[i]).toMatch(new RegExp(`^devices: dt=${date}: 3\\d\\d rows, .* would be rewritten$`))
    }
    expect(lines[3]).toMatch(/^devices: 3 dates \(.* rows, .*\) would be rewritten; nothing was changed$/)
    expect(result.stderr).toBe(`devices: checking every export date against ${after}`)
    expect(await objects(out)).toEqual(first)
    expect(await readFile(path.join(out, '_schemas', 'devices.json'))).toEqual(schema)
  })

  it('brings every date in line: one type per column, the dropped column and the clear values gone everywhere', async () => {
    const out = await copyOf('whole')
    const serials = await rows(pristine, 'SELECT DISTINCT serial_number FROM devices WHERE serial_number IS NOT NULL')
    const owners = await rows(pristine, 'SELECT DISTINCT owner FROM devices WHERE owner IS NOT NULL LIMIT 20')
    const kept =
      'SELECT dt, device_id, CAST(ram_gb AS VARCHAR), _export_run_id, _exported_at FROM devices ORDER BY dt, device_id'
    const lineage = await rows(pristine, kept)
    const result = await rewrite(out)
    expect(result.exitCode, result.stderr).toBe(0)
    for (const date of DATES)
      expect(result.stdout).toMatch(new RegExp(`devices: dt=${date}: 3\\d\\d rows, .* rewritten`))
    expect(result.stdout).toMatch(
      /devices: 3 dates \(.*\) rewritten; every date is in line with the configuration and the registry has moved/,
    )
    // Its progress once, in its own words: not a run started, nor the rows read, per date.
    expect(result.stderr).not.toContain('export run started')
    expect(result.stderr).not.toContain('reading the published rows')
    // Each date's own file has the same columns and types, ram_gb as text and no serial_number.
    const layouts = await Promise.all(
      DATES.map((d) => describeParquet(path.join(out, 'devices', `dt=${d}`, 'data.parquet'))),
    )
    for (const layout of layouts)
      expect(layout.filter((c) => c.name !== 'os_version__text')).toEqual(
        layouts[0]!.filter((c) => c.name !== 'os_version__text'),
      )
    const types = new Map(layouts[0]!.map((c) => [c.name, c.type]))
    expect(types.get('ram_gb')).toBe('VARCHAR')
    expect(types.get('os_version')).toBe('DOUBLE')
    expect(types.has('serial_number')).toBe(false)
    // The values and the lineage are the ones published: ram_gb's text is the number's.
    expect(await rows(out, kept)).toEqual(lineage)
    // An OS version that is no double is kept as text, as an export keeps a misfit.
    const misfits = await rows(
      out,
      'SELECT count(*) FROM devices WHERE os_version IS NULL AND os_version__text IS NOT NULL',
    )
    expect(Number(misfits[0]![0])).toBeGreaterThan(0)
    // Not one clear serial number or owner in any file (Parquet, run records, registry, raw archive) or line.
    const printed = `${result.stdout}\n${result.stderr}`
    for (const [value] of [...serials, ...owners]) {
      expect(await filesHolding(out, value!), value!).toEqual([])
      expect(printed).not.toContain(value!)
    }
    const ddl = await runCommandInProcess('ddl', ['--out', out])
    expect(ddl.exitCode, ddl.stderr).toBe(0)
    expect(ddl.stdout).toMatch(/`ram_gb` string/)
    expect(ddl.stdout).not.toContain('serial_number')
    // The fingerprints are computed again over the rewritten values: between rewritten dates the changes view
    // reports the rows it reported before, less those whose only change was in the dropped column.
    const changes =
      "SELECT dt, change, device_id, array_to_string(changed_columns, ',') FROM devices_changes ORDER BY ALL"
    const reported = (await rows(pristine, changes)).filter(([, , , columns]) => columns !== 'serial_number')
    expect(reported.length).toBeGreaterThan(0)
    expect((await rows(out, changes)).map((r) => r.slice(0, 3))).toEqual(reported.map((r) => r.slice(0, 3)))
    // The export goes through again, and the changes view pairs its date with the rewritten one row by row.
    const next = await exportDate(settled, out, NEXT)
    expect(next.exitCode, next.stderr).toBe(0)
    // ... as it pairs the same date exported without the rewrite (fingerprints of the service's text against
    // those of the stored values: pairs that differ only in spelling are left out, so no row shows as changed).
    const reference = await copyOf('reference')
    expect((await exportDate(before, reference, NEXT)).exitCode).toBe(0)
    const onNext = `${changes.replace(' ORDER BY ALL', '')} WHERE dt = '${NEXT}' ORDER BY ALL`
    const expected = (await rows(reference, onNext)).filter(([, , , columns]) => columns !== 'serial_number')
    expect(expected.length).toBeGreaterThan(0)
    expect((await rows(out, onNext)).map((r) => r.slice(0, 3))).toEqual(expected.map((r) => r.slice(0, 3)))
    const sameOwner = await rows(
      out,
      `SELECT count(*) FROM devices a JOIN devices b USING (device_id) WHERE a.dt = '${DATES[2]}' AND b.dt = '${NEXT}' AND a.owner = b.owner`,
    )
    // The rewrite's pseudonyms are the export's (hashed once, with the key): most devices kept their owner.
    expect(Number(sameOwner[0]![0])).toBeGreaterThan(200)
  })

  it('ends with one coded line and changes nothing when a column to pseudonymize has no key', async () => {
    const out = await copyOf('no-key')
    const first = await objects(out)
    const raw = await allFiles(path.join(out, '_raw'))
    const result = await runCommandInProcess('rewrite', ['--config', after, '--out', out, '--table', 'devices'])
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toMatch(/error \[CONFIG_INVALID\]: .*columns\.pseudonymize: needs the pseudonymization key/)
    expect(result.stderr).toContain('next step:')
    expect(await objects(out)).toEqual(first)
    expect(await allFiles(path.join(out, '_raw'))).toEqual(raw)
  })

  it('--aws-event prints the state machine input without reading the warehouse, and refuses without the key', async () => {
    const nowhere = path.join(work, 'no-such-warehouse')
    const printed = await rewrite(nowhere, '--aws-event', '--batch-size', '2')
    expect(printed.exitCode, printed.stderr).toBe(0)
    const key = PseudonymizationKey.fromText(KEY, 'test')
    expect(JSON.parse(printed.stdout)).toEqual(rewriteEvent(key, 'devices', 2))
    const keyless = await runCommandInProcess('rewrite', ['--config', after, '--table', 'devices', '--aws-event'])
    expect(keyless.exitCode).toBe(2)
    expect(keyless.stdout).toBe('')
    expect(keyless.stderr).toContain(
      'error [CONFIG_INVALID]: invalid pseudonymization key: --pseudonymization-key-file: is needed with --aws-event: the event carries the key check of the deployed key',
    )
    const both = await rewrite(nowhere, '--aws-event', '--dry-run')
    expect(both.exitCode).toBe(2)
    expect(both.stderr).toContain('--dry-run and --aws-event do not go together')
    const big = await rewrite(nowhere, '--aws-event', '--batch-size', '400')
    expect(big.stderr).toContain('--batch-size must be a whole number from 1 to 366')
  })

  it('does not hash again the pseudonyms of a date an erasure rewrote in between', async () => {
    const out = await copyOf('erased-between')
    expect((await rewrite(out)).exitCode).toBe(0)
    const owners = "SELECT dt, device_id, owner FROM devices WHERE device_id <> '000001' ORDER BY dt, device_id"
    const before = await rows(out, owners)
    const erased = await runCommandInProcess('erase', [
      ...['--config', settled, '--out', out, '--pseudonymization-key-file', keyFile],
      ...['--table', 'devices', '--where', 'device_id=000001'],
    ])
    expect(erased.exitCode, erased.stderr).toBe(0)
    const later = await configFile('later.json', {
      ...SETTLED,
      columnTypes: { ...SETTLED.columnTypes, cpu_cores: 'string' },
    })
    // The erasure recorded its request, which every later run of the table matches with the key.
    const again = await runCommandInProcess('rewrite', [
      ...['--config', later, '--out', out, '--table', 'devices'],
      ...['--pseudonymization-key-file', keyFile],
    ])
    expect(again.exitCode, again.stderr).toBe(0)
    expect(again.stdout).toContain('devices: 3 dates')
    expect(await rows(out, owners)).toEqual(before)
  })

  it('rewriteHistory takes a batch of dates at a time and moves the registry only when finishing', async () => {
    const out = await copyOf('batches')
    const config = parseConfigWithoutSource({ tables: [CHANGED] })
    const deps = {
      store: new FolderWarehouseStore(out),
      telemetry: silentTelemetry,
      spoolDirectory: path.join(work, 'spool'),
      pseudonymizationKey: PseudonymizationKey.fromText(KEY, 'test'),
    }
    const registry = () => readFile(path.join(out, '_schemas', 'devices.json'), 'utf8')
    const untouched = await registry()
    const first = await rewriteHistory(config, config.tables[0]!, deps, { dates: [DATES[0]!] })
    expect(first.dates.map((d) => d.exportDate)).toEqual([DATES[0]])
    expect(first.finished).toBe(false)
    // Asked to finish while a date is not in line yet, it leaves the registry as it is.
    const early = await rewriteHistory(config, config.tables[0]!, deps, { dates: [DATES[1]!], finish: true })
    expect(early.finished).toBe(false)
    expect(await registry()).toBe(untouched)
    const last = await rewriteHistory(config, config.tables[0]!, deps, { dates: DATES, finish: true })
    expect(last.dates.map((d) => d.exportDate)).toEqual([DATES[2]])
    expect(last.finished).toBe(true)
    const { dropped, ...moved } = JSON.parse(await registry())
    expect(dropped).toEqual(['serial_number'])
    expect(JSON.stringify(moved)).not.toContain('serial_number')
  })

  it('rewrites the dates --date or --from/--to pick, moving the registry once the others are in line too', async () => {
    const out = await copyOf('dated')
    const registry = () => readFile(path.join(out, '_schemas', 'devices.json'), 'utf8')
    const untouched = await registry()
    const first = await rewrite(out, '--date', DATES[0]!)
    expect(first.exitCode, first.stderr).toBe(0)
    expect(first.stdout).toMatch(
      /devices: 1 date \(3\d\d rows, .*\) rewritten; other dates are not yet in line, so the registry has not moved/,
    )
    expect(await registry()).toBe(untouched)
    // By its saved table id, the rest of the range: then every date is in line, and the registry moves.
    const rest = await runCommandInProcess('rewrite', [...rewriteArgs(out), '--table', '1001', '--from', DATES[1]!])
    expect(rest.exitCode, rest.stderr).toBe(0)
    expect(rest.stdout).toMatch(
      /devices: 2 dates .* rewritten; every date is in line with the configuration and the registry has moved/,
    )
    // A date it does not hold, or a range that is none, changes nothing.
    const before = await objects(out)
    for (const flags of [
      ['--date', '2026-11-01'],
      ['--from', DATES[2]!, '--to', DATES[1]!],
      ['--to', '2026-13-01'],
    ]) {
      const bad = await rewrite(out, ...flags)
      expect(bad.exitCode, flags.join(' ')).toBe(2)
      expect(bad.stderr).toMatch(
        /^error \[USAGE_INVALID\]: (devices has no export date dt=2026-11-01|--from .* is after --to|--to )/,
      )
    }
    expect(await objects(out)).toEqual(before)
  })

  it('changes nothing when run again', async () => {
    const out = await copyOf('again')
    expect((await rewrite(out)).exitCode).toBe(0)
    const first = await objects(out)
    const again = await rewrite(out)
    expect(again.exitCode, again.stderr).toBe(0)
    // Nothing moved, and it says so.
    expect(again.stdout).toBe(
      'devices: 0 dates (0 rows, 0 B) rewritten; every date was in line with the configuration, and so was the registry',
    )
    expect(await objects(out)).toEqual(first)
  })

  it('after a SIGKILL in the middle, a rerun ends in the state of an uninterrupted run', async () => {
    const whole = await copyOf('uninterrupted')
    const killed = await copyOf('killed')
    expect((await rewrite(whole)).exitCode).toBe(0)
    const signal = await new Promise<NodeJS.Signals | null>((resolve) => {
      const child = spawn(
        process.execPath,
        [path.join(REPO, 'functions/local/cli.mjs'), 'rewrite', ...rewriteArgs(killed), '--table', 'devices'],
        { cwd: REPO, stdio: ['ignore', 'pipe', 'ignore'] },
      )
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes(' rewritten')) child.kill('SIGKILL')
      })
      child.on('close', (_code, killedBy) => resolve(killedBy))
    })
    expect(signal).toBe('SIGKILL')
    // Stopped before the end: the registry has not moved, so the export still refuses the table.
    expect(JSON.parse(await readFile(path.join(killed, '_schemas', 'devices.json'), 'utf8')).columns).toContainEqual(
      expect.objectContaining({ name: 'serial_number' }),
    )
    const rerun = await rewrite(killed)
    expect(rerun.exitCode, rerun.stderr).toBe(0)
    const state = 'SELECT * EXCLUDE (_source_row_number) FROM devices ORDER BY dt, device_id'
    expect(await rows(killed, state)).toEqual(await rows(whole, state))
    const registry = async (out: string) => readFile(path.join(out, '_schemas', 'devices.json'), 'utf8')
    expect(await registry(killed)).toEqual(await registry(whole))
  })
})
