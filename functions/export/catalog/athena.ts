/**
 * The Athena view of a registered table: columns with their original headers as comments, the `dt` partition
 * with partition projection (no crawler, no MSCK REPAIR: a new day is queryable the moment its object lands),
 * and its views (`<table>_latest`). One definition feeds the Glue API, the DDL printed by `npm run ddl` and the
 * local DuckDB catalog of `npm run query`.
 */
import {
  EXPORT_DATES_TABLE_SUFFIX,
  LATEST_VIEW_SUFFIX,
  PARTITION_KEY,
  PREVIOUS_DATE_COLUMN,
} from '../core/constants.ts'
import { InternalError } from '../core/errors.ts'
import { LINEAGE_COLUMN_NAMES, LINEAGE_COLUMNS } from '../core/lineage.ts'
import { exportDatesFolder } from '../schema/export-dates.ts'
import type { TableSchema } from '../schema/table-schema.ts'
import { changesView, changesViewName } from './changes-view.ts'

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
  /** The newest export date published: the latest view names it. */
  readonly latestDate: string
  /** The oldest export date published: with `latestDate`, whether there are two dates to compare yet. */
  readonly firstDate: string
  /** `tables[].key` (from the registry): the changes view matches rows by it. */
  readonly key?: readonly string[]
  /** Where the table's dates relation lives (schema/export-dates.ts), ending with `/`. */
  readonly datesLocation: string
}

/** A view over a table: its SQL names every column it returns, in the order of `columns`. */
export interface CatalogView {
  readonly name: string
  readonly sql: string
  readonly columns: readonly CatalogColumn[]
}

/** Glue's limit on a column comment, in UTF-16 code units (Java string length). */
const MAX_COMMENT_LENGTH = 255

/**
 * A comment Glue accepts: its pattern allows no control character but tab, so line breaks become spaces and other
 * control characters go; lone surrogates become U+FFFD; the cut at 255 code units never splits a character.
 */
export const catalogComment = (text: string): string => {
  const clean = text
    .toWellFormed()
    .replace(/\r\n|[\r\n]/g, ' ')
    .replace(/[\p{Cc}\uFFFE\uFFFF]/gu, (c) => (c === '\t' ? c : ''))
  let cut = ''
  for (const character of clean) {
    if (cut.length + character.length > MAX_COMMENT_LENGTH) break
    cut += character
  }
  return cut
}

const LINEAGE_COMMENTS: Readonly<Record<string, string>> = {
  _export_run_id: 'lineage: id of the export run that wrote the row',
  _exported_at: 'lineage: when the export run started (UTC)',
  _source_table_id: 'lineage: saved table id in the inventory service',
  _source_row_number: 'lineage: 1-based position of the row in the exported CSV',
  _row_fingerprint: "lineage: hash of the row's non-empty cells by column name; equal rows, equal hash",
}

const commentOf = (column: TableSchema['columns'][number]): string | undefined => {
  const text =
    column.textOf !== undefined ? `text of values of ${column.textOf} that do not fit its type` : column.header
  return text === undefined ? undefined : catalogComment(text)
}

/** The daily projection of `dt` from the first export date on: a new date is queryable the moment it lands. */
const projection = (folder: string, firstDate: string): Record<string, string> => ({
  'projection.enabled': 'true',
  [`projection.${PARTITION_KEY}.type`]: 'date',
  [`projection.${PARTITION_KEY}.format`]: 'yyyy-MM-dd',
  [`projection.${PARTITION_KEY}.range`]: `${firstDate},NOW`,
  [`projection.${PARTITION_KEY}.interval`]: '1',
  [`projection.${PARTITION_KEY}.interval.unit`]: 'DAYS',
  'storage.location.template': `${folder}${PARTITION_KEY}=\${${PARTITION_KEY}}/`,
})

/**
 * `location` is the table's folder under the warehouse root, e.g. `s3://bucket/inventory/devices/`; the dates
 * relation's folder is found beside it, under the same root.
 */
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
      ...projection(folder, schema.firstExportDate),
      'inventory.source_table_id': schema.sourceTableId,
    },
    latestDate: schema.lastExportDate,
    firstDate: schema.firstExportDate,
    ...(schema.key ? { key: schema.key } : {}),
    datesLocation: `${rootOf(folder, schema.table)}${exportDatesFolder(schema.table)}`,
  }
}

