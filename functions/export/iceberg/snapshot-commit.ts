/**
 * One Iceberg commit: the files of one export date replaced by new ones, as one snapshot. Everything the snapshot
 * needs (its date's manifest, the manifest list, the metadata file) is written first under names no one else
 * uses; then the pointer moves, or does not. A writer that loses the race removes what it wrote, reads the new
 * current metadata and tries again on top of it, so two dates committed at once both land, and a reader only
 * ever sees a metadata file that was swapped in whole. A commit killed before the swap leaves files nothing
 * references: the table is as it was.
 */
import { randomUUID } from 'node:crypto'
import { IcebergForeignCommitError, StateCorruptError, WriteConflictError } from '../core/errors.ts'
import type { WarehouseStore } from '../publish/store.ts'
import {
  type DataFile,
  decodeManifest,
  decodeManifestList,
  encodeManifest,
  encodeManifestList,
  liveFiles,
  type ManifestEntry,
  ManifestEntryStatus,
  type ManifestFile,
  manifestDate,
} from './manifests.ts'
import type { CurrentMetadata, MetadataPointer } from './metadata-pointer.ts'
import {
  currentSchema,
  currentSnapshot,
  newSnapshotId,
  newTableMetadata,
  type PublishedColumn,
  type TableMetadata,
  withColumns,
  withSnapshot,
} from './table-metadata.ts'

/** Where an Iceberg table is: its key prefix in the store, and the URI readers open its files by. */
export interface IcebergTableLocation {
  /** The table's name, which the pointer is kept by. */
  readonly table: string
  /** Prefix of every key of the table in the store, e.g. `devices`. */
  readonly key: string
  /** The same place as readers name it, e.g. `s3://bucket/warehouse/devices`. */
  readonly uri: string
}

export interface PartitionReplacement {
  readonly exportDate: string
  /** The date's files after the commit (none: the date leaves the table). */
  readonly files: readonly DataFile[]
  /** The table's columns as its files have them, in order. */
  readonly columns: readonly PublishedColumn[]
}

export interface CommittedSnapshot {
  readonly metadataKey: string
  readonly metadata: TableMetadata
  /** The files the date had before, which only older snapshots still reference. */
  readonly replacedFiles: readonly DataFile[]
}

/** Commits lost in a row before giving up: each loss means another date's snapshot landed first. */
const MAX_COMMIT_ATTEMPTS = 8

const MANIFEST_TYPE = 'application/avro'

const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8')

/** A file the table's metadata names that is not there: the table's state cannot be read. */
const missing = (store: WarehouseStore, key: string, what: string) =>
  new StateCorruptError({
    key,
    where: store.root,
    reason: `${what} the table's metadata names is missing`,
    hint: 'nothing was committed and the table is as its pointer says; restore the file from an earlier S3 version (aws s3api list-object-versions)',
  })

export const keyOfUri = (location: IcebergTableLocation, uri: string): string => {
  if (!uri.startsWith(`${location.uri}/`)) {
    throw new StateCorruptError({
      key: location.key,
      where: location.uri,
      reason: `the table's metadata names ${uri}, which is not under the table`,
    })
  }
  return `${location.key}${uri.slice(location.uri.length)}`
}

/** Marks the snapshots this exporter commits (their summary's own key), so that another engine's are told apart. */
export const WRITER_KEY = 'inventory.writer'
const WRITER = 'inventory-athena-export'

/**
 * The table's current metadata, as the pointer names it; undefined before its first commit. A current snapshot
 * another engine committed is refused (ICEBERG_FOREIGN_COMMIT): its manifests are not ones this exporter reads.
 */
export const readCurrentMetadata = async (
  store: WarehouseStore,
  pointer: MetadataPointer,
  location: IcebergTableLocation,
): Promise<(CurrentMetadata & { readonly metadata: TableMetadata }) | undefined> => {
  const current = await pointer.read(location.table)
  if (current === undefined) return undefined
  const body = await store.getObject(current.metadataKey)
  if (body === undefined) throw missing(store, current.metadataKey, 'the current metadata file')
  const metadata = JSON.parse(body.toString('utf8')) as TableMetadata
  const snapshot = currentSnapshot(metadata)
  if (snapshot !== undefined && snapshot.summary[WRITER_KEY] !== WRITER) {
    throw new IcebergForeignCommitError({ table: location.table, operation: snapshot.summary.operation })
  }
  return { ...current, metadata }
}

