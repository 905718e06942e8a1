import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Row } from '../../emulator/index.ts'
import { parseConfigWithoutSource } from '../../functions/export/core/config.ts'
import { runExport } from '../../functions/export/path/run.ts'
import { FolderWarehouseStore } from '../../functions/export/publish/fs.ts'
import { queryWarehouse } from '../../functions/local/warehouse-sql.ts'
import { runExportInProcess, tempDir } from '../support/cli.ts'
import { MemorySource } from '../support/memory-source.ts'
import { silentTelemetry } from '../support/telemetry.ts'

const DATES = ['2026-11-21', '2026-11-22', '2026-11-23'] as const

const rowsOf = async (root: string, sql: string) => (await queryWarehouse(root, sql)).rows.map((row) => [...row])

describe('the changes view over three dates of the demo, through npm run query', () => {
  let out: string
  beforeAll(async () => {
    out = await tempDir()
    for (const date of DATES) {
      const result = await runExportInProcess(['--demo', '--date', date, '--out', out])
      expect(result.exitCode, result.stderr).toBe(0)
    }
  })

  it('shows the devices bought, retired and upgraded between each pair of export dates', async () => {
    const rows = await rowsOf(
      out,
      `SELECT dt, previous_dt, change, device_id, changed_columns, operating_system, previous_operating_system
       FROM devices_changes ORDER BY dt, change, device_id`,
    )
    expect(rows).toEqual([
      ['2026-11-22', '2026-11-21', 'added', '002503', [], 'Windows 11 Enterprise', null],
      ['2026-11-22', '2026-11-21', 'changed', '000062', ['os_version'], 'Ubuntu', 'Ubuntu'],
      [
        '2026-11-22',
        '2026-11-21',
        'changed',
        '000250',
        ['operating_system', 'os_version'],
        'Windows 11 Enterprise',
        'Windows 10 Pro',
      ],
      [
        '2026-11-22',
        '2026-11-21',
        'changed',
        '000287',
        ['operating_system', 'os_version'],
        'macOS Sequoia',
        'macOS Sonoma',
      ],
      [
        '2026-11-22',
        '2026-11-21',
        'changed',
        '000428',
        ['os_version'],
        'Windows 11 Enterprise',
        'Windows 11 Enterprise',
      ],
      [
        '2026-11-22',
        '2026-11-21',
        'changed',
        '000545',
        ['os_version'],
        'Windows 11 Enterprise',
        'Windows 11 Enterprise',
      ],
      [
        '2026-11-22',
        '2026-11-21',
        'changed',
        '000931',
        ['operating_system', 'os_version'],
        'macOS Sequoia',
        'macOS Sonoma',
      ],
      [
        '2026-11-22',
        '2026-11-21',
        'changed',
        '001333',
        ['operating_system', 'os_version'],
        'macOS Sequoia',
        'macOS Sonoma',
      ],
      [
        '2026-11-22',
        '2026-11-21',
        'changed',
        '001686',
        ['operating_system', 'os_version'],
        'macOS Sequoia',
        'macOS Sonoma',
      ],
      ['2026-11-22', '2026-11-21', 'removed', '000010', [], 'Windows 11 Enterprise', null],
      ['2026-11-22', '2026-11-21', 'removed', '000230', [], 'Red Hat Enterprise Linux', null],
      ['2026-11-22', '2026-11-21', 'removed', '000301', [], 'macOS Sonoma', null],
      ['2026-11-22', '2026-11-21', 'removed', '000843', [], 'Windows 10 Pro', null],
      ['2026-11-22', '2026-11-21', 'removed', '001250', [], 'Windows 11 Enterprise', null],
      ['2026-11-23', '2026-11-22', 'added', '002504', [], 'Windows 11 Enterprise', null],
      ['2026-11-23', '2026-11-22', 'added', '002505', [], 'Red Hat Enterprise Linux', null],
      ['2026-11-23', '2026-11-22', 'changed', '000620', ['os_version'], 'Ubuntu', 'Ubuntu'],
      [
        '2026-11-23',
        '2026-11-22',
        'changed',
        '000921',
        ['operating_system', 'os_version'],
        'macOS Sequoia',
        'macOS Sonoma',
      ],
      [
        '2026-11-23',
        '2026-11-22',
        'changed',
        '001287',
        ['os_version'],
        'Red Hat Enterprise Linux',
        'Red Hat Enterprise Linux',
      ],
      [
        '2026-11-23',
        '2026-11-22',
        'changed',
        '001311',
        ['operating_system', 'os_version'],
        'macOS Sequoia',
        'macOS Sonoma',
      ],
      [
        '2026-11-23',
        '2026-11-22',
        'changed',
        '001882',
        ['operating_system', 'os_version'],
        'Windows Server 2025 Datacenter',
        'Windows Server 2022 Datacenter',
      ],
      [
        '2026-11-23',
        '2026-11-22',
        'changed',
        '002114',
        ['operating_system', 'os_version'],
        'macOS Sequoia',
        'macOS Sonoma',
      ],
      ['2026-11-23', '2026-11-22', 'removed', '000123', [], 'Windows 10 Pro', null],
      ['2026-11-23', '2026-11-22', 'removed', '001138', [], 'Windows 10 Pro', null],
      ['2026-11-23', '2026-11-22', 'removed', '001184', [], 'Windows 11 Enterprise', null],
    ])
  })

  it('shows the software installed and removed, by device and title (a title once per device)', async () => {
    const rows = await rowsOf(
      out,
      'SELECT dt, change, device_id, software_name FROM installed_software_changes ORDER BY dt, change, device_id, software_name',
    )
    expect(rows).toEqual([
      ['2026-11-22', 'added', '000384', 'Python 3.12.7 (64-bit)'],
      ['2026-11-22', 'added', '001675', 'Mozilla Firefox (x64 de)'],
      ['2026-11-22', 'added', '002086', 'Microsoft Visual C++ 2015-2022 Redistributable (x64) - 14.40.33810'],
      ['2026-11-22', 'added', '002303', 'Microsoft Visual Studio Code (User)'],
      ['2026-11-22', 'removed', '000007', 'Mozilla Firefox (x64 de)'],
      ['2026-11-22', 'removed', '001171', 'Microsoft Visual C++ 2015-2022 Redistributable (x64) - 14.40.33810'],
      ['2026-11-22', 'removed', '001330', 'Adobe Acrobat (64-bit)'],
      ['2026-11-22', 'removed', '001465', 'Microsoft 365 Apps for enterprise - de-de'],
      ['2026-11-22', 'removed', '001542', 'Mozilla Firefox (x64 de)'],
      ['2026-11-22', 'removed', '001618', 'Notepad++ (64-bit x64)'],
      ['2026-11-23', 'added', '000084', 'Mozilla Firefox (x64 de)'],
      ['2026-11-23', 'added', '000326', '7-Zip 24.08 (x64)'],
      ['2026-11-23', 'added', '000917', 'Zoom Workplace (64-bit)'],
      ['2026-11-23', 'removed', '000770', 'Notepad++ (64-bit x64)'],
      ['2026-11-23', 'removed', '001475', 'Mozilla Firefox (x64 de)'],
      ['2026-11-23', 'removed', '001500', 'Microsoft Visual C++ 2015-2022 Redistributable (x64) - 14.40.33810'],
      ['2026-11-23', 'removed', '001780', 'Microsoft 365 Apps for enterprise - de-de'],
      ['2026-11-23', 'removed', '002067', 'Microsoft Visual C++ 2015-2022 Redistributable (x64) - 14.40.33810'],
    ])
  })

  it('agrees with the snapshots: the later date has the earlier rows plus added minus removed', async () => {
    const [counts] = await rowsOf(
      out,
      `SELECT
         (SELECT count(*) FROM devices WHERE dt = '2026-11-23'),
         (SELECT count(*) FROM devices WHERE dt = '2026-11-22'),
         (SELECT count(*) FILTER (WHERE change = 'added') - count(*) FILTER (WHERE change = 'removed')
            FROM devices_changes WHERE dt = '2026-11-23')`,
    )
    const [after, before, net] = counts!.map(Number)
    expect(after).toBe(before! + net!)
  })

  it('reads, for one dt, only that date and the one before it (DuckDB query plan)', async () => {
    type PlanNode = { operator_name?: string; extra_info?: Record<string, string>; children?: PlanNode[] }
    const [[, text]] = (
      await queryWarehouse(
        out,
        "EXPLAIN (ANALYZE, FORMAT json) SELECT count(*) FROM devices_changes WHERE dt = '2026-11-23'",
      )
    ).rows as [[string, string]]
    const files = new Set<string>()
    const walk = (node: PlanNode) => {
      const read = node.extra_info?.['Filename(s)']
      if (node.operator_name === 'READ_PARQUET' && read) {
        for (const file of read.split(', ')) files.add(path.relative(out, file).split(path.sep).join('/'))
      }
      for (const child of node.children ?? []) walk(child)
    }
    for (const root of [JSON.parse(text) as PlanNode | PlanNode[]].flat()) walk(root)
    expect([...files].sort()).toEqual([
      '_export_dates/devices/dt=2026-11-23/dates.parquet',
      'devices/dt=2026-11-22/data.parquet',
      'devices/dt=2026-11-23/data.parquet',
    ])
  })

  it('gives every keyed table a changes view, empty when nothing changed', async () => {
    const names = await rowsOf(out, "SELECT view_name FROM duckdb_views() WHERE view_name LIKE '%_changes' ORDER BY 1")
    expect(names).toEqual([
      ['devices_changes'],
      ['installed_software_changes'],
      ['payroll_devices_changes'],
      ['users_changes'],
    ])
    expect(await rowsOf(out, 'SELECT count(*) FROM users_changes')).toEqual([['0']])
  })
})

