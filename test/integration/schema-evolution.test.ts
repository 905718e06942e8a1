import os from 'node:os'
import { beforeAll, describe, expect, it } from 'vitest'
import type { GeneratedTable } from '../../emulator/index.ts'
import { glueTableCatalog } from '../../functions/export/catalog/glue.ts'
import { parseConfigWithoutSource } from '../../functions/export/core/config.ts'
import { runExport } from '../../functions/export/path/run.ts'
import { FolderWarehouseStore } from '../../functions/export/publish/fs.ts'
import { readTableSchema } from '../../functions/export/schema/registry.ts'
import { queryWarehouse } from '../../functions/local/warehouse-sql.ts'
import { glueCatalogStandIn } from '../support/aws-mocks.ts'
import { tempDir } from '../support/cli.ts'
import { MemorySource } from '../support/memory-source.ts'
import { silentTelemetry } from '../support/telemetry.ts'

const assets = (columns: string[], rows: (string | null)[][]): GeneratedTable => ({
  id: '2001',
  title: 'Assets',
  columns,
  rows: () => rows,
})

/** The saved table as an administrator changes it, day by day. */
const DAYS: { date: string; table: GeneratedTable }[] = [
  {
    date: '2026-03-01',
    table: assets(
      ['Asset ID', 'Hostname', 'RAM (GB)', 'Location'],
      [
        ['001', 'alpha', '8', 'Zürich'],
        ['002', 'beta', '16', 'Kraków'],
      ],
    ),
  },
  {
    // a column added; the numeric column receives text
    date: '2026-03-02',
    table: assets(
      ['Asset ID', 'Hostname', 'RAM (GB)', 'Location', 'Owner'],
      [
        ['001', 'alpha', '8', 'Zürich', 'Ana'],
        ['002', 'beta', '16 GB', 'Kraków', 'Bo'],
      ],
    ),
  },
  {
    // the same shape again: nothing for the catalog to do
    date: '2026-03-03',
    table: assets(
      ['Asset ID', 'Hostname', 'RAM (GB)', 'Location', 'Owner'],
      [
        ['001', 'alpha', '8', 'Zürich', 'Ana'],
        ['002', 'beta', '32', 'Kraków', 'Bo'],
      ],
    ),
  },
  {
    // a column removed; a header renamed
    date: '2026-03-04',
    table: assets(
      ['Asset ID', 'Host Name', 'RAM (GB)', 'Owner'],
      [
        ['001', 'alpha-2', '8', 'Ana'],
        ['003', 'gamma', '64', 'Cy'],
      ],
    ),
  },
]

let out: string
const { client: glueClient, mock: glue } = glueCatalogStandIn()
const glueCallsPerDay: { date: string; inputs: unknown[] }[] = []

beforeAll(async () => {
  out = await tempDir()
  // The saved table's bytes as the service would send them, day by day: no HTTP is under test here.
  const source = new MemorySource()
  const config = parseConfigWithoutSource({ tables: [{ id: '2001', name: 'assets' }] })
  const store = new FolderWarehouseStore(out)
  const catalog = glueTableCatalog(glueClient, 'inventory', 's3://bucket/inventory')
  for (const day of DAYS) {
    source.set('2001', day.table)
    glue.resetHistory()
    const record = await runExport(
      config,
      { source, store, telemetry: silentTelemetry, spoolDirectory: os.tmpdir(), catalog },
      { exportDate: day.date },
    )
    expect(record.tables.map((t) => t.error)).toEqual([undefined])
    glueCallsPerDay.push({
      date: day.date,
      inputs: glue.calls().map((call) => [call.args[0].constructor.name, call.args[0].input]),
    })
  }
})

const sql = async (query: string) => (await queryWarehouse(out, query)).rows

