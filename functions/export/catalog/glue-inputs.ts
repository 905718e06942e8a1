/**
 * What Glue is sent for a table and its views: the `TableInput`s made from the Athena definition, and the check
 * that Glue would accept them. Pure (the Glue client's types only), so the local query path builds its DuckDB
 * objects from the very same inputs without loading the AWS SDK.
 */
import type { Column, TableInput } from '@aws-sdk/client-glue'
import type { ColumnType } from '../core/constants.ts'
import { CatalogRefusedError } from '../core/errors.ts'
import {
  type AthenaTableDefinition,
  type CatalogColumn,
  type CatalogView,
  companionTables,
  PARQUET_FORMAT,
  tableViews,
} from './athena.ts'
import { glueTableInputProblems, viewLimitProblems } from './glue-rules.ts'
import { encodePrestoView, type PrestoView, VIEW_OWNER, VIEW_TYPES } from './presto-view.ts'

const glueColumn = (column: CatalogColumn): Column =>
  column.comment === undefined
    ? { Name: column.name, Type: column.type }
    : { Name: column.name, Type: column.type, Comment: column.comment }

const glueTableInput = (definition: AthenaTableDefinition): TableInput => ({
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

const glueViewInput = (definition: AthenaTableDefinition, view: CatalogView): TableInput => {
  const prestoView: PrestoView = {
    originalSql: view.sql,
    catalog: 'awsdatacatalog',
    schema: definition.database,
    columns: view.columns.map((c) => ({ name: c.name, type: VIEW_TYPES[c.type as ColumnType] ?? 'varchar' })),
    runAsInvoker: true,
  }
  return {
    Name: view.name,
    Owner: VIEW_OWNER,
    TableType: 'VIRTUAL_VIEW',
    Parameters: { presto_view: 'true', comment: 'Presto View' },
    ViewOriginalText: encodePrestoView(prestoView),
    ViewExpandedText: '/* Presto View */',
    StorageDescriptor: { Columns: view.columns.map((c) => ({ Name: c.name, Type: c.type })), SerdeInfo: {} },
  }
}

const viewInputs = (definition: AthenaTableDefinition): TableInput[] =>
  tableViews(definition).map((view) => glueViewInput(definition, view))

/**
 * Everything a table needs in Glue, in the order it is written: the tables first (the table, then its dates
 * relation), so no view names a column or a table that is not there yet. A view that would break a Glue size
 * limit (a very wide table's) is left out: the table is still registered and queryable (see viewsLeftOut).
 */
export const glueTableInputs = (definition: AthenaTableDefinition): TableInput[] => [
  glueTableInput(definition),
  ...companionTables(definition).map(glueTableInput),
  ...viewInputs(definition).filter((input) => viewLimitProblems(input).length === 0),
]

/** Warnings for the views glueTableInputs leaves out, each naming the view and the limit it would break. */
export const viewsLeftOut = (definition: AthenaTableDefinition): string[] =>
  viewInputs(definition).flatMap((input) => {
    const problems = viewLimitProblems(input)
    return problems.length === 0
      ? []
      : [
          `the view ${input.Name} is not registered: ${problems.join('; ')}; the table itself is registered and can be queried directly`,
        ]
  })

/** Fails with CATALOG_REFUSED when Glue would reject the input; nothing is sent then. */
export const assertGlueAccepts = (input: TableInput, tableId?: string): void => {
  const problems = glueTableInputProblems(input)
  if (problems.length > 0) {
    throw new CatalogRefusedError({ tableId, name: input.Name ?? '(unnamed)', problems })
  }
}
