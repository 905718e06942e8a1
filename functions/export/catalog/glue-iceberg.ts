/**
 * The Iceberg metadata pointer on AWS: the Glue table's `metadata_location`, moved as Iceberg's own GlueCatalog
 * moves it. The table is read with its `VersionId`; the commit is an UpdateTable that carries that VersionId and
 * the table as read with only the two locations changed, so Glue refuses it (ConcurrentModificationException)
 * when another commit landed in between. A first commit creates the table, and loses to another first commit
 * with AlreadyExistsException. Either loss is a WriteConflictError: the writer reads again and retries.
 */
import {
  CreateTableCommand,
  GetTableCommand,
  type GlueClient,
  type Table,
  type TableInput,
  UpdateTableCommand,
} from '@aws-sdk/client-glue'
import { StateCorruptError, WriteConflictError } from '../core/errors.ts'
import type { CurrentMetadata, MetadataPointer } from '../iceberg/metadata-pointer.ts'

/** Glue's parameters for an Iceberg table, as Iceberg's GlueCatalog and Athena write them. */
const TABLE_TYPE = 'table_type'
const ICEBERG = 'ICEBERG'
const METADATA_LOCATION = 'metadata_location'
const PREVIOUS_METADATA_LOCATION = 'previous_metadata_location'

/** The SDK names each service exception's class by the `__type` Glue answered. */
const isNamed = (error: unknown, name: string): boolean => (error as { name?: unknown } | undefined)?.name === name

/** The parts of a table UpdateTable takes back: what GetTable answers, less what Glue keeps for itself. */
const asInput = (table: Table): TableInput => ({
  Name: table.Name,
  ...(table.Description === undefined ? {} : { Description: table.Description }),
  TableType: table.TableType,
  Parameters: table.Parameters,
  StorageDescriptor: table.StorageDescriptor,
  ...(table.PartitionKeys === undefined ? {} : { PartitionKeys: table.PartitionKeys }),
})

/**
 * A Hive-layout table (the same name, partition projection on `dt`) as the Iceberg table it becomes: Iceberg
 * keeps the partitions and the schema in its metadata, so the serde, the partition keys and the projection go;
 * the columns stay for Glue's console, `dt` among them.
 */
const convertedFromHive = (table: Table): TableInput => ({
  Name: table.Name,
  ...(table.Description === undefined ? {} : { Description: table.Description }),
  TableType: 'EXTERNAL_TABLE',
  Parameters: { [TABLE_TYPE]: ICEBERG },
  StorageDescriptor: {
    Location: table.StorageDescriptor?.Location,
    Columns: [...(table.StorageDescriptor?.Columns ?? []), ...(table.PartitionKeys ?? [])],
  },
})

/**
 * `rootUri` is where the store's keys start as Glue names them (e.g. `s3://bucket/inventory`), so a key of the
 * store and a `metadata_location` convert into each other. A table of the Hive layout under the same name becomes
 * the Iceberg table with the first commit, by the same conditional UpdateTable. Nothing is kept between calls, so
 * one pointer serves any number of commits at once.
 */
export const glueMetadataPointer = (glue: GlueClient, database: string, rootUri: string): MetadataPointer => {
  const root = rootUri.replace(/\/+$/, '')
  const target = (table: string) => `glue:${database}.${table}`
  const getTable = async (table: string): Promise<Table | undefined> => {
    try {
      return (await glue.send(new GetTableCommand({ DatabaseName: database, Name: table }))).Table
    } catch (error) {
      if (isNamed(error, 'EntityNotFoundException')) return undefined
      throw error
    }
  }
  const isIceberg = (table: Table | undefined) => table?.Parameters?.[TABLE_TYPE] === ICEBERG
  return {
    async read(table: string): Promise<CurrentMetadata | undefined> {
      const found = await getTable(table)
      const location = found?.Parameters?.[METADATA_LOCATION]
      if (found === undefined || location === undefined || !isIceberg(found)) return undefined
      if (!location.startsWith(`${root}/`)) {
        throw new StateCorruptError({
          key: table,
          where: `glue:${database}`,
          reason: `its metadata_location ${location} is not under the warehouse ${root}`,
          hint: 'nothing was written; point the Glue table back at the warehouse, or delete it to have it made again',
        })
      }
      return { metadataKey: location.slice(root.length + 1), token: found.VersionId ?? '' }
    },
    async swap(table: string, metadataKey: string, token: string | undefined): Promise<void> {
      const metadataLocation = `${root}/${metadataKey}`
      const conflict = (cause?: unknown) => new WriteConflictError({ target: target(table), cause })
      try {
        // Read again for the table as it is; Glue's VersionId check makes the update conditional all the same.
        const base = await getTable(table)
        if (base === undefined) {
          if (token !== undefined) throw conflict()
          const TableInput: TableInput = {
            Name: table,
            TableType: 'EXTERNAL_TABLE',
            Parameters: { [TABLE_TYPE]: ICEBERG, [METADATA_LOCATION]: metadataLocation },
            StorageDescriptor: { Location: `${root}/${table}` },
          }
          await glue.send(new CreateTableCommand({ DatabaseName: database, TableInput }))
          return
        }
        if (isIceberg(base) ? base.VersionId !== token : token !== undefined) throw conflict()
        const input = isIceberg(base) ? asInput(base) : convertedFromHive(base)
        const previous = base.Parameters?.[METADATA_LOCATION]
        await glue.send(
          new UpdateTableCommand({
            DatabaseName: database,
            VersionId: isIceberg(base) ? token : base.VersionId,
            // As Iceberg's GlueCatalog: the metadata log keeps the history, not Glue's archived table versions.
            SkipArchive: true,
            TableInput: {
              ...input,
              Parameters: {
                ...input.Parameters,
                [METADATA_LOCATION]: metadataLocation,
                ...(previous === undefined ? {} : { [PREVIOUS_METADATA_LOCATION]: previous }),
              },
            },
          }),
        )
      } catch (error) {
        if (error instanceof WriteConflictError) throw error
        if (isNamed(error, 'ConcurrentModificationException') || isNamed(error, 'AlreadyExistsException')) {
          throw conflict(error)
        }
        throw error
      }
    },
  }
}
