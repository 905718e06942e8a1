/**
 * Two runs for different dates at once cannot lose a schema change: the slower run read the registry before the
 * faster one added a column, and still leaves the column registered, because the registry is written by a
 * read-merge-write under a conditional write (a lock file for a folder; If-Match on the ETag for S3).
 */
import os from 'node:os'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, type RunningEmulator, type SavedTable, startInventoryEmulator } from '../../emulator/index.ts'
import { parseExportConfig } from '../../functions/export/core/config.ts'
import { runExport } from '../../functions/export/path/run.ts'
import { FolderWarehouseStore } from '../../functions/export/publish/fs.ts'
import { S3WarehouseStore } from '../../functions/export/publish/s3.ts'
import type { WarehouseStore } from '../../functions/export/publish/store.ts'
import { readTableSchema } from '../../functions/export/schema/registry.ts'
import { serviceSource as createServiceSource } from '../../functions/export/source/service-source.ts'
import { tempDir } from '../support/cli.ts'
import { type RunningS3, startS3 } from '../support/s3rver.ts'
import { silentTelemetry } from '../support/telemetry.ts'

const TABLE_ID = '2001'
/** Over a MiB, so that the slow run's header is parsed (and the registry read) before its body stalls. */
const ROWS = 40_000

const assets = (withOwner: boolean): SavedTable => ({
  id: TABLE_ID,
  title: 'Assets',
  columns: withOwner ? ['Asset Tag', 'Model', 'Owner'] : ['Asset Tag', 'Model'],
  rows: function* () {
    for (let i = 1; i <= ROWS; i++) {
      const tag = `A-${String(i).padStart(6, '0')}`
      yield withOwner ? [tag, `Model ${i % 7}`, `Owner ${i % 5}`] : [tag, `Model ${i % 7}`]
    }
  },
})

let emulator: RunningEmulator
let s3: RunningS3
beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: [assets(false)] })
  s3 = await startS3()
})
afterAll(async () => {
  await emulator.close()
  await s3.close()
})

const STORES: Record<string, () => Promise<WarehouseStore>> = {
  'a folder warehouse (lock file)': async () => new FolderWarehouseStore(await tempDir('concurrent-registry-')),
  'an S3 warehouse (If-Match, refused by the stand-in as S3 does)': async () =>
    new S3WarehouseStore(s3.client, s3.bucket, `concurrent-${Date.now()}`),
}

const config = () =>
  parseExportConfig({
    source: { baseUrl: emulator.baseUrl },
    tables: [{ id: TABLE_ID, name: 'assets' }],
    export: { timeouts: { idleSeconds: 30 } },
  })
const serviceSource = () => {
  const { source, export: tuning } = config()
  return createServiceSource({ source, token: DEMO_TOKEN, tuning })
}

const exportDate = (store: WarehouseStore, date: string) =>
  runExport(
    config(),
    { source: serviceSource(), store, telemetry: silentTelemetry, spoolDirectory: os.tmpdir() },
    { exportDate: date },
  )

const until = async (condition: () => boolean): Promise<void> => {
  for (const started = Date.now(); !condition(); await new Promise((resolve) => setTimeout(resolve, 20))) {
    if (Date.now() - started > 30_000) throw new Error('timed out waiting for a condition')
  }
}

describe('two runs for different dates at once', () => {
  it.each(Object.keys(STORES))(
    'keep the column the faster run added, in %s',
    async (kind) => {
      const store = await STORES[kind]!()
      emulator.setTable(assets(false))
      const first = await exportDate(store, '2026-03-01')
      expect(first.status, JSON.stringify(first.tables)).toBe('succeeded')

      // The slow run stalls mid-body after its header (and its read of the registry) for a few seconds.
      emulator.faults.script(TABLE_ID, [{ kind: 'stall', afterBytes: 1_200_000, ms: 4000 }])
      const since = emulator.requests.length
      const slow = exportDate(store, '2026-03-02')
      await until(() => emulator.requests.slice(since).some((r) => r.path === `/rest/tables/${TABLE_ID}/csv`))
      await new Promise((resolve) => setTimeout(resolve, 1000))
      emulator.setTable(assets(true))
      const fast = await exportDate(store, '2026-03-03')
      expect(fast.status, JSON.stringify(fast.tables)).toBe('succeeded')
      expect((await readTableSchema(store, 'assets'))?.columns.map((c) => c.name)).toContain('owner')

      const slowRecord = await slow
      expect(slowRecord.status, JSON.stringify(slowRecord.tables)).toBe('succeeded')
      const schema = await readTableSchema(store, 'assets')
      expect(schema?.columns.map((c) => c.name)).toEqual(['asset_tag', 'model', 'owner'])
      expect(schema).toMatchObject({ firstExportDate: '2026-03-01', lastExportDate: '2026-03-03' })
    },
    120_000,
  )
})
