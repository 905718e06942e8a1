/**
 * The Athena view of a registered table: columns with their original headers as comments, the `dt` partition
 * with partition projection (no crawler, no MSCK REPAIR: a new day is queryable the moment its object lands),
 * and the `<table>_latest` view. One definition feeds both the Glue API and the DDL printed by `npm run ddl`.
 */
import { LATEST_VIEW_SUFFIX, PARTITION_KEY } from '../constants.ts'
import { LINEAGE_COLUMNS } from '../lineage.ts'
import type { TableSchema } from './registry.ts'

export const PARQUET_FORMAT = {
  serde: 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe',
  inputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat',
  outputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat',
} as const

export interface CatalogColumn {
  readonly name: string
  readonly type: string
  readonly comment?: string
}

export interface AthenaTableDefinition {
  readonly database: string
  readonly table: string
  /** Ends with `/`. */
  readonly location: string
  readonly columns: readonly CatalogColumn[]
  readonly partitionKey: CatalogColumn
  readonly parameters: Readonly<Record<string, string>>
}

const LINEAGE_COMMENTS: Readonly<Record<string, string>> = {
  _export_run_id: 'lineage: id of the export run that wrote the row',
  _exported_at: 'lineage: when the export run started (UTC)',
  _source_table_id: 'lineage: saved table id in the inventory service',
  _source_row_number: 'lineage: 1-based position of the row in the exported CSV',
  _row_fingerprint: "lineage: hash of the row's non-empty cells by column name; equal rows, equal hash",
}

const commentOf = (column: TableSchema['columns'][number]): string | undefined =>
  column.textOf !== undefined ? `text of values of ${column.textOf} that do not fit its type` : column.header

/** `location` is the table's folder, e.g. `s3://bucket/inventory/devices/`. */
export const athenaTableDefinition = (
  schema: TableSchema,
  database: string,
  location: string,
): AthenaTableDefinition => {
  const folder = location.endsWith('/') ? location : `${location}/`
  return {
    database,
    table: schema.table,
    location: folder,
    columns: [
      ...schema.columns.map((c) => {
        const comment = commentOf(c)
        return comment === undefined ? { name: c.name, type: c.type } : { name: c.name, type: c.type, comment }
      }),
      ...LINEAGE_COLUMNS.map((c) => ({ name: c.name, type: c.type, comment: LINEAGE_COMMENTS[c.name]! })),
    ],
    partitionKey: { name: PARTITION_KEY, type: 'string', comment: 'export date (YYYY-MM-DD)' },
    parameters: {
      classification: 'parquet',
      EXTERNAL: 'TRUE',
      'projection.enabled': 'true',
      [`projection.${PARTITION_KEY}.type`]: 'date',
      [`projection.${PARTITION_KEY}.format`]: 'yyyy-MM-dd',
      [`projection.${PARTITION_KEY}.range`]: `${schema.firstExportDate},NOW`,
      [`projection.${PARTITION_KEY}.interval`]: '1',
      [`projection.${PARTITION_KEY}.interval.unit`]: 'DAYS',
      'storage.location.template': `${folder}${PARTITION_KEY}=\${${PARTITION_KEY}}/`,
      'inventory.source_table_id': schema.sourceTableId,
    },
  }
}

const quoteIdentifier = (name: string): string => `\`${name.replace(/`/g, '``')}\``
const quoteLiteral = (text: string): string => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`

/** `CREATE EXTERNAL TABLE` for Athena, with the projection properties. */
export const createTableDdl = (definition: AthenaTableDefinition): string => {
  const column = (c: CatalogColumn) =>
    `  ${quoteIdentifier(c.name)} ${c.type}${c.comment === undefined ? '' : ` COMMENT ${quoteLiteral(c.comment)}`}`
  const properties = Object.entries(definition.parameters)
    .filter(([key]) => key !== 'EXTERNAL')
    .map(([key, value]) => `  ${quoteLiteral(key)} = ${quoteLiteral(value)}`)
  return [
    `CREATE EXTERNAL TABLE IF NOT EXISTS ${quoteIdentifier(definition.database)}.${quoteIdentifier(definition.table)} (`,
    definition.columns.map(column).join(',\n'),
    ')',
    `PARTITIONED BY (${column(definition.partitionKey).trim()})`,
    `ROW FORMAT SERDE ${quoteLiteral(PARQUET_FORMAT.serde)}`,
    `STORED AS INPUTFORMAT ${quoteLiteral(PARQUET_FORMAT.inputFormat)}`,
    `OUTPUTFORMAT ${quoteLiteral(PARQUET_FORMAT.outputFormat)}`,
    `LOCATION ${quoteLiteral(definition.location)}`,
    'TBLPROPERTIES (',
    properties.join(',\n'),
    ');',
  ].join('\n')
}

/**
 * The SQL of the latest-snapshot view: the rows of the most recent export date that has data. The date is
 * computed, not written in, so the view only changes when the table's columns do.
 */
export const latestViewSql = (definition: AthenaTableDefinition): string => {
  const table = `"${definition.database}"."${definition.table}"`
  return `SELECT * FROM ${table} WHERE ${PARTITION_KEY} = (SELECT max(${PARTITION_KEY}) FROM ${table})`
}

export const latestViewName = (table: string): string => `${table}${LATEST_VIEW_SUFFIX}`

export const createLatestViewDdl = (definition: AthenaTableDefinition): string =>
  `CREATE OR REPLACE VIEW "${definition.database}"."${latestViewName(definition.table)}" AS\n${latestViewSql(definition)};`
