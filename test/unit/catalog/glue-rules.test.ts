import type { TableInput } from '@aws-sdk/client-glue'
import { describe, expect, it } from 'vitest'
import { athenaTableDefinition, catalogComment } from '../../../functions/export/catalog/athena.ts'
import { glueTableInputs } from '../../../functions/export/catalog/glue-inputs.ts'
import { glueTableInputProblems, selectedNames } from '../../../functions/export/catalog/glue-rules.ts'
import { decodePrestoView, encodePrestoView } from '../../../functions/export/catalog/presto-view.ts'
import { parseExportConfig } from '../../../functions/export/core/config.ts'
import { ConfigError } from '../../../functions/export/core/errors.ts'
import { companionName, type TableSchema } from '../../../functions/export/schema/table-schema.ts'

const SCHEMA: TableSchema = {
  version: 1,
  table: 'devices',
  sourceTableId: '1001',
  firstExportDate: '2026-03-01',
  lastExportDate: '2026-03-04',
  columns: [
    { name: 'device_id', header: 'Device ID', type: 'string', firstSeen: '2026-03-01', lastSeen: '2026-03-04' },
    { name: 'ram_gb', header: 'RAM (GB)', type: 'bigint', firstSeen: '2026-03-01', lastSeen: '2026-03-04' },
    { name: 'ram_gb__text', type: 'string', textOf: 'ram_gb', firstSeen: '2026-03-02', lastSeen: '2026-03-02' },
    { name: 'last_seen', header: 'Last Seen', type: 'timestamp', firstSeen: '2026-03-01', lastSeen: '2026-03-04' },
  ],
}

const [TABLE, VIEW] = glueTableInputs(athenaTableDefinition(SCHEMA, 'inventory', 's3://bucket/inventory/devices/')) as [
  TableInput,
  TableInput,
]

const withParameters = (changes: Record<string, string | undefined>): TableInput => {
  const parameters = { ...TABLE.Parameters }
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) delete parameters[key]
    else parameters[key] = value
  }
  return { ...TABLE, Parameters: parameters }
}
const withColumn = (column: { Name: string; Type: string; Comment?: string }): TableInput => ({
  ...TABLE,
  StorageDescriptor: { ...TABLE.StorageDescriptor, Columns: [...TABLE.StorageDescriptor!.Columns!, column] },
})
const withView = (
  sql: string,
  columns = VIEW.StorageDescriptor!.Columns!,
  rights: { runAsInvoker: boolean; owner?: string } = { runAsInvoker: true },
): TableInput => ({
  ...VIEW,
  ViewOriginalText: encodePrestoView({
    originalSql: sql,
    catalog: 'awsdatacatalog',
    schema: 'inventory',
    columns: columns.map((c) => ({ name: c.Name!, type: c.Type === 'string' ? 'varchar' : c.Type! })),
    ...rights,
  }),
})
const VIEW_SQL = decodePrestoView(VIEW.ViewOriginalText)!.originalSql

