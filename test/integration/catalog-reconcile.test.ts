import os from 'node:os'
import { GetTableCommand, type TableInput } from '@aws-sdk/client-glue'
import { beforeEach, describe, expect, it } from 'vitest'
import { glueTableCatalog } from '../../functions/export/catalog/glue.ts'
import { parseConfigWithoutSource } from '../../functions/export/core/config.ts'
import { runExport } from '../../functions/export/path/run.ts'
import { FolderWarehouseStore } from '../../functions/export/publish/fs.ts'
import { queryWarehouse, warehouseTableInputs } from '../../functions/local/warehouse-sql.ts'
import { glueCatalogStandIn } from '../support/aws-mocks.ts'
import { tempDir } from '../support/cli.ts'
import { MemorySource } from '../support/memory-source.ts'
import { silentTelemetry } from '../support/telemetry.ts'

const LONG_HEADER = `Notes ${'x'.repeat(300)}`

/** The saved table's bytes, as the service would send them: the catalog is what is tested, not HTTP. */
const source = new MemorySource()
const { client, mock, tables, reset } = glueCatalogStandIn()
const catalog = glueTableCatalog(client, 'inventory', 's3://bucket/inventory')

/** Exports table 3001 (`assets`) for `date` into `out`, with `rows` as the saved table, and returns Glue's requests. */
const exportDay = async (out: string, date: string, rows: string[][] = [['1', 'alpha']]) => {
  source.set('3001', { id: '3001', title: 'Assets', columns: ['Asset ID', 'Hostname'], rows: () => rows })
  mock.resetHistory()
  const config = parseConfigWithoutSource({ tables: [{ id: '3001', name: 'assets' }] })
  const record = await runExport(
    config,
    {
      source,
      store: new FolderWarehouseStore(out),
      telemetry: silentTelemetry,
      spoolDirectory: os.tmpdir(),
      catalog,
    },
    { exportDate: date },
  )
  expect(record.tables.map((t) => t.error)).toEqual([undefined])
  return mock.calls().map((call) => {
    const input = call.args[0].input as { Name?: string; TableInput?: TableInput }
    return `${call.args[0].constructor.name.replace('Command', '')} ${input.Name ?? input.TableInput?.Name}`
  })
}

const glueTable = (name: string) => tables.get(`inventory.${name}`)!
const latestSql = () => {
  const text = glueTable('assets_latest').ViewOriginalText!
  return JSON.parse(Buffer.from(/Presto View: (\S+)/.exec(text)![1]!, 'base64').toString()).originalSql as string
}

beforeEach(() => reset())