/** The warehouse root of a table's folder (`<root><table>/`), with its trailing separator. */
const rootOf = (folder: string, table: string): string => {
  const root = folder.slice(0, -(table.length + 1))
  if (!folder.slice(0, -1).endsWith(table) || !/[/\\]$/.test(root)) {
    throw new InternalError({ reason: `the location ${folder} does not end with the table's folder ${table}/` })
  }
  return root.replace(/\\$/, '/')
}

const exportDatesTableName = (table: string): string => `${table}${EXPORT_DATES_TABLE_SUFFIX}`

/**
 * The dates relation of a keyed table as a table of its own, `<table>_export_dates`: one row per export date with
 * the date before it, partitioned and projected like the table, so a filter on `dt` reads one tiny object.
 */
const exportDatesTableDefinition = (definition: AthenaTableDefinition): AthenaTableDefinition => ({
  database: definition.database,
  table: exportDatesTableName(definition.table),
  location: definition.datesLocation,
  columns: [{ name: PREVIOUS_DATE_COLUMN, type: 'string', comment: 'the export date before dt; NULL for the first' }],
  partitionKey: definition.partitionKey,
  parameters: {
    classification: 'parquet',
    EXTERNAL: 'TRUE',
    ...projection(definition.datesLocation, definition.firstDate),
    'inventory.dates_of': definition.table,
  },
  latestDate: definition.latestDate,
  firstDate: definition.firstDate,
  datesLocation: definition.datesLocation,
})

/** Tables a table needs besides itself, created after it and before its views: the dates relation when keyed. */
export const companionTables = (definition: AthenaTableDefinition): AthenaTableDefinition[] =>
  (definition.key ?? []).length > 0 ? [exportDatesTableDefinition(definition)] : []

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

const latestViewName = (table: string): string => `${table}${LATEST_VIEW_SUFFIX}`

const sqlIdentifier = (name: string): string => `"${name.replace(/"/g, '""')}"`

/**
 * The latest-snapshot view: the rows of the newest published export date, named as a literal so that Athena reads
 * that one partition (with `max(dt)` it would list every projected day first). A run that publishes a newer date
 * moves it; a backfill of an older date does not.
 */
const latestView = (definition: AthenaTableDefinition): CatalogView => {
  const columns = [...definition.columns, definition.partitionKey]
  const table = `${sqlIdentifier(definition.database)}.${sqlIdentifier(definition.table)}`
  return {
    name: latestViewName(definition.table),
    sql: `SELECT ${columns.map((c) => sqlIdentifier(c.name)).join(', ')} FROM ${table} WHERE ${PARTITION_KEY} = '${definition.latestDate}'`,
    columns,
  }
}

/** Every view of a table, created after the table and in this order. */
export const tableViews = (definition: AthenaTableDefinition): CatalogView[] => {
  const changes = changesCatalogView(definition)
  return changes ? [latestView(definition), changes] : [latestView(definition)]
}

/** `<table>_changes`, once a keyed table has two export dates to compare. */
const changesCatalogView = (definition: AthenaTableDefinition): CatalogView | undefined => {
  if (definition.firstDate >= definition.latestDate) return undefined
  const view = changesView({
    source: `${sqlIdentifier(definition.database)}.${sqlIdentifier(definition.table)}`,
    dates: `${sqlIdentifier(definition.database)}.${sqlIdentifier(exportDatesTableName(definition.table))}`,
    columns: definition.columns.filter((c) => !LINEAGE_COLUMN_NAMES.includes(c.name)),
    key: definition.key ?? [],
  })
  return view && { name: changesViewName(definition.table), sql: view.sql, columns: view.columns }
}

export const createViewDdl = (definition: AthenaTableDefinition, view: CatalogView): string =>
  `CREATE OR REPLACE VIEW ${sqlIdentifier(definition.database)}.${sqlIdentifier(view.name)} AS\n${view.sql};`
