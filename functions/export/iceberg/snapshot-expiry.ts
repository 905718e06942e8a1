/**
 * Snapshot expiry: the table's history shortened to the snapshots kept, committed as any snapshot is (a new
 * metadata file, one swap), and only then the files that no kept snapshot reaches removed: the expired snapshots'
 * manifest lists, the manifests only they listed and the data files only those manifests named. This is how a
 * replaced or erased date's old file leaves storage; a commit of another date that lands meanwhile makes the
 * swap lose, and the expiry starts again from the new current metadata.
 */
import { WriteConflictError } from '../core/errors.ts'
import type { WarehouseStore } from '../publish/store.ts'
import { ManifestEntryStatus, type ManifestFile } from './manifests.ts'
import type { MetadataPointer } from './metadata-pointer.ts'
import {
  type IcebergTableLocation,
  keyOfUri,
  metadataFileKey,
  readCurrentMetadata,
  readManifest,
  readManifestList,
  uriOfKey,
} from './snapshot-commit.ts'
import type { Snapshot, TableMetadata } from './table-metadata.ts'

export interface ExpiryPolicy {
  /** Snapshots committed before this instant go, but for the current one. */
  readonly olderThanMs: number
}

export interface ExpiredSnapshots {
  readonly snapshots: number
  /** Data files removed from storage: no kept snapshot read them. */
  readonly dataFiles: number
}

const MAX_EXPIRY_ATTEMPTS = 8

const asOf = (metadata: TableMetadata, snapshot: Snapshot): TableMetadata => ({
  ...metadata,
  'current-snapshot-id': snapshot['snapshot-id'],
})

/** The manifest lists of `snapshots` and the manifests they name, as keys in the store. */
const listed = async (
  store: WarehouseStore,
  location: IcebergTableLocation,
  metadata: TableMetadata,
  snapshots: readonly Snapshot[],
) => {
  const lists = new Set<string>()
  const manifests = new Map<string, ManifestFile>()
  for (const snapshot of snapshots) {
    lists.add(keyOfUri(location, snapshot['manifest-list']))
    for (const manifest of await readManifestList(store, location, asOf(metadata, snapshot))) {
      manifests.set(keyOfUri(location, manifest.manifest_path), manifest)
    }
  }
  return { lists, manifests }
}

/** One attempt: the kept history swapped in, and the keys only the expired snapshots reached. */
const attemptExpiry = async (
  store: WarehouseStore,
  pointer: MetadataPointer,
  location: IcebergTableLocation,
  policy: ExpiryPolicy,
): Promise<ExpiredSnapshots> => {
  const current = await readCurrentMetadata(store, pointer, location)
  const metadata = current?.metadata
  const isKept = (s: Snapshot) =>
    s['snapshot-id'] === metadata?.['current-snapshot-id'] || s['timestamp-ms'] >= policy.olderThanMs
  const kept = metadata?.snapshots.filter(isKept) ?? []
  if (current === undefined || metadata === undefined || kept.length === metadata.snapshots.length) {
    return { snapshots: 0, dataFiles: 0 }
  }
  // What to remove is decided from the document this expiry replaces, before the swap. A data file is live in
  // the one manifest that added it, which later snapshots carry over as it is: the files to remove are those
  // live in a manifest no kept snapshot lists, so only those manifests are read.
  const before = await listed(store, location, metadata, metadata.snapshots)
  const after = await listed(store, location, metadata, kept)
  const keptIds = new Set(kept.map((s) => s['snapshot-id']))
  const now = Date.now()
  const next: TableMetadata = {
    ...metadata,
    'last-updated-ms': now,
    snapshots: kept,
    'snapshot-log': metadata['snapshot-log'].filter((entry) => keptIds.has(entry['snapshot-id'])),
    'metadata-log': [
      ...metadata['metadata-log'],
      { 'timestamp-ms': metadata['last-updated-ms'], 'metadata-file': uriOfKey(location, current.metadataKey) },
    ],
  }
  const gone = (all: Iterable<string>, left: { has(key: string): boolean }) => [...all].filter((key) => !left.has(key))
  const expiredManifests = gone(before.manifests.keys(), after.manifests)
  const dataFiles: string[] = []
  for (const key of expiredManifests) {
    for (const entry of await readManifest(store, location, before.manifests.get(key)!)) {
      if (entry.status !== ManifestEntryStatus.DELETED) dataFiles.push(keyOfUri(location, entry.file.file_path))
    }
  }
  // The values leave first: only expiring snapshots read these, and a rerun after a crash finds the rest. The
  // manifests and lists go after the swap, since the current document still names them until it moves; one cut
  // short leaves a few of them, which hold paths and counts and no value of a row.
  for (const key of dataFiles) await store.deleteObject(key)
  const metadataKey = metadataFileKey(location, metadata['last-sequence-number'])
  await store.putObject(metadataKey, `${JSON.stringify(next)}\n`, 'application/json')
  try {
    await pointer.swap(location.table, metadataKey, current.token)
  } catch (error) {
    await store.deleteObject(metadataKey)
    throw error
  }
  for (const key of [...expiredManifests, ...gone(before.lists, after.lists)]) {
    await store.deleteObject(key)
  }
  return { snapshots: metadata.snapshots.length - kept.length, dataFiles: dataFiles.length }
}

/** Expires the snapshots `policy` names, then removes what only they reached; the current snapshot always stays. */
export const expireSnapshots = async (
  store: WarehouseStore,
  pointer: MetadataPointer,
  location: IcebergTableLocation,
  policy: ExpiryPolicy,
): Promise<ExpiredSnapshots> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await attemptExpiry(store, pointer, location, policy)
    } catch (error) {
      if (!(error instanceof WriteConflictError) || attempt === MAX_EXPIRY_ATTEMPTS) throw error
    }
  }
}
