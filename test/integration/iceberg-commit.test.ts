/**
 * Iceberg snapshots over the exporter's own Parquet objects, read back by an independent reader (icebird, over
 * HTTP as from S3). Dates are exported by the real CLI against the stand-in, with a column added on the way and a
 * date exported again; each export of a date is then committed as one snapshot, and every snapshot must read as
 * the Hive layout's dates up to it, row for row and value for value.
 */
import { copyFile, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import path from 'node:path'
import { icebergRead } from 'icebird'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, type Row, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { WriteConflictError } from '../../functions/export/core/errors.ts'
import { LINEAGE_COLUMNS } from '../../functions/export/core/lineage.ts'
import { ManifestEntryStatus } from '../../functions/export/iceberg/manifests.ts'
import type { MetadataPointer } from '../../functions/export/iceberg/metadata-pointer.ts'
import {
  commitPartition,
  type IcebergTableLocation,
  readCurrentMetadata,
  readManifest,
  readManifestList,
} from '../../functions/export/iceberg/snapshot-commit.ts'
import { expireSnapshots } from '../../functions/export/iceberg/snapshot-expiry.ts'
import { storeMetadataPointer } from '../../functions/export/iceberg/store-pointer.ts'
import type { TableMetadata } from '../../functions/export/iceberg/table-metadata.ts'
import { FolderWarehouseStore } from '../../functions/export/publish/fs.ts'
import { readTableSchema } from '../../functions/export/schema/registry.ts'
import { runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'
import { readWithHyparquet } from '../support/hyparquet-read.ts'

let emulator: RunningEmulator
let work: string
let token: string
let server: Server
let baseUrl: string

const COLUMNS = ['Asset Tag', 'Owner', 'Purchased']
const day = (n: number, extra = false): { columns: string[]; rows: Row[] } => ({
  columns: extra ? [...COLUMNS, 'Cost'] : COLUMNS,
  rows: Array.from({ length: 3 + n }, (_, i) => {
    const row: Row = [`A-${n}-${i}`, `owner ${i}`, `2026-0${1 + (i % 9)}-1${i % 10}`]
    return extra ? [...row, String(100 + i)] : row
  }),
})

/** icebird's types want mutable arrays; the document is the same. */
const forIcebird = (metadata: TableMetadata) =>
  metadata as unknown as NonNullable<Parameters<typeof icebergRead>[0]['metadata']>

/** Serves `root` with byte ranges, as S3 answers the readers. */
const serve = (root: string): Promise<Server> =>
  new Promise((resolve) => {
    const http = createServer(async (request, response) => {
      try {
        const body = await readFile(path.join(root, decodeURIComponent(new URL(request.url!, 'http://x').pathname)))
        const range = /bytes=(\d+)-(\d*)/.exec(request.headers.range ?? '')
        if (range) {
          const end = range[2] ? Number(range[2]) : body.length - 1
          response.writeHead(206, { 'content-range': `bytes ${range[1]}-${end}/${body.length}` })
          response.end(body.subarray(Number(range[1]), end + 1))
        } else response.writeHead(200, { 'content-length': body.length }).end(request.method === 'HEAD' ? '' : body)
      } catch {
        response.writeHead(404).end()
      }
    })
    http.listen(0, '127.0.0.1', () => resolve(http))
  })

beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: [] })
  work = await tempDir('iceberg-commit-')
  token = await tokenFile(DEMO_TOKEN)
  server = await serve(work)
  const address = server.address()
  baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
})
afterAll(async () => {
  await emulator.close()
  await new Promise((resolve) => server.close(resolve))
  await rm(work, { recursive: true, force: true })
  await rm(path.dirname(token), { recursive: true, force: true })
})

/** Exports one date with the stand-in showing `shape`, then gives its object a name of its own, as Iceberg needs. */
const exportDate = async (out: string, date: string, shape: ReturnType<typeof day>, copy: number) => {
  emulator.setTable({ id: '4001', title: 'Assets', columns: shape.columns, rows: () => shape.rows })
  const config = path.join(work, 'config.json')
  await writeFile(
    config,
    JSON.stringify({ source: { baseUrl: emulator.baseUrl }, tables: [{ id: '4001', name: 'assets' }] }),
  )
  const result = await runExportInProcess(['--config', config, '--token-file', token, '--out', out, '--date', date])
  expect(result.exitCode, result.stdout + result.stderr).toBe(0)
  const key = `assets/data/dt=${date}/${copy}.parquet`
  await mkdir(path.join(out, path.dirname(key)), { recursive: true })
  await copyFile(path.join(out, `assets/dt=${date}/data.parquet`), path.join(out, key))
  return key
}