describe('a key that breaks', () => {
  // The saved table's bytes as the service would send them: the key and the view are tested, not HTTP.
  const source = new MemorySource()
  let out: string

  const serve = (rows: Row[]) =>
    source.set('assets', { id: 'assets', title: 'Assets', columns: ['Asset', 'Status'], rows: () => rows })

  const exportOn = async (date: string, key: string[] = ['asset']) => {
    const config = parseConfigWithoutSource({ tables: [{ id: 'assets', name: 'assets', key }] })
    const store = new FolderWarehouseStore(out)
    const record = await runExport(config, { source, store, telemetry: silentTelemetry }, { exportDate: date })
    return record.tables[0]!
  }

  beforeAll(async () => {
    out = await tempDir()
  })

  it('never fails the export, counts empty and repeated keys, and compares such rows by fingerprint', async () => {
    serve([
      ['A', 'ok'],
      ['A', 'ok'],
      [null, 'x'],
      ['B', 'ok'],
      ['C', 'old'],
    ])
    const first = await exportOn('2026-05-01')
    expect(first.error).toBeUndefined()
    expect(first.keys).toEqual({ columns: ['asset'], emptyKeys: 1, duplicateKeys: 1 })
    serve([
      ['A', 'ok'],
      [null, 'x'],
      [null, 'y'],
      ['B', 'ok'],
      ['B', 'ok'],
      ['C', 'new'],
    ])
    const second = await exportOn('2026-05-02')
    expect(second.error).toBeUndefined()
    expect(second.keys).toEqual({ columns: ['asset'], emptyKeys: 2, duplicateKeys: 1 })
    expect(second.warnings).toContain(
      '2 rows have an empty key (asset); the export went ahead, and the changes view compares such rows by fingerprint',
    )

    const rows = await rowsOf(
      out,
      'SELECT change, asset, status, previous_status, changed_columns FROM assets_changes ORDER BY change, asset, status',
    )
    expect(rows).toEqual([
      // One of two equal A rows is gone; a second equal B row appeared; a new row with an empty key.
      ['added', 'B', 'ok', null, []],
      ['added', null, 'y', null, []],
      ['changed', 'C', 'new', 'old', ['status']],
      ['removed', 'A', 'ok', null, []],
    ])
  })

  it('fails the table before publishing anything when the key names a column it does not have', async () => {
    serve([['D', 'ok']])
    const outcome = await exportOn('2026-05-03', ['asset_id'])
    expect(outcome.status).toBe('failed')
    expect(outcome.error).toMatchObject({
      code: 'KEY_COLUMN_MISSING',
      message:
        'table assets: tables[].key names "asset_id", which is not a column of this table (columns: asset, status)',
    })
    expect(await readdir(path.join(out, 'assets'))).toEqual(['dt=2026-05-01', 'dt=2026-05-02'])
  })
})