/** A new metadata file's key: numbered by its sequence number, as Iceberg names them, and unique. */
export const metadataFileKey = (location: IcebergTableLocation, sequenceNumber: number): string =>
  `${location.key}/metadata/${String(sequenceNumber).padStart(5, '0')}-${randomUUID()}.metadata.json`

/** The URI of a metadata file the store holds at `key`, as the metadata log names it. */
export const uriOfKey = (location: IcebergTableLocation, key: string): string =>
  `${location.uri}${key.slice(location.key.length)}`

/** The current snapshot's manifests, none when the table has no snapshot yet. */
export const readManifestList = async (
  store: WarehouseStore,
  location: IcebergTableLocation,
  metadata: TableMetadata,
): Promise<ManifestFile[]> => {
  const snapshot = currentSnapshot(metadata)
  if (snapshot === undefined) return []
  const body = await store.getObject(keyOfUri(location, snapshot['manifest-list']))
  if (body === undefined) throw missing(store, keyOfUri(location, snapshot['manifest-list']), 'a manifest list')
  return decodeManifestList(body)
}

export const readManifest = async (
  store: WarehouseStore,
  location: IcebergTableLocation,
  manifest: ManifestFile,
): Promise<ManifestEntry[]> => {
  const body = await store.getObject(keyOfUri(location, manifest.manifest_path))
  if (body === undefined) throw missing(store, keyOfUri(location, manifest.manifest_path), 'a manifest')
  return decodeManifest(body, manifest)
}

const summaryOf = (entries: readonly ManifestEntry[], status: ManifestEntry['status']) => {
  const files = entries.filter((entry) => entry.status === status)
  return { files: files.length, rows: files.reduce((sum, entry) => sum + entry.file.record_count, 0) }
}

/** Writes one manifest and returns its manifest list entry. */
const writeManifest = async (
  store: WarehouseStore,
  location: IcebergTableLocation,
  metadata: TableMetadata,
  entries: readonly ManifestEntry[],
  commit: { readonly snapshotId: number; readonly sequenceNumber: number; readonly exportDate: string },
  written: string[],
): Promise<ManifestFile> => {
  const bytes = await encodeManifest(entries, {
    schema: currentSchema(metadata),
    spec: metadata['partition-specs'][0]!,
  })
  const name = `metadata/${randomUUID()}-m0.avro`
  written.push(`${location.key}/${name}`)
  await store.putObject(`${location.key}/${name}`, bytes, MANIFEST_TYPE)
  const added = summaryOf(entries, ManifestEntryStatus.ADDED)
  const existing = summaryOf(entries, ManifestEntryStatus.EXISTING)
  const deleted = summaryOf(entries, ManifestEntryStatus.DELETED)
  const bound = utf8(commit.exportDate)
  return {
    manifest_path: `${location.uri}/${name}`,
    manifest_length: bytes.length,
    partition_spec_id: 0,
    content: 0,
    sequence_number: commit.sequenceNumber,
    min_sequence_number: Math.min(commit.sequenceNumber, ...entries.map((e) => e.sequenceNumber ?? Infinity)),
    added_snapshot_id: commit.snapshotId,
    added_files_count: added.files,
    existing_files_count: existing.files,
    deleted_files_count: deleted.files,
    added_rows_count: added.rows,
    existing_rows_count: existing.rows,
    deleted_rows_count: deleted.rows,
    partitions: [{ contains_null: false, contains_nan: null, lower_bound: bound, upper_bound: bound }],
    key_metadata: null,
  }
}

