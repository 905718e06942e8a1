/**
 * The Iceberg commit's port: where a table's current metadata file is named, and the one atomic move of that name
 * that commits a snapshot. Iceberg's own catalogs work this way: Glue holds `metadata_location` and moves it with
 * `UpdateTable` and the `VersionId` it read (catalog/glue-iceberg.ts); locally a pointer object moves with a
 * conditional put (the store's putObjectIfVersion). A writer that loses the race reads the new current metadata
 * and tries again on top of it; no reader ever sees a metadata file that was not swapped in whole.
 */

/** The table's current metadata as the pointer names it. */
export interface CurrentMetadata {
  /** The metadata JSON's key relative to the warehouse root, e.g. `devices/metadata/00003-<uuid>.metadata.json`. */
  readonly metadataKey: string
  /** Opaque: what `swap` must be given to move from this state (Glue's VersionId, or the pointer's version). */
  readonly token: string
}

export interface MetadataPointer {
  /** The current metadata of `table` (its published name), or undefined when it has none yet. */
  read(table: string): Promise<CurrentMetadata | undefined>
  /**
   * Names `metadataKey` as the current metadata of `table`, only if the pointer is still at `token` (undefined:
   * only if the table has none yet). Otherwise throws WriteConflictError and moves nothing.
   */
  swap(table: string, metadataKey: string, token: string | undefined): Promise<void>
}