describe('catalog reconciliation', () => {
  it('recreates a deleted Glue table and view on the next run, and an unchanged catalog costs two reads', async () => {
    const out = await tempDir()
    await exportDay(out, '2026-04-01')
    expect(await exportDay(out, '2026-04-01')).toEqual(['GetTable assets', 'GetTable assets_latest'])
    tables.clear()
    expect(await exportDay(out, '2026-04-01')).toEqual([
      'GetTable assets',
      'CreateTable assets',
      'GetTable assets_latest',
      'CreateTable assets_latest',
    ])
    expect(mock.commandCalls(GetTableCommand)[0]!.args[0].input).toEqual({ DatabaseName: 'inventory', Name: 'assets' })
  })

  it('moves the projection range back for a backfill, and the backfilled day answers queries', async () => {
    const out = await tempDir()
    await exportDay(out, '2026-04-05', [['1', 'alpha']])
    const before = structuredClone(glueTable('assets'))
    expect(await exportDay(out, '2026-04-02', [['9', 'old']])).toEqual([
      'GetTable assets',
      'UpdateTable assets',
      'GetTable assets_latest',
    ])
    expect(glueTable('assets').Parameters?.['projection.dt.range']).toBe('2026-04-02,NOW')
    const now = new Date('2026-04-06T12:00:00Z')
    const query = 'SELECT dt, asset_id FROM assets ORDER BY dt'
    expect((await queryWarehouse(out, query, { now })).rows).toEqual([
      ['2026-04-02', '9'],
      ['2026-04-05', '1'],
    ])
    // Through the definition Glue held before the run, the day is outside the range: invisible, as in Athena.
    const stale = (await warehouseTableInputs(out)).map((input) =>
      input.Name === 'assets'
        ? {
            ...input,
            Parameters: { ...input.Parameters, 'projection.dt.range': before.Parameters!['projection.dt.range']! },
          }
        : input,
    )
    expect((await queryWarehouse(out, query, { now, inputs: stale })).rows).toEqual([['2026-04-05', '1']])
  })

  it('names the newest date in the latest view, moving forward with a newer export and never back', async () => {
    const out = await tempDir()
    await exportDay(out, '2026-04-05')
    expect(latestSql()).toMatch(/ WHERE dt = '2026-04-05'$/)
    expect(await exportDay(out, '2026-04-07')).toEqual([
      'GetTable assets',
      'GetTable assets_latest',
      'UpdateTable assets_latest',
    ])
    expect(latestSql()).toMatch(/ WHERE dt = '2026-04-07'$/)
    await exportDay(out, '2026-04-06')
    expect(latestSql()).toMatch(/ WHERE dt = '2026-04-07'$/)
    const now = new Date('2026-04-08T00:00:00Z')
    expect((await queryWarehouse(out, 'SELECT DISTINCT dt FROM assets_latest', { now })).rows).toEqual([['2026-04-07']])
  })

  it('updates the table before the view when a column arrives with a newer date', async () => {
    const out = await tempDir()
    await exportDay(out, '2026-04-05')
    source.set('3001', {
      id: '3001',
      title: 'Assets',
      columns: ['Asset ID', 'Hostname', 'Owner'],
      rows: () => [['1', 'a', 'Ana']],
    })
    mock.resetHistory()
    const config = parseConfigWithoutSource({ tables: [{ id: '3001', name: 'assets' }] })
    await runExport(
      config,
      {
        source,
        store: new FolderWarehouseStore(out),
        telemetry: silentTelemetry,
        spoolDirectory: os.tmpdir(),
        catalog,
      },
      { exportDate: '2026-04-06' },
    )
    const writes = mock
      .calls()
      .map((c) => c.args[0].constructor.name)
      .filter((n) => n !== 'GetTableCommand')
    expect(writes).toEqual(['UpdateTableCommand', 'UpdateTableCommand'])
    expect(
      mock
        .calls()
        .filter((c) => c.args[0].constructor.name === 'UpdateTableCommand')
        .map((c) => (c.args[0].input as { TableInput: TableInput }).TableInput.Name),
    ).toEqual(['assets', 'assets_latest'])
  })

  it('lands headers DT, dt, a quoted line break and a 300-character header in a table Glue accepts', async () => {
    const out = await tempDir()
    source.set('3001', {
      id: '3001',
      title: 'Assets',
      columns: ['DT', 'dt', 'Purchase\nDate', LONG_HEADER],
      rows: () => [['a', 'b', '2024-01-01', 'n']],
    })
    const config = parseConfigWithoutSource({ tables: [{ id: '3001', name: 'assets' }] })
    const record = await runExport(
      config,
      {
        source,
        store: new FolderWarehouseStore(out),
        telemetry: silentTelemetry,
        spoolDirectory: os.tmpdir(),
        catalog,
      },
      { exportDate: '2026-04-05' },
    )
    expect(record.tables.map((t) => t.error)).toEqual([undefined])
    const columns = glueTable('assets').StorageDescriptor!.Columns!.slice(0, 4)
    expect(
      columns.map((c) => [
        c.Name!.length > 60 ? `${c.Name!.slice(0, 12)}…(${c.Name!.length})` : c.Name,
        c.Comment?.length,
      ]),
    ).toEqual([
      ['dt_2', 2],
      ['dt_3', 2],
      ['purchase_date', 13],
      ['notes_xxxxxx…(255)', 255],
    ])
    expect(columns[2]!.Comment).toBe('Purchase Date')
    expect(glueTable('assets').PartitionKeys!.map((k) => k.Name)).toEqual(['dt'])
    const now = new Date('2026-04-05T10:00:00Z')
    expect((await queryWarehouse(out, 'SELECT dt_2, dt_3, dt FROM assets_latest', { now })).rows).toEqual([
      ['a', 'b', '2026-04-05'],
    ])
  })
})