describe('glueTableInputProblems', () => {
  it('accepts the table and latest view the exporter sends', () => {
    expect(glueTableInputProblems(TABLE)).toEqual([])
    expect(glueTableInputProblems(VIEW)).toEqual([])
  })

  it.each<[string, TableInput, string]>([
    ['a 256-character table name', { ...TABLE, Name: 'a'.repeat(256) }, 'the table name must be 1 to 255'],
    ['an upper-case table name', { ...TABLE, Name: 'Devices' }, 'Athena names are lowercase'],
    [
      'a comment with a line break',
      withColumn({ Name: 'x', Type: 'string', Comment: 'Purchase\nDate' }),
      'pattern rejects',
    ],
    [
      'a 256-unit comment',
      withColumn({ Name: 'x', Type: 'string', Comment: 'é'.repeat(256) }),
      'comment must be 0 to 255',
    ],
    ['a lone surrogate in a comment', withColumn({ Name: 'x', Type: 'string', Comment: 'a\uD83D' }), 'pattern rejects'],
    ['a 256-character column name', withColumn({ Name: 'x'.repeat(256), Type: 'string' }), 'the name must be 1 to 255'],
    ['a data column named dt', withColumn({ Name: 'dt', Type: 'string' }), 'the name "dt" is used twice'],
    [
      'two columns of one name',
      withColumn({ Name: 'device_id', Type: 'string' }),
      'the name "device_id" is used twice',
    ],
    ['a Trino type spelling', withColumn({ Name: 'x', Type: 'varchar' }), '"varchar" is not a Hive type name'],
    ['an unknown type', withColumn({ Name: 'x', Type: 'int64' }), '"int64" is not a Hive type name'],
    [
      'no projection type',
      withParameters({ 'projection.dt.type': undefined }),
      'partition key dt has no projection.dt.type',
    ],
    ['no date format', withParameters({ 'projection.dt.format': undefined }), 'projection.dt.format is required'],
    ['no range', withParameters({ 'projection.dt.range': undefined }), 'projection.dt.range is required'],
    [
      'a range with a hyphen',
      withParameters({ 'projection.dt.range': '2026-03-01-NOW' }),
      'two values separated by a comma',
    ],
    [
      'a range that ends first',
      withParameters({ 'projection.dt.range': '2026-03-05,2026-03-01' }),
      'starts after it ends',
    ],
    ['an impossible start date', withParameters({ 'projection.dt.range': '2026-02-30,NOW' }), 'neither NOW nor a date'],
    ['an unknown interval unit', withParameters({ 'projection.dt.interval.unit': 'FORTNIGHTS' }), 'interval.unit'],
    ['a zero interval', withParameters({ 'projection.dt.interval': '0' }), 'must be a positive integer'],
    ['a template without the dt placeholder', withParameters({ 'storage.location.template': 's3://b/t/' }), 'has no $'],
    [
      'projection of a non-key',
      withParameters({ 'projection.day.type': 'date' }),
      'projection.day.type names no partition key',
    ],
    ['a view selecting *', withView('SELECT * FROM "inventory"."devices"'), 'must name every column'],
    ['a view whose SQL lacks a column', withView('SELECT "device_id" FROM "inventory"."devices"'), 'are not the SQL'],
    [
      'an invoker view with an owner (Trino: "owner cannot be present with runAsInvoker")',
      withView(VIEW_SQL, undefined, { runAsInvoker: true, owner: 'someone' }),
      'an invoker view (runAsInvoker) has no owner',
    ],
    [
      'a definer view with no owner anywhere (Trino: "Run-as identity must be set")',
      { ...withView(VIEW_SQL, undefined, { runAsInvoker: false }), Owner: undefined },
      'a definer view needs an owner',
    ],
  ])('rejects %s', (_, input, problem) => {
    expect(glueTableInputProblems(input).join('\n')).toContain(problem)
  })
})

describe('selectedNames', () => {
  it('reads quoted names, aliases and qualified names from a select list, but not *', () => {
    expect(selectedNames('SELECT "a", t."b", lower(x) AS "c", d FROM t')).toEqual(['a', 'b', 'c', 'd'])
    expect(selectedNames('SELECT coalesce(a.x, b.x) AS x, "y""z" FROM t')).toEqual(['x', 'y"z'])
    expect(selectedNames('SELECT * FROM t')).toBeUndefined()
  })
})

describe('catalogComment', () => {
  it('turns line breaks into spaces, drops other control characters and keeps tabs', () => {
    expect(catalogComment('Purchase\nDate')).toBe('Purchase Date')
    expect(catalogComment('a\r\nb\u0000c\u0007d\te\u007f')).toBe('a bcd\te')
  })

  it('cuts at 255 code units without splitting a character', () => {
    const cut = catalogComment(`${'a'.repeat(254)}😀b`)
    expect(cut).toBe('a'.repeat(254))
    expect(catalogComment('😀'.repeat(200))).toHaveLength(254)
    expect(catalogComment('x\uD83D')).toBe('x\uFFFD')
  })
})

describe('companionName', () => {
  it('is <column>__text while that fits 255 characters', () => {
    expect(companionName('ram_gb')).toBe('ram_gb__text')
    expect(companionName('a'.repeat(249))).toBe(`${'a'.repeat(249)}__text`)
  })

  it('shortens a longer one deterministically and keeps two long names sharing a prefix apart', () => {
    const one = `${'a'.repeat(250)}_one`
    const two = `${'a'.repeat(250)}_two`
    expect(companionName(one)).toHaveLength(255)
    expect(companionName(one)).toMatch(/^a{240}_[0-9a-f]{8}__text$/)
    expect(companionName(one)).toBe(companionName(one))
    expect(companionName(one)).not.toBe(companionName(two))
  })
})

describe('table names and views', () => {
  const config = (table: Record<string, unknown>) => () =>
    parseExportConfig({ source: { baseUrl: 'http://127.0.0.1:1' }, tables: [table] })

  it('rejects a table name ending in the view suffix, naming the field', () => {
    expect(config({ id: '1', name: 'devices_latest' })).toThrow(ConfigError)
    expect(config({ id: '1', name: 'devices_latest' })).toThrow(/tables\[0\]\.name: "devices_latest" ends in "_latest"/)
    expect(config({ id: 'x_latest' })).toThrow(/tables\[0\]\.id: "table_x_latest" ends in "_latest"/)
  })
})