describe('schema evolution', () => {
  it('keeps every row of every date readable with one query, with the values each day had', async () => {
    const rows = await sql(
      'SELECT dt, asset_id, hostname, host_name, ram_gb, ram_gb__text, location, owner FROM assets ORDER BY dt, _source_row_number',
    )
    expect(rows).toEqual([
      ['2026-03-01', '001', 'alpha', null, '8', null, 'Zürich', null],
      ['2026-03-01', '002', 'beta', null, '16', null, 'Kraków', null],
      ['2026-03-02', '001', 'alpha', null, '8', null, 'Zürich', 'Ana'],
      ['2026-03-02', '002', 'beta', null, null, '16 GB', 'Kraków', 'Bo'],
      ['2026-03-03', '001', 'alpha', null, '8', null, 'Zürich', 'Ana'],
      ['2026-03-03', '002', 'beta', null, '32', null, 'Kraków', 'Bo'],
      ['2026-03-04', '001', null, 'alpha-2', '8', null, null, 'Ana'],
      ['2026-03-04', '003', null, 'gamma', '64', null, null, 'Cy'],
    ])
  })

  it('keeps a published type for good: the numeric column stays BIGINT in every file', async () => {
    const types = await sql("SELECT DISTINCT typeof(ram_gb), typeof(ram_gb__text) FROM assets WHERE dt >= '2026-03-01'")
    expect(types).toEqual([['BIGINT', 'VARCHAR']])
  })

  it('shows only the most recent export date in the latest view', async () => {
    expect(await sql('SELECT DISTINCT dt FROM assets_latest')).toEqual([['2026-03-04']])
    expect(await sql('SELECT count(*) FROM assets_latest')).toEqual([['2']])
  })

  it('records every column with its original header, type and the dates it was seen', async () => {
    const schema = await readTableSchema(new FolderWarehouseStore(out), 'assets')
    expect(schema?.columns.map((c) => [c.name, c.header, c.type, c.textOf, c.firstSeen, c.lastSeen])).toEqual([
      ['asset_id', 'Asset ID', 'string', undefined, '2026-03-01', '2026-03-04'],
      ['hostname', 'Hostname', 'string', undefined, '2026-03-01', '2026-03-03'],
      ['ram_gb', 'RAM (GB)', 'bigint', undefined, '2026-03-01', '2026-03-04'],
      ['location', 'Location', 'string', undefined, '2026-03-01', '2026-03-03'],
      ['ram_gb__text', undefined, 'string', 'ram_gb', '2026-03-02', '2026-03-02'],
      ['owner', 'Owner', 'string', undefined, '2026-03-02', '2026-03-04'],
      ['host_name', 'Host Name', 'string', undefined, '2026-03-04', '2026-03-04'],
    ])
    expect([schema?.firstExportDate, schema?.lastExportDate]).toEqual(['2026-03-01', '2026-03-04'])
  })

  it('reads the table and view every run and writes only what differs: a new date moves just the view', () => {
    expect(glueCallsPerDay.map((d) => [d.date, d.inputs.map((i) => (i as [string])[0])])).toEqual([
      ['2026-03-01', ['GetTableCommand', 'CreateTableCommand', 'GetTableCommand', 'CreateTableCommand']],
      ['2026-03-02', ['GetTableCommand', 'UpdateTableCommand', 'GetTableCommand', 'UpdateTableCommand']],
      ['2026-03-03', ['GetTableCommand', 'GetTableCommand', 'UpdateTableCommand']],
      ['2026-03-04', ['GetTableCommand', 'UpdateTableCommand', 'GetTableCommand', 'UpdateTableCommand']],
    ])
  })

  it('sends the exact Glue table input at every step', () => {
    const tableInput = (day: number) =>
      (glueCallsPerDay[day]!.inputs[1] as [string, { TableInput: unknown }])[1].TableInput
    expect(tableInput(0)).toEqual({
      Name: 'assets',
      TableType: 'EXTERNAL_TABLE',
      Parameters: {
        classification: 'parquet',
        EXTERNAL: 'TRUE',
        'projection.enabled': 'true',
        'projection.dt.type': 'date',
        'projection.dt.format': 'yyyy-MM-dd',
        'projection.dt.range': '2026-03-01,NOW',
        'projection.dt.interval': '1',
        'projection.dt.interval.unit': 'DAYS',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: Athena's location template is literally ${dt}
        'storage.location.template': 's3://bucket/inventory/assets/dt=${dt}/',
        'inventory.source_table_id': '2001',
      },
      PartitionKeys: [{ Name: 'dt', Type: 'string', Comment: 'export date (YYYY-MM-DD)' }],
      StorageDescriptor: {
        Columns: [
          { Name: 'asset_id', Type: 'string', Comment: 'Asset ID' },
          { Name: 'hostname', Type: 'string', Comment: 'Hostname' },
          { Name: 'ram_gb', Type: 'bigint', Comment: 'RAM (GB)' },
          { Name: 'location', Type: 'string', Comment: 'Location' },
          ...LINEAGE,
        ],
        Location: 's3://bucket/inventory/assets/',
        InputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat',
        OutputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat',
        SerdeInfo: {
          SerializationLibrary: 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe',
          Parameters: { 'serialization.format': '1' },
        },
      },
    })
    const columnsOf = (day: number) =>
      (tableInput(day) as { StorageDescriptor: { Columns: { Name: string; Type: string; Comment?: string }[] } })
        .StorageDescriptor.Columns
    expect(columnsOf(1).slice(0, 6)).toEqual([
      { Name: 'asset_id', Type: 'string', Comment: 'Asset ID' },
      { Name: 'hostname', Type: 'string', Comment: 'Hostname' },
      { Name: 'ram_gb', Type: 'bigint', Comment: 'RAM (GB)' },
      { Name: 'location', Type: 'string', Comment: 'Location' },
      { Name: 'ram_gb__text', Type: 'string', Comment: 'text of values of ram_gb that do not fit its type' },
      { Name: 'owner', Type: 'string', Comment: 'Owner' },
    ])
    expect(
      columnsOf(3)
        .map((c) => c.Name)
        .slice(0, 7),
    ).toEqual(['asset_id', 'hostname', 'ram_gb', 'location', 'ram_gb__text', 'owner', 'host_name'])
  })

  it('defines the latest view as an Athena view over the table', () => {
    const view = (
      glueCallsPerDay[0]!.inputs[3] as [
        string,
        { TableInput: { Name: string; TableType: string; ViewOriginalText: string } },
      ]
    )[1].TableInput
    expect([view.Name, view.TableType]).toEqual(['assets_latest', 'VIRTUAL_VIEW'])
    const encoded = /^\/\* Presto View: (.+) \*\/$/.exec(view.ViewOriginalText)?.[1]
    const presto = JSON.parse(Buffer.from(encoded!, 'base64').toString('utf8'))
    expect(presto.originalSql).toBe(
      'SELECT "asset_id", "hostname", "ram_gb", "location", "_export_run_id", "_exported_at", "_source_table_id", ' +
        `"_source_row_number", "_row_fingerprint", "dt" FROM "inventory"."assets" WHERE dt = '2026-03-01'`,
    )
    expect(presto.columns.at(-1)).toEqual({ name: 'dt', type: 'varchar' })
  })
})

const LINEAGE = [
  { Name: '_export_run_id', Type: 'string', Comment: 'lineage: id of the export run that wrote the row' },
  { Name: '_exported_at', Type: 'timestamp', Comment: 'lineage: when the export run started (UTC)' },
  { Name: '_source_table_id', Type: 'string', Comment: 'lineage: saved table id in the inventory service' },
  { Name: '_source_row_number', Type: 'bigint', Comment: 'lineage: 1-based position of the row in the exported CSV' },
  {
    Name: '_row_fingerprint',
    Type: 'bigint',
    Comment: "lineage: hash of the row's non-empty cells by column name; equal rows, equal hash",
  },
]
