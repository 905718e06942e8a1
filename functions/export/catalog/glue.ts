/**
 * Glue catalog sync: one Glue table per saved table (Parquet, partition projection on `dt`) and its
 * `<table>_latest` view, created or updated only when the registry says the columns changed.
 * Views are stored the way Athena stores its own (`presto_view`), so Athena shows and runs them as usual.
 */
import {
  type Column,
  CreateTableCommand,
  EntityNotFoundException,
  GetTableCommand,
  type GlueClient,
  type TableInput,
  UpdateTableCommand,
} from '@aws-sdk/client-glue'
import type { ColumnType } from '../constants.ts'
import type { TableCatalog } from '../table-export.ts'
import {
  type AthenaTableDefinition,
  athenaTableDefinition,
  type CatalogColumn,
  latestViewName,
  latestViewSql,
  PARQUET_FORMAT,
} from './athena.ts'

/** Athena (Trino) type names of view columns, which differ from the Hive names of table columns. */
const VIEW_TYPES: Readonly<Record<ColumnType | 'string', string>> = {
  bigint: 'bigint',
  double: 'double',
  boolean: 'boolean',
  date: 'date',
  timestamp: 'timestamp(3)',
  string: 'varchar',
}

const glueColumn = (column: CatalogColumn): Column =>
  column.comment === undefined
    ? { Name: column.name, Type: column.type }
    : { Name: column.name, Type: column.type, Comment: column.comment.slice(0, 255) }

export const glueTableInput = (definition: AthenaTableDefinition): TableInput => ({
  Name: definition.table,
  TableType: 'EXTERNAL_TABLE',
  Parameters: { ...definition.parameters },
  PartitionKeys: [glueColumn(definition.partitionKey)],
  StorageDescriptor: {
    Columns: definition.columns.map(glueColumn),
    Location: definition.location,
    InputFormat: PARQUET_FORMAT.inputFormat,
    OutputFormat: PARQUET_FORMAT.outputFormat,
    SerdeInfo: { SerializationLibrary: PARQUET_FORMAT.serde, Parameters: { 'serialization.format': '1' } },
  },
})

export const glueLatestViewInput = (definition: AthenaTableDefinition): TableInput => {
  const columns = [...definition.columns, definition.partitionKey]
  const prestoView = {
    originalSql: latestViewSql(definition),
    catalog: 'awsdatacatalog',
    schema: definition.database,
    columns: columns.map((c) => ({ name: c.name, type: VIEW_TYPES[c.type as ColumnType] ?? 'varchar' })),
  }
  return {
    Name: latestViewName(definition.table),
    TableType: 'VIRTUAL_VIEW',
    Parameters: { presto_view: 'true', comment: 'Presto View' },
    ViewOriginalText: `/* Presto View: ${Buffer.from(JSON.stringify(prestoView)).toString('base64')} */`,
    ViewExpandedText: '/* Presto View */',
    StorageDescriptor: { Columns: columns.map((c) => ({ Name: c.name, Type: c.type })), SerdeInfo: {} },
  }
}

const tableExists = async (glue: GlueClient, database: string, name: string): Promise<boolean> => {
  try {
    await glue.send(new GetTableCommand({ DatabaseName: database, Name: name }))
    return true
  } catch (error) {
    if (error instanceof EntityNotFoundException || (error as Error).name === 'EntityNotFoundException') return false
    throw error
  }
}

/** Creates the table and its view, or updates them. Call it only when the registry reported a change. */
export const syncGlueTable = async (glue: GlueClient, definition: AthenaTableDefinition): Promise<void> => {
  for (const input of [glueTableInput(definition), glueLatestViewInput(definition)]) {
    const exists = await tableExists(glue, definition.database, input.Name!)
    if (exists) await glue.send(new UpdateTableCommand({ DatabaseName: definition.database, TableInput: input }))
    else await glue.send(new CreateTableCommand({ DatabaseName: definition.database, TableInput: input }))
  }
}

/** The Glue catalog as the export path sees it; `locationRoot` is e.g. `s3://bucket/inventory`. */
export const glueTableCatalog = (glue: GlueClient, database: string, locationRoot: string): TableCatalog => ({
  publish: (schema) =>
    syncGlueTable(
      glue,
      athenaTableDefinition(schema, database, `${locationRoot.replace(/\/+$/, '')}/${schema.table}/`),
    ),
})
