/**
 * `"tableFormat": "iceberg"` through the real CLI against the stand-in: one table in each layout, fed the same
 * rows, with a column added, a date exported again, an erasure and retention. The analysts' queries answer the
 * same on both, an independent reader (icebird) reads the Iceberg table's current snapshot as the Hive table's
 * objects, and after the erasure no file under the Iceberg table's folders holds the value.
 */
import { randomBytes } from 'node:crypto'
import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, type Row, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import type { TableMetadata } from '../../functions/export/iceberg/table-metadata.ts'
import { queryWarehouse } from '../../functions/local/warehouse-sql.ts'
import { scanForNeedles } from '../support/canary.ts'
import { runCommandInProcess, runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'

const OWNER = 'zelda.quixotewright@private.example'
const KEY = randomBytes(32).toString('hex')

let emulator: RunningEmulator
let work: string
let token: string
let keyFile: string

const day = (n: number, cost = false): { columns: string[]; rows: Row[] } => ({
  columns: ['Asset Tag', 'Owner', 'Purchased', ...(cost ? ['Cost'] : [])],
  rows: Array.from({ length: 4 + n }, (_, i) => {
    const row: Row = [`A-${n}-${i}`, i === 1 ? OWNER : `owner ${i}`, `2026-0${1 + (i % 9)}-1${i % 10}`]
    return cost ? [...row, String(100 + i)] : row
  }),
})

beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: [] })
  work = await tempDir('iceberg-tables-')
  token = await tokenFile(DEMO_TOKEN)
  keyFile = path.join(work, 'key')
  await writeFile(keyFile, `${KEY}\n`)
})
afterAll(async () => {
  await emulator.close()
  await rm(work, { recursive: true, force: true })
  await rm(path.dirname(token), { recursive: true, force: true })
})

const TABLES = [
  { id: '4001', name: 'hive_assets', key: ['asset_tag'] },
  { id: '4002', name: 'ice_assets', key: ['asset_tag'], tableFormat: 'iceberg' },
]

const setup = async (name: string, extra: Record<string, unknown> = {}) => {
  const out = path.join(work, name)
  // One warehouse per name, one configuration per set of settings.
  const config = path.join(work, `${name}-${Object.keys(extra).join('-') || 'as-is'}.json`)
  await writeFile(
    config,
    JSON.stringify({ source: { baseUrl: emulator.baseUrl }, tables: TABLES.map((t) => ({ ...t, ...extra })) }),
  )
  const exportDate = async (date: string, shape: ReturnType<typeof day>) => {
    for (const { id } of TABLES) emulator.setTable({ id, title: id, columns: shape.columns, rows: () => shape.rows })
    const result = await runExportInProcess([
      ...['--config', config, '--token-file', token, '--out', out, '--date', date],
      ...['--pseudonymization-key-file', keyFile],
    ])
    expect(result.exitCode, result.stdout + result.stderr).toBe(0)
  }
  return { out, config, exportDate }
}

const COLUMNS = 'dt, asset_tag, owner, purchased, cost, _source_row_number, _row_fingerprint'
const rowsOf = async (out: string, table: string, where = '') =>
  (await queryWarehouse(out, `SELECT ${COLUMNS} FROM ${table} ${where} ORDER BY dt, asset_tag`)).rows