/**
 * A row's values as text, without `dt`: icebird looks an identity partition's value up by the partition field's
 * id rather than its name, so it reads none; the manifests' partition values are checked on their own.
 */
/** Files under the table's metadata/ that neither the current metadata file nor one in its log reaches. */
const unreferenced = async (store: FolderWarehouseStore, location: IcebergTableLocation, out: string) => {
  const current = (await storeMetadataPointer(store).read(location.table))!
  const readDocument = async (name: string) =>
    JSON.parse(await readFile(path.join(out, location.key, 'metadata', name), 'utf8')) as TableMetadata
  const latest = await readDocument(current.metadataKey.split('/').at(-1)!)
  const referenced = new Set<string>()
  for (const entry of [{ 'metadata-file': current.metadataKey }, ...latest['metadata-log']]) {
    const name = entry['metadata-file'].split('/').at(-1)!
    referenced.add(name)
    const document = await readDocument(name)
    // Snapshots expired since this document was current have no files left: the current one names what stays.
    for (const snapshot of document.snapshots.filter((s) =>
      latest.snapshots.some((k) => k['snapshot-id'] === s['snapshot-id']),
    )) {
      referenced.add(snapshot['manifest-list'].split('/').at(-1)!)
      const asOf = { ...document, 'current-snapshot-id': snapshot['snapshot-id'] }
      for (const m of await readManifestList(store, location, asOf)) referenced.add(m.manifest_path.split('/').at(-1)!)
    }
  }
  return (await readdir(path.join(out, location.key, 'metadata'))).filter((name) => !referenced.has(name))
}

const plain = (row: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(row)
      .filter(([name, value]) => name !== 'dt' && value !== undefined && value !== null)
      .map(([name, value]) => [name, value instanceof Date ? value.toISOString() : String(value)]),
  )
/** Asset tags are unique across the fixture's dates, so they order the rows of every snapshot. */
const byTagAndDate = (a: Record<string, string>, b: Record<string, string>) =>
  `${a.asset_tag}`.localeCompare(`${b.asset_tag}`)

