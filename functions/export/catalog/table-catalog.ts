/**
 * The catalog port: where a table's definition goes after each publish, so analysts can query it. The Glue
 * catalog (`glue.ts`) implements it on AWS. Locally there is none to keep: `npm run query` builds DuckDB's
 * catalog from the schema registry each time (`functions/local/warehouse-sql.ts`).
 */
import type { MetadataPointer } from '../iceberg/metadata-pointer.ts'
import type { TableSchema } from '../schema/table-schema.ts'

export interface TableCatalog {
  /**
   * Makes the catalog's definition of `schema.table` (and its views) match the registered schema. Called on every
   * run, before the registry is written, so a catalog that lost the table heals and a failed update is retried.
   * Resolves to warnings for the run record: views left out because they would break a catalog limit.
   */
  /** Resolves to warnings: the views left out of the catalog, each naming the limit it would break. */
  publish(schema: TableSchema, format?: 'hive' | 'iceberg'): Promise<readonly string[]>
  /**
   * Throws the coded refusal when the catalog would refuse the definition of `schema` by its documented rules.
   * Called before the data is published, so that such a refusal leaves the previous date wholly in place.
   */
  check(schema: TableSchema): void
  /** Where an Iceberg table's commits move its current metadata (the Glue table's `metadata_location`). */
  readonly metadataPointer?: MetadataPointer
}