describe('a table with "tableFormat": "iceberg"', () => {
  it('answers the analysts as the Hive table does, through drift, a backfill, an erasure and retention', async () => {
    const { out, config, exportDate } = await setup('both')
    await exportDate('2026-11-01', day(1))
    await exportDate('2026-11-03', day(3, true))
    await exportDate('2026-11-02', day(2))
    await exportDate('2026-11-03', day(4, true))
    const hive = await rowsOf(out, 'hive_assets')
    expect(hive.map((row) => row[0])).toEqual([
      ...Array(5).fill('2026-11-01'),
      ...Array(6).fill('2026-11-02'),
      ...Array(8).fill('2026-11-03'),
    ])
    expect(await rowsOf(out, 'ice_assets')).toEqual(hive)
    // The views too, row for row; the two tables differ only by the table id their rows came from.
    for (const view of ['_latest', '_changes']) {
      const [a, b] = await Promise.all(
        ['hive_assets', 'ice_assets'].map(async (t) => {
          const { columns, rows } = await queryWarehouse(out, `SELECT * FROM ${t}${view}`)
          const own = columns.indexOf('_source_table_id')
          return rows.map((row) => JSON.stringify(row.filter((_, i) => i !== own))).sort()
        }),
      )
      expect(a?.length, view).toBeGreaterThan(0)
      expect(b, view).toEqual(a)
    }
    expect((await readdir(path.join(out, 'ice_assets'))).sort()).toEqual(['data', 'metadata'])

    // One snapshot per export; the date exported again was overwritten (an independent reader: iceberg-commit).
    const pointer = JSON.parse(await readFile(path.join(out, '_iceberg/ice_assets.json'), 'utf8'))
    const metadata = JSON.parse(await readFile(path.join(out, pointer.metadataKey), 'utf8')) as TableMetadata
    expect(metadata.snapshots.map((s) => s.summary.operation)).toEqual(['append', 'append', 'append', 'overwrite'])
    expect(metadata.location).toBe(`file://${out}/ice_assets`)

    const erase = async (table: string) =>
      runCommandInProcess('erase', [
        ...['--config', config, '--out', out, '--pseudonymization-key-file', keyFile],
        ...['--table', table, '--where', `owner=${OWNER}`],
      ])
    for (const table of ['hive_assets', 'ice_assets']) {
      const erased = await erase(table)
      expect(erased.exitCode, erased.stdout + erased.stderr).toBe(0)
    }
    expect(await rowsOf(out, 'ice_assets', `WHERE owner = '${OWNER}'`)).toEqual([])
    expect(await rowsOf(out, 'ice_assets')).toEqual(await rowsOf(out, 'hive_assets'))
    const folders = ['ice_assets', '_raw/ice_assets'].map((f) => path.join(out, f))
    expect(await scanForNeedles({ folders, texts: {} }, [OWNER, KEY])).toEqual([])

    // Retention: the dates it no longer keeps leave both tables, and the Iceberg table's storage.
    const kept = await setup('both', { retention: { days: 2 } })
    await kept.exportDate('2026-11-04', day(5, true))
    const dates = async (t: string) => (await queryWarehouse(out, `SELECT DISTINCT dt FROM ${t} ORDER BY dt`)).rows
    expect(await dates('ice_assets')).toEqual([['2026-11-03'], ['2026-11-04']])
    expect(await rowsOf(out, 'ice_assets')).toEqual(await rowsOf(out, 'hive_assets'))
    expect((await readdir(path.join(out, 'ice_assets/data'))).sort()).toEqual(['dt=2026-11-03', 'dt=2026-11-04'])
    const files = await readdir(path.join(out, 'ice_assets/data'), { recursive: true })
    expect(files.filter((f) => f.endsWith('.parquet'))).toHaveLength(2)

    // Hive DDL over its folders would read replaced files: npm run ddl says so instead of printing any.
    const ddl = await runCommandInProcess('ddl', ['--out', out])
    expect(ddl.exitCode, ddl.stderr).toBe(0)
    expect(ddl.stdout).toContain('CREATE EXTERNAL TABLE IF NOT EXISTS `inventory`.`hive_assets`')
    expect(ddl.stdout).toContain(
      '-- ice_assets: an Iceberg table (docs/iceberg.md): Athena reads it through the Glue catalog only',
    )
    expect(ddl.stdout).not.toContain('CREATE EXTERNAL TABLE IF NOT EXISTS `inventory`.`ice_assets`')
  })

  it('moves between the layouts with npm run convert, and an export refuses a table whose layout differs', async () => {
    const hive = await setup('convert', { tableFormat: 'hive' })
    await hive.exportDate('2026-11-01', day(1))
    await hive.exportDate('2026-11-02', day(2, true))
    const { out } = hive
    const before = await rowsOf(out, 'hive_assets')
    const iceberg = await setup('convert')
    const convert = (to: string, config = iceberg.config) =>
      runCommandInProcess('convert', ['--config', config, '--out', out, '--table', 'ice_assets', '--to', to])

    // Set to Iceberg with its dates in the Hive layout: refused before anything is downloaded.
    emulator.setTable({ id: '4002', title: 'x', columns: ['Asset Tag'], rows: () => [] })
    const alone = path.join(work, 'ice-alone.json')
    await writeFile(alone, JSON.stringify({ source: { baseUrl: emulator.baseUrl }, tables: [TABLES[1]] }))
    const refused = await runExportInProcess(['--config', alone, '--token-file', token, '--out', out])
    expect(refused.exitCode).not.toBe(0)
    expect(refused.stdout + refused.stderr).toContain(
      'ice_assets: FAILED [TABLE_FORMAT_CHANGED] table 4002: ice_assets is set to the iceberg layout, but its published dates are in the hive layout',
    )
    expect(refused.stdout + refused.stderr).toContain(
      'or set "tableFormat": "hive" on the table, the layout its dates are in',
    )
    expect(refused.stdout + refused.stderr).toContain('npm run convert -- --table ice_assets --to iceberg')

    const toIceberg = await convert('iceberg')
    expect(toIceberg.exitCode, toIceberg.stdout + toIceberg.stderr).toBe(0)
    expect(toIceberg.stdout).toContain('ice_assets: 2 dates moved; the table is in the Iceberg layout with 2 dates')
    expect(await rowsOf(out, 'ice_assets')).toEqual(before)
    // No row was rewritten: the Iceberg table reads the Hive objects themselves.
    expect((await readdir(path.join(out, 'ice_assets'))).sort()).toEqual(['dt=2026-11-01', 'dt=2026-11-02', 'metadata'])
    expect((await convert('iceberg')).stdout).toContain('ice_assets: 0 dates moved')

    await iceberg.exportDate('2026-11-02', day(3, true))
    await iceberg.exportDate('2026-11-03', day(4, true))
    const after = await rowsOf(out, 'hive_assets')
    expect(await rowsOf(out, 'ice_assets')).toEqual(after)

    const toHive = await convert('hive')
    expect(toHive.exitCode, toHive.stdout + toHive.stderr).toBe(0)
    expect(toHive.stdout).toContain('ice_assets: 2 dates moved; the table is in the Hive layout with 3 dates')
    expect(await rowsOf(out, 'ice_assets')).toEqual(after)
    expect((await readdir(path.join(out, 'ice_assets'))).sort()).toEqual([
      'dt=2026-11-01',
      'dt=2026-11-02',
      'dt=2026-11-03',
    ])
    await hive.exportDate('2026-11-04', day(5, true))
    expect(await rowsOf(out, 'ice_assets')).toEqual(await rowsOf(out, 'hive_assets'))
  })

  it('refuses a table another engine committed to, reading and writing nothing of it', async () => {
    const { out, exportDate } = await setup('foreign')
    await exportDate('2026-11-01', day(1))
    // As an Athena DELETE would leave it: a snapshot on top that this exporter did not commit.
    const pointerFile = path.join(out, '_iceberg/ice_assets.json')
    const pointer = JSON.parse(await readFile(pointerFile, 'utf8'))
    const metadata = JSON.parse(await readFile(path.join(out, pointer.metadataKey), 'utf8')) as TableMetadata
    const own = metadata.snapshots.at(-1)!
    const theirs = { ...own, 'snapshot-id': own['snapshot-id'] + 1, summary: { operation: 'delete' as const } }
    const foreignKey = 'ice_assets/metadata/00009-athena.metadata.json'
    const foreign = {
      ...metadata,
      snapshots: [...metadata.snapshots, theirs],
      'current-snapshot-id': theirs['snapshot-id'],
    }
    await writeFile(path.join(out, foreignKey), JSON.stringify(foreign))
    await writeFile(pointerFile, JSON.stringify({ metadataKey: foreignKey }))
    emulator.setTable({ id: '4002', title: 'x', columns: day(2).columns, rows: () => day(2).rows })
    const alone = path.join(work, 'foreign-alone.json')
    await writeFile(alone, JSON.stringify({ source: { baseUrl: emulator.baseUrl }, tables: [TABLES[1]] }))
    const refused = await runExportInProcess([
      '--config',
      alone,
      '--token-file',
      token,
      '--out',
      out,
      '--date',
      '2026-11-02',
    ])
    expect(refused.exitCode).not.toBe(0)
    expect(refused.stdout + refused.stderr).toContain(
      "ice_assets: FAILED [ICEBERG_FOREIGN_COMMIT] ice_assets: the Iceberg table's current snapshot (delete) was committed by another engine, not by this exporter",
    )
    expect(JSON.parse(await readFile(pointerFile, 'utf8'))).toEqual({ metadataKey: foreignKey })
    expect((await readdir(path.join(out, 'ice_assets/data'))).sort()).toEqual(['dt=2026-11-01'])
    // Pointed back at the exporter's own snapshot, the table exports again.
    await writeFile(pointerFile, JSON.stringify(pointer))
    const again = await runExportInProcess([
      '--config',
      alone,
      '--token-file',
      token,
      '--out',
      out,
      '--date',
      '2026-11-02',
    ])
    expect(again.exitCode, again.stdout + again.stderr).toBe(0)
    expect((await readdir(path.join(out, 'ice_assets/data'))).sort()).toEqual(['dt=2026-11-01', 'dt=2026-11-02'])
  })
})
