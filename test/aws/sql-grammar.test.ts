/**
 * Every SQL text the project hands Athena, parsed with the grammars of the engines that run it (dt-sql-parser's
 * ANTLR grammars): Athena runs `CREATE EXTERNAL TABLE` on its Hive DDL engine, views and queries on Trino.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { HiveSQL, TrinoSQL } from 'dt-sql-parser'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  type AthenaTableDefinition,
  athenaTableDefinition,
  createTableDdl,
  createViewDdl,
  tableViews,
} from '../../functions/export/catalog/athena.ts'
import type { TableSchema } from '../../functions/export/schema/table-schema.ts'
import { PROJECT_ROOT, sampleConfigInput, synthesize } from '../infra/synth.ts'
import { everyOptionInput } from './every-option.ts'

const trino = new TrinoSQL()
const hive = new HiveSQL()

/** The grammar's syntax errors in `sql`, as "line:column message"; empty when it parses. */
const syntaxErrors = (parser: TrinoSQL | HiveSQL, sql: string): string[] =>
  parser.validate(sql).map((e) => `${e.startLine}:${e.startColumn} ${e.message}`)

/** A keyed table with every column type, two export dates and comments that need quoting. */
const KEYED: TableSchema = {
  version: 1,
  table: 'devices',
  sourceTableId: '1001',
  firstExportDate: '2026-03-01',
  lastExportDate: '2026-03-02',
  key: ['device_id'],
  exportDates: ['2026-03-01', '2026-03-02'],
  columns: [
    { name: 'device_id', header: 'Device ID', type: 'string', firstSeen: '2026-03-01', lastSeen: '2026-03-02' },
    { name: 'ram_gb', header: "RAM (GB) 'approx'", type: 'bigint', firstSeen: '2026-03-01', lastSeen: '2026-03-02' },
    { name: 'ram_gb__text', type: 'string', textOf: 'ram_gb', firstSeen: '2026-03-02', lastSeen: '2026-03-02' },
    { name: 'price', header: 'Price \\ EUR', type: 'double', firstSeen: '2026-03-01', lastSeen: '2026-03-02' },
    { name: 'virtual', header: 'Virtual?', type: 'boolean', firstSeen: '2026-03-01', lastSeen: '2026-03-02' },
    { name: 'bought', header: 'Bought; "on"', type: 'date', firstSeen: '2026-03-01', lastSeen: '2026-03-02' },
    { name: 'last_seen', header: 'Last Seen', type: 'timestamp', firstSeen: '2026-03-01', lastSeen: '2026-03-02' },
  ],
} as TableSchema

const definition: AthenaTableDefinition = athenaTableDefinition(KEYED, 'inventory', 's3://bucket/inventory/devices/')

/** The statements of `npm run ddl` for the demo tables (its output, kept in step by local-commands.test.ts). */
const demoDdl = (): string[] =>
  readFileSync(join(PROJECT_ROOT, 'test/fixtures/ddl/demo-tables.sql'), 'utf8')
    .split(/;\n/)
    .map((statement) => statement.replace(/^--.*\n/gm, '').trim())
    .filter((statement) => statement !== '')

const namedQueries: [string, string][] = []

beforeAll(() => {
  for (const input of [sampleConfigInput(), everyOptionInput()]) {
    const template = synthesize(input).template
    for (const resource of Object.values(template.findResources('AWS::Athena::NamedQuery'))) {
      const { Name, QueryString } = resource.Properties as { Name: string; QueryString: string }
      namedQueries.push([Name, QueryString])
    }
  }
}, 120_000)

describe('the SQL handed to Athena', () => {
  it('parses, the table DDL with the Hive grammar and the view DDL with the Trino grammar', () => {
    const statements = [
      ...demoDdl(),
      createTableDdl(definition).replace(/;$/, ''),
      ...tableViews(definition).map((view) => createViewDdl(definition, view).replace(/;$/, '')),
    ]
    expect(statements.filter((s) => s.startsWith('CREATE EXTERNAL TABLE')).length).toBeGreaterThan(4)
    expect(statements.filter((s) => s.startsWith('CREATE OR REPLACE VIEW')).length).toBeGreaterThan(5)
    for (const statement of statements) {
      const parser = statement.startsWith('CREATE EXTERNAL TABLE') ? hive : trino
      expect({ statement, errors: syntaxErrors(parser, statement) }).toEqual({ statement, errors: [] })
    }
  })

  it('parses each view the catalog registers (latest and changes) as a Trino query', () => {
    const views = tableViews(definition)
    expect(views.map((v) => v.name)).toEqual(['devices_latest', 'devices_changes'])
    for (const view of views) expect(syntaxErrors(trino, view.sql)).toEqual([])
  })

  it('parses every named query of the synthesized templates as a Trino query', () => {
    // Three per table, one per keyed table, and the configured ones, over both configurations.
    expect(namedQueries.length).toBeGreaterThan(12)
    for (const [name, sql] of namedQueries) {
      expect({ name, errors: syntaxErrors(trino, sql) }).toEqual({ name, errors: [] })
    }
  })

  it('parses the Iceberg queries the docs give analysts (time travel, the snapshots table) as Trino queries', () => {
    const fenced = (page: string) =>
      [...readFileSync(join(PROJECT_ROOT, page), 'utf8').matchAll(/```sql\n([\s\S]*?)```/g)].flatMap((m) =>
        m[1]!.trim().split('\n'),
      )
    const queries = [...fenced('docs/iceberg.md'), ...fenced('docs/analysts.md').filter((q) => q.includes(' AS OF '))]
    expect(queries.filter((q) => q.includes('FOR TIMESTAMP AS OF')).length).toBeGreaterThanOrEqual(2)
    for (const query of queries) expect(syntaxErrors(trino, query), query).toEqual([])
  })

  it('reports a syntax error, so a text that would not run cannot pass', () => {
    expect(syntaxErrors(trino, 'SELECT "a", FROM "inventory"."devices"')).not.toEqual([])
    // A comment whose quote is not escaped, and a trailing comma: mistakes the DDL printer could make.
    expect(syntaxErrors(hive, "CREATE EXTERNAL TABLE `t` (`a` string COMMENT 'it's')")).not.toEqual([])
    expect(syntaxErrors(hive, "CREATE EXTERNAL TABLE `t` (`a` string,) LOCATION 's3://b/t/'")).not.toEqual([])
  })
})
