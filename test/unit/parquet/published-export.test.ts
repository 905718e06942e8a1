import { rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { parquetWriteBuffer } from 'hyparquet-writer'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PSEUDONYMIZED_METADATA_KEY } from '../../../functions/export/core/constants.ts'
import { EXPORT_COLUMNS_METADATA_KEY, readPublishedExport } from '../../../functions/export/parquet/published-export.ts'
import { FolderWarehouseStore } from '../../../functions/export/publish/fs.ts'
import { tempDir } from '../../support/cli.ts'

let root: string
let store: FolderWarehouseStore
beforeAll(async () => {
  root = await tempDir('published-export-')
  store = new FolderWarehouseStore(root)
})
afterAll(() => rm(root, { recursive: true, force: true }))

const parquet = (rows: number, kvMetadata: { key: string; value: string }[] = []) =>
  new Uint8Array(
    parquetWriteBuffer({
      columnData: [{ name: 'a', data: Array.from({ length: rows }, (_, i) => `v${i}`), type: 'STRING' }],
      kvMetadata,
    }),
  )
const put = async (key: string, bytes: Uint8Array) => {
  await store.putObject(key, bytes)
  return key
}

describe("a published object's export, read from its footer", () => {
  it('gives the row count, the size, the columns with their headers and types, and the pseudonymized ones', async () => {
    const columns = [{ name: 'asset_id', header: 'Asset ID' }]
    const key = await put(
      't/dt=2026-11-20/data.parquet',
      parquet(3, [
        { key: EXPORT_COLUMNS_METADATA_KEY, value: JSON.stringify(columns) },
        { key: 'inventory.export_run_id', value: 'run-1' },
        { key: PSEUDONYMIZED_METADATA_KEY, value: '["a"]' },
      ]),
    )
    const bytes = (await store.readTail(key, 8))!.size
    expect(await readPublishedExport(store, key)).toEqual({
      rows: 3,
      bytes,
      columns,
      fields: [{ name: 'a', type: 'string' }],
      pseudonymized: ['a'],
    })
  })

  it('gives the row count alone for an object written before the footer recorded the columns', async () => {
    const key = await put('t/dt=2026-11-21/data.parquet', parquet(5))
    const published = await readPublishedExport(store, key)
    expect(published).toMatchObject({ rows: 5, fields: [{ name: 'a', type: 'string' }] })
    expect(published).not.toHaveProperty('columns')
    expect(published).not.toHaveProperty('pseudonymized')
  })

  it('reads a footer larger than the first read with a second one', async () => {
    const columns = Array.from({ length: 6000 }, (_, i) => ({ name: `column_${i}`, header: `Column number ${i}` }))
    const key = await put(
      't/dt=2026-11-22/data.parquet',
      parquet(2, [{ key: EXPORT_COLUMNS_METADATA_KEY, value: JSON.stringify(columns) }]),
    )
    expect(JSON.stringify(columns).length).toBeGreaterThan(256 * 1024)
    expect(await readPublishedExport(store, key)).toMatchObject({ rows: 2, columns })
  })

  it('gives nothing for a missing object or one whose footer is broken, so its re-export heals it', async () => {
    expect(await readPublishedExport(store, 't/dt=2026-11-23/data.parquet')).toBeUndefined()
    const cut = parquet(4)
    await writeFile(path.join(root, await put('t/dt=2026-11-24/data.parquet', cut)), cut.subarray(0, cut.length - 3))
    expect(await readPublishedExport(store, 't/dt=2026-11-24/data.parquet')).toBeUndefined()
    const garbled = Buffer.from(parquet(4))
    garbled.fill(0xff, garbled.length - 40, garbled.length - 8)
    await put('t/dt=2026-11-25/data.parquet', garbled)
    expect(await readPublishedExport(store, 't/dt=2026-11-25/data.parquet')).toBeUndefined()
  })
})
