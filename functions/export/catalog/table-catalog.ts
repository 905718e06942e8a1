/**
 * The catalog port: where a table's definition goes after each publish, so analysts can query it. The Glue
 * catalog (`glue.ts`) implements it on AWS. Locally there is none to keep: `npm run query` builds DuckDB's
 * catalog from the schema registry each time (`functions/local/warehouse-sql.ts`).
 */
import type { TableSchema } from '../schema/table-schema.ts'

export interface TableCatalog {
  /**
   * Makes the catalog's definition of `schema.table` (and its views) match the registered schema. Called on every
   * run, before the registry is written, so a catalog that lost the table heals and a failed update is retried.
   * Resolves to warnings for the run record: views left out because they would break a catalog limit.
   */
  publish(schema: TableSchema): Promise<readonly string[]>
}
