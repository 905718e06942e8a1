/**
 * An Iceberg table's history against the Hive table's, through the real CLI: 30 dates with a column added and
 * one gone, backfills and dates exported again, then a retype rewritten over every date and an erasure. After
 * every operation an independent reader (icebird, which reads with hyparquet as the Hive side is read here) reads
 * the Iceberg table's new snapshot, and it equals the Hive layout's objects of the same dates, row for row and
 * value for value, type included. Then an export killed (SIGKILL) at moments spread over its run, and run again:
 * the table is the one the rerun alone would leave, and no file under it is one that nothing references.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { icebergRead } from 'icebird'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { DEMO_TOKEN, type Row, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { sweepUnreferenced } from '../../functions/export/iceberg/iceberg-layout.ts'
import { storeMetadataPointer } from '../../functions/export/iceberg/store-pointer.ts'
import type { TableMetadata } from '../../functions/export/iceberg/table-metadata.ts'
import { FolderWarehouseStore } from '../../functions/export/publish/fs.ts'
import { scanForNeedles } from '../support/canary.ts'
import { runCommandInProcess, runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'
import { readWithHyparquet } from '../support/hyparquet-read.ts'

const OWNER = 'zelda.quixotewright@private.example'
const KEY = randomBytes(32).toString('hex')
const REPO = path.resolve(import.meta.dirname, '../..')

let emulator: RunningEmulator
let work: string
let token: string
let keyFile: string

/** icebird fetches what the metadata names; the local table names file:// URIs, answered here with byte ranges. */
const realFetch = globalThis.fetch
const fileFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const url = String(input instanceof Request ? input.url : input)
  if (!url.startsWith('file://')) return realFetch(input, init)
  const body = await readFile(fileURLToPath(url))
  const range = /bytes=(\d+)-(\d*)/.exec(new Headers(init?.headers).get('range') ?? '')
  if (init?.method === 'HEAD') return new Response(null, { headers: { 'content-length': String(body.length) } })
  if (!range) return new Response(body)
  const end = range[2] ? Number(range[2]) : body.length - 1
  return new Response(body.subarray(Number(range[1]), end + 1), {
    status: 206,
    headers: { 'content-range': `bytes ${range[1]}-${end}/${body.length}` },
  })
}

/** Day n's rows: `Cost` from day 10 on, `Site` until day 20; owner of row 1 the person later erased. */
const day = (n: number, variant = 0): { columns: string[]; rows: Row[] } => {
  const columns = ['Asset Tag', 'Owner', ...(n >= 10 ? ['Cost'] : []), ...(n < 20 ? ['Site'] : [])]
  const rows = Array.from({ length: 3 + (n % 4) }, (_, i) => [
    `A-${n}-${i}-${variant}`,
    i === 1 ? OWNER : `owner ${i}`,
    ...(n >= 10 ? [String(100 * n + i)] : []),
    ...(n < 20 ? [`site ${i % 2}`] : []),
  ])
  return { columns, rows }
}
const dateOf = (n: number) => `2026-10-${String(n).padStart(2, '0')}`
const TABLES = [
  { id: '5001', name: 'hive_assets', guards: false },
  { id: '5002', name: 'ice_assets', guards: false, tableFormat: 'iceberg' },
]

/** A value with its JS type, so that a long read as a number, or a date as a string, differs. */
const typed = (value: unknown): string =>
  value instanceof Date ? `date:${value.toISOString()}` : `${typeof value}:${String(value)}`
const rowText = (row: Record<string, unknown>) =>
  JSON.stringify(
    Object.entries(row)
      .filter(([name, value]) => name !== 'dt' && name !== '_source_table_id' && value !== null && value !== undefined)
      .map(([name, value]) => [name, typed(value)])
      .sort(),
  )

/** The Hive table's rows, as hyparquet reads each date's object. */
const hiveRows = async (out: string) => {
  const rows: string[] = []
  for (const folder of await readdir(path.join(out, 'hive_assets'))) {
    const bytes = await readFile(path.join(out, 'hive_assets', folder, 'data.parquet'))
    rows.push(...(await readWithHyparquet(bytes)).map(rowText))
  }
  return rows.sort()
}

/** The Iceberg table's current snapshot, as icebird reads it. */
const icebergRows = async (out: string) => {
  const pointer = JSON.parse(await readFile(path.join(out, '_iceberg/ice_assets.json'), 'utf8'))
  const metadata = JSON.parse(await readFile(path.join(out, pointer.metadataKey), 'utf8')) as TableMetadata
  const read = await icebergRead({ tableUrl: metadata.location, metadata: metadata as never })
  return { rows: read.map(rowText).sort(), snapshots: metadata.snapshots.length }
}

beforeAll(async () => {
  vi.stubGlobal('fetch', fileFetch)
  emulator = await startInventoryEmulator({ tables: [] })
  work = await tempDir('iceberg-history-')
  token = await tokenFile(DEMO_TOKEN)
  keyFile = path.join(work, 'key')
  await writeFile(keyFile, `${KEY}\n`)
})
afterAll(async () => {
  vi.unstubAllGlobals()
  await emulator.close()
  await rm(work, { recursive: true, force: true })
  await rm(path.dirname(token), { recursive: true, force: true })
})

