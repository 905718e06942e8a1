import { existsSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, DEMO_TOKENS, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import {
  type CliResult,
  runCliProcess,
  runCommandInProcess,
  runExportInProcess,
  tempDir,
  tokenFile,
} from '../support/cli.ts'

let emulator: RunningEmulator
let demoWarehouse: string
let demo: CliResult

beforeAll(async () => {
  emulator = await startInventoryEmulator()
  demoWarehouse = await tempDir()
  demo = await runExportInProcess(['--demo', '--out', demoWarehouse, '--date', '2026-05-04'])
  expect(demo.exitCode).toBe(0)
})
afterAll(() => emulator.close())

const check = async (token: string, ...tables: string[]) =>
  runCommandInProcess('check', [
    '--base-url',
    emulator.baseUrl,
    ...tables.flatMap((t) => ['--table', t]),
    '--token-file',
    await tokenFile(token),
  ])

describe('npm run check', () => {
  it('shows whose token it is and each table with its columns named and typed, and exits 0', async () => {
    const result = await check(DEMO_TOKEN, '1001=devices', '1003')
    expect(result.exitCode).toBe(0)
    expect(result.stdout).toContain('token: OK, it belongs to api-export')
    // The same counts as the export's summary and run record: data columns apart from the lineage columns.
    expect(result.stdout).toMatch(/table 1001 -> devices: OK, 20 data columns, and 5 lineage columns the export adds/)
    expect(result.stdout).toMatch(/ram_gb\s+bigint\s+"RAM \(GB\)"/)
    expect(result.stdout).toMatch(/last_seen\s+timestamp\s+"Last Seen"/)
    expect(result.stdout).toMatch(/table 1003 -> table_1003: OK/)
    expect(result.stdout).toContain('ready: every table can be exported')
  })

  it('suggests a key for a table without one as an identifier, a pair when one column is not unique, in English', async () => {
    const result = await check(DEMO_TOKEN, '1001=devices', '1002=installed_software')
    expect(result.stdout).toContain(
      'key: none; device_id is unique and never empty in these rows: set "key": ["device_id"] for the devices_changes view',
    )
    expect(result.stdout).toContain(
      'key: none; device_id and software_name are unique together and never empty in these rows: set "key": ["device_id", "software_name"] for the installed_software_changes view',
    )
  })

  it('reads only the start of each table, not the whole export', async () => {
    const big = await startInventoryEmulator({
      tables: (await import('../../emulator/index.ts')).demoTables({ rows: { devices: 200_000 } }),
    })
    try {
      // Past 2 MB the body goes silent for longer than the test may run: only a preview gets through.
      big.faults.always('1001', { kind: 'stall', afterBytes: 2_000_000, ms: 120_000 })
      const result = await runCommandInProcess('check', [
        '--base-url',
        big.baseUrl,
        '--table',
        '1001',
        '--token-file',
        await tokenFile(DEMO_TOKEN),
      ])
      expect(result.exitCode).toBe(0)
      expect(result.stdout).toContain('types judged from the first 1000 rows')
    } finally {
      await big.close()
    }
  })

  it('explains a rejected token in plain words with the next step, and exits 1', async () => {
    const result = await check(DEMO_TOKENS.revoked, '1001')
    expect(result.exitCode).toBe(1)
    expect(result.stdout).toContain('token: NOT READY [AUTH_REJECTED HTTP 401]')
    // Run locally, the token comes from --token-file or INVENTORY_TOKEN: no Secrets Manager advice here.
    expect(result.stdout).toMatch(
      /next step: create a new API token .*pass --token-file FILE \(or set INVENTORY_TOKEN\)/,
    )
    expect(result.stdout).not.toContain('secret')
  })

  it('explains a table the token may not read (403) and an unknown table (404), and exits 1', async () => {
    const result = await check(DEMO_TOKENS.limited, '1003', '1005', '777')
    expect(result.exitCode).toBe(1)
    expect(result.stdout).toMatch(/table 1003 -> table_1003: OK/)
    expect(result.stdout).toMatch(/table 1005 -> table_1005: NOT READY \[PERMISSION_DENIED HTTP 403\]/)
    expect(result.stdout).toMatch(/next step: share the saved table with the token's user/)
    expect(result.stdout).toMatch(/table 777 -> table_777: NOT READY \[TABLE_NOT_FOUND HTTP 404\]/)
    expect(result.stdout).toContain('NOT READY: fix the problems above')
  })
})

describe('npm run query', () => {
  it('answers SQL over the demo warehouse with tables and latest views under their Athena names', async () => {
    const result = await runCommandInProcess('query', [
      '--out',
      demoWarehouse,
      'SELECT count(*) AS devices, min(dt) AS dt FROM devices_latest',
    ])
    expect(result.exitCode).toBe(0)
    expect(result.stdout.split('\n')).toEqual([
      'devices | dt',
      '--------+-----------',
      '2500    | 2026-05-04',
      '(1 row)',
    ])
  })

  it('exits 1 with the database error on bad SQL, as a query error rather than a usage error (2)', async () => {
    const result = await runCommandInProcess('query', ['--out', demoWarehouse, 'SELECT nope FROM devices'])
    expect(result.exitCode).toBe(1)
    expect(result.stderr).toMatch(/^error \[QUERY_FAILED\]: the query failed: .*nope/)
    expect(result.stderr).not.toContain('--help')
  })

  it('answers as CSV with a header line, quoting what needs it, and NULL as an empty field', async () => {
    const result = await runCommandInProcess('query', [
      '--out',
      demoWarehouse,
      '--format',
      'csv',
      `SELECT 'a,b' AS odd, 'say "hi"' AS quoted, NULL AS nothing, count(*) AS devices FROM devices_latest`,
    ])
    expect(result.exitCode).toBe(0)
    expect(result.stdout.split('\n')).toEqual(['odd,quoted,nothing,devices', '"a,b","say ""hi""",,2500'])
  })

  it('answers as a JSON array of objects keyed by column name', async () => {
    const result = await runCommandInProcess('query', [
      '--out',
      demoWarehouse,
      '--format',
      'json',
      'SELECT device_id, ram_gb FROM devices_latest ORDER BY device_id LIMIT 2',
    ])
    expect(result.exitCode).toBe(0)
    const rows = JSON.parse(result.stdout) as Record<string, unknown>[]
    expect(rows).toHaveLength(2)
    expect(Object.keys(rows[0]!)).toEqual(['device_id', 'ram_gb'])
    expect(rows[0]!.device_id).toBe('000001')
    expect(typeof rows[0]!.ram_gb).toBe('number')
  })

  it('writes numbers as JSON numbers where a reader gets the exact value back, else as exact strings', async () => {
    const sql = [
      'SELECT count(*) AS n, 9007199254740991::BIGINT AS max_safe, 9007199254740992::BIGINT AS past_safe,',
      "12.34::DECIMAL(10,2) AS price, 1234567890123456.78::DECIMAL(18,2) AS wide, 'nan'::DOUBLE AS nan,",
      "'inf'::DOUBLE AS inf, 0.25::DOUBLE AS quarter, [1, 2]::BIGINT[] AS list, '7' AS text FROM devices_latest",
    ].join(' ')
    const result = await runCommandInProcess('query', ['--out', demoWarehouse, '--format', 'json', sql])

    expect(result.exitCode).toBe(0)
    expect(result.stdout).toBe(
      '[\n{"n":2500,"max_safe":9007199254740991,"past_safe":"9007199254740992","price":12.34,"wide":"1234567890123456.78","nan":"NaN","inf":"Infinity","quarter":0.25,"list":[1,2],"text":"7"}\n]',
    )
  })

  it("gives the same answers whatever the machine's time zone, reading timestamps in UTC as Athena does", async () => {
    const sql =
      'SELECT hour(last_seen) AS h, count(*) AS n, min(last_seen) AS first, typeof(min(last_seen)) AS t FROM devices GROUP BY 1 ORDER BY 1 LIMIT 3'
    const [utc, losAngeles] = await Promise.all(
      ['UTC', 'America/Los_Angeles'].map((TZ) => runCliProcess(['query', '--out', demoWarehouse, sql], { TZ })),
    )
    expect(utc!.exitCode).toBe(0)
    expect(losAngeles!.stdout).toBe(utc!.stdout)
    expect(utc!.stdout).toMatch(/\| TIMESTAMP\n/)
  })
})

describe('npm run ddl', () => {
  it('prints the Athena tables and latest views of the demo data (reviewed snapshot)', async () => {
    const result = await runCommandInProcess('ddl', [
      '--out',
      demoWarehouse,
      '--database',
      'inventory',
      '--location-root',
      's3://acme-inventory-warehouse/inventory',
    ])
    expect(result.exitCode).toBe(0)
    await expect(`${result.stdout}\n`).toMatchFileSnapshot('../fixtures/ddl/demo-tables.sql')
  })

  it('--table prints a published table by its name or its saved table id, and names the tables for another', async () => {
    const tables = async (...flags: string[]) => {
      const result = await runCommandInProcess('ddl', ['--out', demoWarehouse, ...flags])
      return { ...result, tables: [...result.stdout.matchAll(/^-- (\w+): saved table/gm)].map((m) => m[1]) }
    }
    expect((await tables('--table', 'devices', '--table', '1003')).tables).toEqual(['devices', 'users'])
    const unknown = await tables('--table', 'device')
    expect(unknown.exitCode).toBe(2)
    expect(unknown.stderr).toMatch(/--table "device" is not a table published in .*; did you mean "devices"\?/)
    expect(unknown.stderr).toContain(
      'next step: name one of the published tables: devices, installed_software, payroll_devices, users',
    )
  })
})

describe('the demo', () => {
  it('takes a configuration without a source, and refuses one that names a service', async () => {
    const folder = await tempDir()
    const withSource = path.join(folder, 'with-source.json')
    await writeFile(withSource, JSON.stringify({ source: { baseUrl: emulator.baseUrl }, tables: [{ id: '1001' }] }))
    const refused = await runExportInProcess(['--demo', '--config', withSource, '--out', folder])
    expect(refused.exitCode).toBe(2)
    expect(refused.stderr).toContain(
      `error [USAGE_INVALID]: --demo uses the built-in stand-in, and --config ${withSource} names a service (source); drop its source section, or drop --demo`,
    )
  })

  it('runs without a warning: its data keeps its own key', () => {
    expect(demo.stderr).not.toMatch(/warning/i)
    expect(demo.stdout).not.toMatch(/warning/i)
  })

  it('says what its summary counts: data and lineage columns as check does, Parquet bytes apart from what was received', () => {
    const [header, , devices] = demo.stdout.split('\n')
    expect(header!.split(/ {2,}/)).toEqual([
      'table',
      'status',
      'rows',
      'data columns',
      'lineage columns',
      'received',
      'parquet',
      'seconds',
      'from',
      'output',
    ])
    expect(devices!.split(/ {2,}/).slice(0, 5)).toEqual(['devices', 'ok', '2,500', '20', '5'])
  })
})

describe('npm run reset', () => {
  it('deletes a warehouse the export wrote, and says so', async () => {
    const out = await tempDir()
    expect((await runExportInProcess(['--demo', '--out', out, '--date', '2026-05-04'])).exitCode).toBe(0)
    const result = await runCommandInProcess('reset', ['--out', out])
    expect(result.exitCode).toBe(0)
    expect(result.stdout).toContain(`deleted the warehouse ${out}`)
    expect(existsSync(out)).toBe(false)
  })

  it('refuses a warehouse folder holding something the export did not write, and deletes nothing', async () => {
    const out = await tempDir()
    expect((await runExportInProcess(['--demo', '--out', out, '--date', '2026-05-04'])).exitCode).toBe(0)
    await writeFile(path.join(out, 'devices', 'notes.txt'), 'mine')
    const result = await runCommandInProcess('reset', ['--out', out])
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toMatch(/refusing to delete .*: "devices\/notes\.txt" is not an export date's partition/)
    expect(existsSync(path.join(out, '_schemas', 'devices.json'))).toBe(true)
  })

  it('has nothing to do for a folder that does not exist', async () => {
    const result = await runCommandInProcess('reset', ['--out', path.join(await tempDir(), 'none')])
    expect(result.exitCode).toBe(0)
    expect(result.stdout).toMatch(/nothing to reset/)
  })
})