/** One attempt: every file of the snapshot written, then the one swap. Throws WriteConflictError on a lost race. */
const attemptCommit = async (
  store: WarehouseStore,
  pointer: MetadataPointer,
  location: IcebergTableLocation,
  replacement: PartitionReplacement,
  written: string[],
): Promise<CommittedSnapshot> => {
  const current = await readCurrentMetadata(store, pointer, location)
  const now = Date.now()
  const base = current?.metadata
  const metadata = withColumns(base ?? newTableMetadata(location.uri, replacement.columns, now), replacement.columns)
  const previous = currentSnapshot(metadata)
  const snapshotId = newSnapshotId()
  const sequenceNumber = metadata['last-sequence-number'] + 1
  const commit = { snapshotId, sequenceNumber, exportDate: replacement.exportDate }
  const manifests = await readManifestList(store, location, metadata)
  const ofDate = manifests.filter((manifest) => manifestDate(manifest) === replacement.exportDate)
  const kept = manifests.filter(
    (manifest) => manifestDate(manifest) !== replacement.exportDate && liveFiles(manifest) > 0,
  )
  const replaced = (await Promise.all(ofDate.map((m) => readManifest(store, location, m))))
    .flat()
    .filter((entry) => entry.status !== ManifestEntryStatus.DELETED)
  const listed: ManifestFile[] = []
  if (replacement.files.length > 0) {
    const added = replacement.files.map((file) => ({
      status: ManifestEntryStatus.ADDED,
      snapshotId,
      sequenceNumber: null,
      file,
    }))
    listed.push(await writeManifest(store, location, metadata, added, commit, written))
  }
  if (replaced.length > 0) {
    // The spec's record of what this snapshot removed: readers skip DELETED entries, expiry reads them.
    const deleted = replaced.map((entry) => ({ ...entry, status: ManifestEntryStatus.DELETED, snapshotId }))
    listed.push(await writeManifest(store, location, metadata, deleted, commit, written))
  }
  const listName = `metadata/snap-${snapshotId}-1-${randomUUID()}.avro`
  const listBytes = await encodeManifestList([...listed, ...kept], {
    id: snapshotId,
    parentId: previous?.['snapshot-id'],
    sequenceNumber,
  })
  written.push(`${location.key}/${listName}`)
  await store.putObject(`${location.key}/${listName}`, listBytes, MANIFEST_TYPE)
  const addedRows = replacement.files.reduce((sum, file) => sum + file.record_count, 0)
  const next = withSnapshot(
    metadata,
    {
      'snapshot-id': snapshotId,
      ...(previous && { 'parent-snapshot-id': previous['snapshot-id'] }),
      'sequence-number': sequenceNumber,
      'timestamp-ms': now,
      'manifest-list': `${location.uri}/${listName}`,
      summary: {
        operation: replaced.length === 0 ? 'append' : replacement.files.length === 0 ? 'delete' : 'overwrite',
        [WRITER_KEY]: WRITER,
        'added-data-files': String(replacement.files.length),
        'deleted-data-files': String(replaced.length),
        'added-records': String(addedRows),
        'deleted-records': String(replaced.reduce((sum, entry) => sum + entry.file.record_count, 0)),
      },
      'schema-id': metadata['current-schema-id'],
    },
    current && uriOfKey(location, current.metadataKey),
  )
  const metadataKey = metadataFileKey(location, sequenceNumber)
  written.push(metadataKey)
  await store.putObject(metadataKey, `${JSON.stringify(next)}\n`, 'application/json')
  await pointer.swap(location.table, metadataKey, current?.token)
  return { metadataKey, metadata: next, replacedFiles: replaced.map((entry) => entry.file) }
}

/** Replaces one export date's files in a snapshot of its own; retries a lost race on the new current metadata. */
export const commitPartition = async (
  store: WarehouseStore,
  pointer: MetadataPointer,
  location: IcebergTableLocation,
  replacement: PartitionReplacement,
): Promise<CommittedSnapshot> => {
  for (let attempt = 1; ; attempt++) {
    const written: string[] = []
    try {
      return await attemptCommit(store, pointer, location, replacement, written)
    } catch (error) {
      // What a failed attempt wrote is referenced by nothing: it goes, whatever the failure.
      await Promise.all(written.map((key) => store.deleteObject(key)))
      if (!(error instanceof WriteConflictError) || attempt === MAX_COMMIT_ATTEMPTS) throw error
    }
  }
}
