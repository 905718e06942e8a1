/**
 * Glue catalog reconciliation: one Glue table per saved table (Parquet, partition projection on `dt`) and its
 * views. Every run reads what Glue holds (one GetTable per table and view) and creates or updates whatever differs
 * from the definition the registry implies, so a deleted table, a replaced database or a reused bucket heals on
 * the next run, and an unchanged table costs reads only. Views are stored the way Athena stores its own
 * (`presto_view`), so Athena shows and runs them as usual.
 */
import {
  type Column,
  CreateTableCommand,
  EntityNotFoundException,
  GetTableCommand,
  type GlueClient,
  type Table,
  type TableInput,
  UpdateTableCommand,
} from '@aws-sdk/client-glue'
import type { ColumnType } from '../constants.ts'
import { InternalError } from '../errors.ts'
import {
  type AthenaTableDefinition,
  athenaTableDefinition,
  type CatalogColumn,
  type CatalogView,
  PARQUET_FORMAT,
  tableViews,
} from './athena.ts'
import { glueTableInputProblems } from './glue-rules.ts'
import { encodePrestoView, type PrestoView, VIEW_TYPES } from './presto-view.ts'
import type { TableCatalog } from './table-catalog.ts'

const glueColumn = (column: CatalogColumn): Column =>
  column.comment === undefined
    ? { Name: column.name, Type: column.type }
    : { Name: column.name, Type: column.type, Comment: column.comment }

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

export const glueViewInput = (definition: AthenaTableDefinition, view: CatalogView): TableInput => {
  const prestoView: PrestoView = {
    originalSql: view.sql,
    catalog: 'awsdatacatalog',
    schema: definition.database,
    columns: view.columns.map((c) => ({ name: c.name, type: VIEW_TYPES[c.type as ColumnType] ?? 'varchar' })),
  }
  return {
    Name: view.name,
    TableType: 'VIRTUAL_VIEW',
    Parameters: { presto_view: 'true', comment: 'Presto View' },
    ViewOriginalText: encodePrestoView(prestoView),
    ViewExpandedText: '/* Presto View */',
    StorageDescriptor: { Columns: view.columns.map((c) => ({ Name: c.name, Type: c.type })), SerdeInfo: {} },
  }
}

/** Everything a table needs in Glue, in the order it is written: the table first, so no view names a column it lacks. */
export const glueTableInputs = (definition: AthenaTableDefinition): TableInput[] => [
  glueTableInput(definition),
  ...tableViews(definition).map((view) => glueViewInput(definition, view)),
]

/** Fails (as a bug of ours) when Glue would reject the input; nothing is sent then. */
export const assertGlueAccepts = (input: TableInput, tableId?: string): void => {
  const problems = glueTableInputProblems(input)
  if (problems.length > 0) {
    throw new InternalError({
      tableId,
      reason: `Glue would reject the definition of ${input.Name}: ${problems.join('; ')}`,
    })
  }
}

const readGlueTable = async (glue: GlueClient, database: string, name: string): Promise<Table | undefined> => {
  try {
    return (await glue.send(new GetTableCommand({ DatabaseName: database, Name: name }))).Table
  } catch (error) {
    if (error instanceof EntityNotFoundException || (error as Error).name === 'EntityNotFoundException')
      return undefined
    throw error
  }
}

/** The parts of a table or view that the definition decides; Glue adds others (times, owner, statistics). */
const decidedParts = (table: Table | TableInput) => {
  const columns = (list: readonly Column[] | undefined) =>
    (list ?? []).map((c) => [c.Name, c.Type, c.Comment ?? null] as const)
  const descriptor = table.StorageDescriptor
  return {
    type: table.TableType,
    parameters: Object.entries(table.Parameters ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    partitionKeys: columns(table.PartitionKeys),
    columns: columns(descriptor?.Columns),
    location: descriptor?.Location ?? null,
    inputFormat: descriptor?.InputFormat ?? null,
    outputFormat: descriptor?.OutputFormat ?? null,
    serde: descriptor?.SerdeInfo?.SerializationLibrary ?? null,
    serdeParameters: Object.entries(descriptor?.SerdeInfo?.Parameters ?? {}).sort(),
    viewOriginalText: table.ViewOriginalText ?? null,
    viewExpandedText: table.ViewExpandedText ?? null,
  }
}

export const sameDefinition = (current: Table, wanted: TableInput): boolean =>
  JSON.stringify(decidedParts(current)) === JSON.stringify(decidedParts(wanted))

/** Creates or updates the table, then each view, wherever Glue differs from the definition. */
export const reconcileGlueTable = async (
  glue: GlueClient,
  definition: AthenaTableDefinition,
  tableId?: string,
): Promise<void> => {
  const inputs = glueTableInputs(definition)
  for (const input of inputs) assertGlueAccepts(input, tableId)
  for (const input of inputs) {
    const current = await readGlueTable(glue, definition.database, input.Name!)
    const request = { DatabaseName: definition.database, TableInput: input }
    if (current === undefined) await glue.send(new CreateTableCommand(request))
    else if (!sameDefinition(current, input)) await glue.send(new UpdateTableCommand(request))
  }
}

/** The Glue catalog as the export path sees it; `locationRoot` is e.g. `s3://bucket/inventory`. */
export const glueTableCatalog = (glue: GlueClient, database: string, locationRoot: string): TableCatalog => ({
  publish: (schema) =>
    reconcileGlueTable(
      glue,
      athenaTableDefinition(schema, database, `${locationRoot.replace(/\/+$/, '')}/${schema.table}/`),
      schema.sourceTableId,
    ),
})