describe('an Iceberg table over the exported dates', () => {
  it('reads, snapshot by snapshot, as the dates exported up to it; a date exported again replaces its files', async () => {
    const out = path.join(work, 'warehouse')
    const store = new FolderWarehouseStore(out)
    const pointer = storeMetadataPointer(store)
    const location: IcebergTableLocation = { table: 'assets', key: 'assets', uri: `${baseUrl}/warehouse/assets` }
    const exports = [
      { date: '2026-11-01', shape: day(1) },
      { date: '2026-11-02', shape: day(2) },
      { date: '2026-11-03', shape: day(3, true) },
      { date: '2026-11-02', shape: day(4, true) },
    ]
    /** What each snapshot must read as: the rows of each date's latest export up to it. */
    const expected: Record<string, string>[][] = []
    const current = new Map<string, Record<string, string>[]>()
    for (const [copy, { date, shape }] of exports.entries()) {
      const key = await exportDate(out, date, shape, copy)
      const bytes = await readFile(path.join(out, key))
      const registry = (await readTableSchema(store, 'assets'))!
      const columns = [...registry.columns.map(({ name, type }) => ({ name, type })), ...LINEAGE_COLUMNS]
      const file = { file_path: `${location.uri}${key.slice('assets'.length)}`, record_count: shape.rows.length }
      await commitPartition(store, pointer, location, {
        exportDate: date,
        files: [{ ...file, file_size_in_bytes: (await stat(path.join(out, key))).size, dt: date }],
        columns,
      })
      current.set(date, (await readWithHyparquet(bytes)).map(plain))
      expected.push([...current.values()].flat().sort(byTagAndDate))
    }
    const latest = (await pointer.read('assets'))!
    const metadata = JSON.parse(await readFile(path.join(out, latest.metadataKey), 'utf8')) as TableMetadata
    expect(metadata.snapshots.map((s) => s.summary.operation)).toEqual(['append', 'append', 'append', 'overwrite'])
    expect(metadata.schemas.map((s) => s.fields.map((f) => f.name).includes('cost'))).toEqual([false, true])
    for (const [i, snapshot] of metadata.snapshots.entries()) {
      const asOf = { ...metadata, 'current-snapshot-id': snapshot['snapshot-id'] }
      const rows = (await icebergRead({ tableUrl: location.uri, metadata: forIcebird(asOf) }))
        .map(plain)
        .sort(byTagAndDate)
      expect(rows, `snapshot ${i + 1}`).toEqual(expected[i])
    }
    expect(expected.at(-1)?.map((row) => row.asset_tag)).toEqual(
      [...day(1).rows, ...day(4, true).rows, ...day(3, true).rows].map((row) => row[0]).sort(),
    )
    // One manifest per date: the replaced date's old file is listed once, as DELETED, by the snapshot that removed it.
    const manifests = await readManifestList(store, location, metadata)
    const entries = await Promise.all(manifests.map((m) => readManifest(store, location, m)))
    expect(entries.map((files) => files.map((e) => [e.status, e.file.dt, e.file.file_path.split('/').at(-1)]))).toEqual(
      [
        [[ManifestEntryStatus.ADDED, '2026-11-02', '3.parquet']],
        [[ManifestEntryStatus.DELETED, '2026-11-02', '1.parquet']],
        [[ManifestEntryStatus.ADDED, '2026-11-03', '2.parquet']],
        [[ManifestEntryStatus.ADDED, '2026-11-01', '0.parquet']],
      ],
    )

    // Expiring every snapshot but the current one removes the replaced file, and what only the others listed.
    expect(await expireSnapshots(store, pointer, location, { olderThanMs: Date.now() + 1 })).toEqual({
      snapshots: 3,
      dataFiles: 1,
    })
    const expired = await readCurrentMetadata(store, pointer, location)
    expect(expired?.metadata.snapshots.map((s) => s['snapshot-id'])).toEqual([metadata['current-snapshot-id']])
    const rows = (await icebergRead({ tableUrl: location.uri, metadata: forIcebird(expired!.metadata) })).map(plain)
    expect(rows.sort(byTagAndDate)).toEqual(expected.at(-1))
    const dataFiles = await readdir(path.join(out, 'assets/data'), { recursive: true })
    expect(dataFiles.filter((f) => f.endsWith('.parquet')).sort()).toEqual([
      'dt=2026-11-01/0.parquet',
      'dt=2026-11-02/3.parquet',
      'dt=2026-11-03/2.parquet',
    ])
    expect(await unreferenced(store, location, out)).toEqual([])
    expect(await expireSnapshots(store, pointer, location, { olderThanMs: Date.now() + 1 })).toEqual({
      snapshots: 0,
      dataFiles: 0,
    })
  })

  it('lands two dates committed at once, and leaves no file of a lost attempt', async () => {
    const out = path.join(work, 'race')
    const store = new FolderWarehouseStore(out)
    const inner = storeMetadataPointer(store)
    let losses = 0
    // Both writers read the same (empty) state before either swaps: one of them must lose and retry.
    const pointer: MetadataPointer = {
      read: inner.read,
      async swap(table, key, version) {
        await new Promise((resolve) => setTimeout(resolve, 20))
        try {
          await inner.swap(table, key, version)
        } catch (error) {
          if (error instanceof WriteConflictError) losses++
          throw error
        }
      },
    }
    const location: IcebergTableLocation = { table: 'assets', key: 'assets', uri: `${baseUrl}/race/assets` }
    const dates = ['2026-11-05', '2026-11-06']
    const keys: string[] = []
    for (const [copy, date] of dates.entries()) keys.push(await exportDate(out, date, day(copy), copy))
    const columns = [
      ...(await readTableSchema(store, 'assets'))!.columns.map(({ name, type }) => ({ name, type })),
      ...LINEAGE_COLUMNS,
    ]
    await Promise.all(
      dates.map(async (date, i) =>
        commitPartition(store, pointer, location, {
          exportDate: date,
          files: [
            {
              file_path: `${location.uri}${keys[i]!.slice('assets'.length)}`,
              record_count: day(i).rows.length,
              file_size_in_bytes: (await stat(path.join(out, keys[i]!))).size,
              dt: date,
            },
          ],
          columns,
        }),
      ),
    )
    expect(losses).toBe(1)
    const latest = (await pointer.read('assets'))!
    const metadata = JSON.parse(await readFile(path.join(out, latest.metadataKey), 'utf8')) as TableMetadata
    const rows = await icebergRead({ tableUrl: location.uri, metadata: forIcebird(metadata) })
    expect(rows.map((row) => row.asset_tag).sort()).toEqual([...day(0).rows, ...day(1).rows].map((row) => row[0]))
    // Every file under metadata/ is one a metadata file still names (the first commit's is in the log).
    expect(await unreferenced(store, location, out)).toEqual([])
  })
})
