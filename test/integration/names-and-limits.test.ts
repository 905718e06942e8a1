import { beforeAll, describe, expect, it } from 'vitest'
import type { Row } from '../../emulator/index.ts'
import { parseConfigWithoutSource } from '../../functions/export/core/config.ts'
import { runExport } from '../../functions/export/path/run.ts'
import { FolderWarehouseStore } from '../../functions/export/publish/fs.ts'
import { queryWarehouse, warehouseTableInputs } from '../../functions/local/warehouse-sql.ts'
import { tempDir } from '../support/cli.ts'
import { MemorySource } from '../support/memory-source.ts'
import { silentTelemetry } from '../support/telemetry.ts'

/** Exports the source's table `id` as `name` on `date` into `out`, as a scheduled run would, and its outcome. */
const exportOn = async (source: MemorySource, out: string, date: string, key?: string[]) => {
  const config = parseConfigWithoutSource({ tables: [{ id: 'assets', name: 'assets', ...(key ? { key } : {}) }] })
  const store = new FolderWarehouseStore(out)
  const record = await runExport(config, { source, store, telemetry: silentTelemetry }, { exportDate: date })
  return record.tables[0]!
}

/** Every name the catalog would hold: tables, views and their columns. */
const catalogNames = async (out: string) =>
  (await warehouseTableInputs(out)).flatMap((input) => [
    input.Name!,
    ...(input.StorageDescriptor?.Columns ?? []).map((c) => c.Name!),
  ])

describe('a 250-character header on a keyed table', () => {
  const header = `Notes ${'x'.repeat(244)}`
  const source = new MemorySource()
  let out: string
  const serve = (rows: Row[]) =>
    source.set('assets', { id: 'assets', title: 'Assets', columns: ['Asset', header], rows: () => rows })

  beforeAll(async () => {
    out = await tempDir()
    serve([['A', 'old']])
    expect((await exportOn(source, out, '2026-05-01', ['asset'])).error).toBeUndefined()
    serve([['A', 'new']])
    expect((await exportOn(source, out, '2026-05-02', ['asset'])).error).toBeUndefined()
  })

  it('exports and registers with every name within 255 characters, previous_<column> shortened by a hash', async () => {
    const names = await catalogNames(out)
    expect(names).toContain('assets_changes')
    expect(names.filter((name) => name.length > 255)).toEqual([])
    const previous = names.filter((name) => name.startsWith('previous_notes_'))
    expect(previous).toHaveLength(1)
    expect(previous[0]).toMatch(/^previous_notes_x+_[0-9a-f]{8}$/)
    expect(previous[0]).toHaveLength(255)
    const { rows } = await queryWarehouse(out, `SELECT change, "${previous[0]}" FROM assets_changes`)
    expect(rows).toEqual([['changed', 'old']])
  })
})

describe('a table of 2,000 columns with long names', () => {
  const headers = Array.from({ length: 1999 }, (_, i) => `Measurement ${i} ${'y'.repeat(200)}`)
  const source = new MemorySource()
  let out: string

  beforeAll(async () => {
    out = await tempDir()
    source.set('assets', {
      id: 'assets',
      title: 'Assets',
      columns: ['Asset', ...headers],
      rows: () => [['A', ...headers.map((_, i) => String(i))]],
    })
  })

  it('publishes the table without its views, and warns naming the limit', async () => {
    const first = await exportOn(source, out, '2026-05-01', ['asset'])
    expect(first.error).toBeUndefined()
    expect(first.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^the view assets_latest is not registered: its ViewOriginalText would be [\d,]+ characters, over Glue's limit of 409,600; the table itself is registered/,
        ),
      ]),
    )
    const second = await exportOn(source, out, '2026-05-02', ['asset'])
    expect((second.warnings ?? []).filter((w) => w.startsWith('the view ')).map((w) => w.split(':')[0])).toEqual([
      'the view assets_latest is not registered',
      'the view assets_changes is not registered',
    ])
    expect((await warehouseTableInputs(out)).map((input) => input.Name)).toEqual(['assets', 'assets_export_dates'])
    expect((await queryWarehouse(out, 'SELECT count(*) FROM assets')).rows).toEqual([['2']])
  })
})
