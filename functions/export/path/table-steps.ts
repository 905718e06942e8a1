/** The small pieces of the table's path (table-export.ts) that are not steps of their own. */
import { athenaTableDefinition } from '../catalog/athena.ts'
import { viewsLeftOut } from '../catalog/glue-inputs.ts'
import type { TableCatalog } from '../catalog/table-catalog.ts'
import type { TableConfig } from '../core/config.ts'
import { LOCAL_GLUE_DATABASE, PARTITION_KEY, RAW_FOLDER } from '../core/constants.ts'
import { toExportError } from '../core/errors.ts'
import type { ColumnRecord, PublishedObject } from '../core/run-record.ts'
import type { NamedColumn } from '../normalize/columns.ts'
import type { WarehouseStore } from '../publish/store.ts'
import type { TableLayout } from '../publish/table-layout.ts'
import type { WritePlan } from '../schema/plan.ts'
import { expireDates } from '../schema/retention.ts'
import type { TableSchema } from '../schema/table-schema.ts'
import type { RawArchiveWriter } from '../source/raw-archive.ts'

/** What the path holds open (files, uploads, readers): released in reverse order, once, when the path ends. */
export class Held {
  readonly #releases: (() => unknown)[] = []

  /** Returns `value`, to be released by `release` when the path ends. */
  hold<T>(value: T, release: (value: T) => unknown): T {
    this.#releases.push(() => release(value))
    return value
  }

  async release(): Promise<void> {
    for (const release of this.#releases.reverse()) await release()
    this.#releases.length = 0
  }
}

/**
 * Catalog: the catalog's warnings; a catalog that did not take the update is reported with the table, published
 * all the same. Locally there is no catalog to tell; `npm run query` leaves out the same views, so the run says so.
 */
export const catalogWarnings = async (
  catalog: TableCatalog | undefined,
  schema: TableSchema,
  root: string,
  format: 'hive' | 'iceberg' = 'hive',
): Promise<readonly string[]> => {
  if (catalog === undefined) {
    return viewsLeftOut(athenaTableDefinition(schema, LOCAL_GLUE_DATABASE, `${root}/${schema.table}/`))
  }
  try {
    return await catalog.publish(schema, format)
  } catch (error) {
    const reason = toExportError(error).message.replace(/\s*\n\s*/g, ' ')
    return [
      `the catalog was not updated (${reason}); the date's data, registry and run index are in place, and the next run updates the catalog`,
    ]
  }
}

/**
 * The registry keeps the key and the controls (schema/history.ts recordedControls), so the catalog and `npm run query` can build `<table>_changes` from it; the dates
 * the view pairs live in the dates relation (schema/export-dates.ts), not here. A registry that still lists
 * `exportDates` (written before the relation existed) is read once for them and written back without.
 */
export const withChangeHistory = (
  plan: WritePlan,
  table: TableConfig,
  controls: Pick<TableSchema, 'pseudonymized' | 'dropped'>,
): WritePlan => {
  const { key: _, exportDates: _legacy, ...schema } = plan.schema
  return { ...plan, schema: { ...schema, ...(table.key ? { key: table.key } : {}), ...controls } }
}

export const columnRecord = ({ name, header, type, textOf }: ColumnRecord): ColumnRecord => ({
  name,
  ...(header === undefined ? {} : { header }),
  type,
  ...(textOf === undefined ? {} : { textOf }),
})

export const archiveWarning = (error: unknown): string => `the raw archive was not written: ${(error as Error).message}`

export const retentionWarning = (error: unknown): string =>
  `the dates past the table's retention were not all removed (${toExportError(error).message.replace(/\s*\n\s*/g, ' ')}); the next run of the table removes the rest`

/** `columnTypes` entries that name no column of the table: the override did nothing, which the run says. */
export const unknownOverrides = (table: TableConfig, columns: readonly NamedColumn[]): string[] => {
  const names = columns.map((c) => c.name)
  return Object.keys(table.columnTypes)
    .filter((name) => !names.includes(name))
    .map((name) => `columnTypes names "${name}", which is not a column of this table (columns: ${names.join(', ')})`)
}

/** `columns.publishInClear` entries the registry no longer needs: the acceptance is recorded, so the entry can go. */
export const settledAcceptances = (table: TableConfig, registered: TableSchema | undefined): string[] =>
  table.columns.publishInClear
    .filter((name) => !registered?.dropped?.includes(name) && !registered?.pseudonymized?.includes(name))
    .map(
      (name) =>
        `columns.publishInClear names "${name}", which is published in clear already: the entry changes nothing now and can go`,
    )

/** Archive: the raw body commits after the data; a failure to archive is reported but does not undo good data. */
export const archive = async (
  raw: RawArchiveWriter | undefined,
): Promise<{ readonly object?: PublishedObject; readonly warnings: readonly string[] }> => {
  if (raw === undefined) return { warnings: [] }
  try {
    const { key, bytes } = await raw.commit()
    return { object: { key, location: key, bytes }, warnings: [] }
  } catch (error) {
    return { warnings: [archiveWarning(error)] }
  }
}

/**
 * Expire: once the date is in place, the dates past the table's retention go (schema/retention.ts). A removal that
 * fails is reported with the table, published all the same: the next run of the table removes what is left.
 */
export const expire = async (
  table: TableConfig,
  store: WarehouseStore,
  layout: TableLayout,
  own: string,
): Promise<{ readonly dates: readonly string[]; readonly warnings: readonly string[] }> => {
  try {
    const { dates } = await expireDates(store, table.name, table.retention ?? false, undefined, layout)
    // A backfill older than the retention keeps is removed by the run that wrote it; the run says so.
    const warnings = dates.includes(own) ? [`dt=${own} is past the table's retention: it was written and removed`] : []
    return { dates, warnings }
  } catch (error) {
    return { dates: [], warnings: [retentionWarning(error)] }
  }
}

/**
 * Purge: once a date is written without the personal data it held (an erasure, a rewrite that drops or
 * pseudonymizes), the versions a versioned bucket keeps of what it replaced go for good: the noncurrent versions of
 * the date's data, and every version and delete marker of its raw bodies (deleted before the rewrite). Noncurrent
 * versions first: when a current delete marker goes, S3 makes the newest version left current again. Returns how
 * many went; a folder keeps no versions, so none.
 */
export const purgeVersions = async (
  store: WarehouseStore,
  layout: TableLayout,
  table: string,
  exportDate: string,
): Promise<number> => {
  // What the layout itself keeps first (an Iceberg table's older snapshots and the files only they read).
  let deleted = await layout.forgetReplaced(exportDate)
  for (const prefix of [...layout.dataPrefixes(exportDate), `${RAW_FOLDER}/${table}/${PARTITION_KEY}=${exportDate}/`]) {
    const versions = await store.listVersions(prefix)
    const earlier = versions.filter((v) => !v.latest)
    const markers = versions.filter((v) => v.latest && v.deleteMarker)
    for (const version of [...earlier, ...markers]) {
      await store.deleteVersion(version.key, version.versionId)
      deleted++
    }
  }
  return deleted
}

/** The bytes of `source` as they come, each chunk given to `tap` first (the hash, the raw archive). */
export async function* tapBytes(
  source: AsyncIterable<Buffer>,
  tap: (chunk: Buffer) => Promise<void>,
): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    await tap(chunk)
    yield chunk
  }
}
