/**
 * Glue catalog reconciliation: one Glue table per saved table (Parquet, partition projection on `dt`) and its
 * views. Every run reads what Glue holds (one GetTable per table and view) and creates or updates whatever differs
 * from the definition the registry implies, so a deleted table, a replaced database or a reused bucket heals on
 * the next run, and an unchanged table costs reads only. Views are stored the way Athena stores its own
 * (`presto_view`), so Athena shows and runs them as usual. The inputs themselves are glue-inputs.ts's.
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
import type { TableSchema } from '../schema/table-schema.ts'
import { type AthenaTableDefinition, athenaTableDefinition } from './athena.ts'
import { glueMetadataPointer } from './glue-iceberg.ts'
import { assertGlueAccepts, glueTableInputs, viewsLeftOut } from './glue-inputs.ts'
import type { TableCatalog } from './table-catalog.ts'

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

/** The owner counts only where the definition sets one (the views): a table's owner is whoever Glue recorded. */
const sameDefinition = (current: Table, wanted: TableInput): boolean =>
  JSON.stringify(decidedParts(current)) === JSON.stringify(decidedParts(wanted)) &&
  (wanted.Owner === undefined || current.Owner === wanted.Owner)

/**
 * Creates or updates the table, then each view, wherever Glue differs from the definition. Resolves to warnings
 * for the views left out because they would break a Glue limit (glue-inputs.ts).
 */
const reconcileGlueTable = async (
  glue: GlueClient,
  definition: AthenaTableDefinition,
  tableId: string | undefined,
  format: 'hive' | 'iceberg',
): Promise<string[]> => {
  // An Iceberg table's own entry moves with its commits (glue-iceberg.ts); its views and its dates relation are
  // kept here as any table's.
  const inputs = glueTableInputs(definition).filter((input) => format === 'hive' || input.Name !== definition.table)
  for (const input of inputs) assertGlueAccepts(input, tableId)
  for (const input of inputs) {
    const current = await readGlueTable(glue, definition.database, input.Name!)
    const request = { DatabaseName: definition.database, TableInput: input }
    if (current === undefined) await glue.send(new CreateTableCommand(request))
    else if (!sameDefinition(current, input)) await glue.send(new UpdateTableCommand(request))
  }
  return viewsLeftOut(definition)
}

/** The Glue catalog as the export path sees it; `locationRoot` is e.g. `s3://bucket/inventory`. */
export const glueTableCatalog = (glue: GlueClient, database: string, locationRoot: string): TableCatalog => {
  const definition = (schema: TableSchema) =>
    athenaTableDefinition(schema, database, `${locationRoot.replace(/\/+$/, '')}/${schema.table}/`)
  return {
    publish: (schema, format = 'hive') => reconcileGlueTable(glue, definition(schema), schema.sourceTableId, format),
    check: (schema) => {
      for (const input of glueTableInputs(definition(schema))) assertGlueAccepts(input, schema.sourceTableId)
    },
    metadataPointer: glueMetadataPointer(glue, database, locationRoot),
  }
}