const writeConfig = async (name: string, extra: Record<string, unknown> = {}) => {
  const file = path.join(work, `${name}.json`)
  const tables = TABLES.map((t) => ({ ...t, ...extra }))
  await writeFile(file, JSON.stringify({ source: { baseUrl: emulator.baseUrl }, tables }))
  return file
}
const serve = (shape: ReturnType<typeof day>) => {
  for (const { id } of TABLES) emulator.setTable({ id, title: id, columns: shape.columns, rows: () => shape.rows })
}
const keyFlags = () => ['--pseudonymization-key-file', keyFile]
/** `npm start` of one date into `out`, as the schedule would run it. */
const exportAs = (config: string, out: string, date: string, extra: readonly string[] = []) =>
  runExportInProcess(['--config', config, '--token-file', token, '--out', out, '--date', date, ...extra])

describe('an Iceberg table over 30 dates', () => {
  it('reads, after every export, rewrite and erasure, as the Hive table of the same dates', async () => {
    const out = path.join(work, 'history')
    const config = await writeConfig('history')
    // In order, then backfills and dates exported again among the last ones.
    const order = [...Array.from({ length: 25 }, (_, i) => i + 1), 28, 26, 30, 27, 29, 12, 27]
    let snapshots = 0
    for (const [i, n] of order.entries()) {
      serve(day(n, i))
      const result = await exportAs(config, out, dateOf(n), keyFlags())
      expect(result.exitCode, result.stdout + result.stderr).toBe(0)
      const ice = await icebergRows(out)
      expect(ice.snapshots).toBe(++snapshots)
      expect(ice.rows, `after dt=${dateOf(n)}`).toEqual(await hiveRows(out))
    }

    // A retype of a published column: refused, then rewritten over every date, in both layouts alike.
    const retyped = await writeConfig('retyped', { columnTypes: { cost: 'string' } })
    const refused = await exportAs(retyped, out, dateOf(30), keyFlags())
    expect(refused.stdout + refused.stderr).toContain('HISTORY_REWRITE_NEEDED')
    for (const table of ['hive_assets', 'ice_assets']) {
      const rewrite = await runCommandInProcess('rewrite', [
        '--config',
        retyped,
        '--out',
        out,
        '--table',
        table,
        ...keyFlags(),
      ])
      expect(rewrite.exitCode, rewrite.stdout + rewrite.stderr).toBe(0)
    }
    const rewritten = await icebergRows(out)
    expect(rewritten.rows).toEqual(await hiveRows(out))
    expect(rewritten.rows.some((row) => row.includes('"string:1200"'))).toBe(true)

    // An erasure: its snapshot reads as the Hive table, and every earlier one is gone with the files it read.
    for (const table of ['hive_assets', 'ice_assets']) {
      const erase = await runCommandInProcess('erase', [
        '--config',
        retyped,
        '--out',
        out,
        '--table',
        table,
        '--where',
        `owner=${OWNER}`,
        ...keyFlags(),
      ])
      expect(erase.exitCode, erase.stdout + erase.stderr).toBe(0)
    }
    const erased = await icebergRows(out)
    expect(erased.rows).toEqual(await hiveRows(out))
    expect(erased.snapshots).toBe(1)
    expect(await scanForNeedles({ folders: [path.join(out, 'ice_assets')], texts: {} }, [OWNER, KEY])).toEqual([])
  }, 120_000)

  it.each([50, 250, 450, 650, 850])(
    "killed %i ms into an export and run again, leaves the rerun's table and no stray file",
    async (delayMs) => {
      const out = path.join(work, `killed-${delayMs}`)
      const config = await writeConfig(`killed-${delayMs}`)
      for (const n of [1, 2]) {
        serve(day(n))
        const result = await exportAs(config, out, dateOf(n))
        expect(result.exitCode, result.stdout + result.stderr).toBe(0)
      }
      serve(day(3))
      const args = ['export', '--config', config, '--token-file', token, '--out', out, '--date', dateOf(3)]
      const child = spawn(process.execPath, [path.join(REPO, 'functions/local/cli.mjs'), ...args], { stdio: 'ignore' })
      const exited = new Promise((resolve) => child.once('exit', resolve))
      await new Promise((resolve) => setTimeout(resolve, delayMs))
      child.kill('SIGKILL')
      await exited
      // Whatever it left, the table reads as a whole snapshot: the old one, or the new one if the commit landed.
      const between = await icebergRows(out)
      expect([2, 3]).toContain(between.snapshots)
      const rerun = await exportAs(config, out, dateOf(3))
      expect(rerun.exitCode, rerun.stdout + rerun.stderr).toBe(0)
      expect((await icebergRows(out)).rows).toEqual(await hiveRows(out))
      const store = new FolderWarehouseStore(out)
      const location = { table: 'ice_assets', key: 'ice_assets', uri: `file://${out}/ice_assets` }
      expect(await sweepUnreferenced(store, storeMetadataPointer(store), location)).toBe(0)
    },
    60_000,
  )
})
