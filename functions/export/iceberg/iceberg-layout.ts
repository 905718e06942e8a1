/**
 * The Iceberg table layout: each export of a date uploads a file of its own (`<table>/data/dt=<date>/<run>.parquet`)
 * and a snapshot commit makes it the date's data, so a reader sees the date's previous file until the commit and
 * the new one after, and time travel reads the old one until its snapshot expires. Snapshots older than a week are
 * expired after each commit (Iceberg's own default keeps five days), so the metadata and the replaced files stay
 * bounded; an erasure expires every snapshot but the current one, so no file that holds the value stays.
 */
import { PARTITION_KEY } from '../core/constants.ts'
import type { WarehouseStore } from '../publish/store.ts'
import type { TableLayout, WrittenFile } from '../publish/table-layout.ts'
import { liveFiles, ManifestEntryStatus, type ManifestFile, manifestDate } from './manifests.ts'
import type { MetadataPointer } from './metadata-pointer.ts'
import {
  commitPartition,
  type IcebergTableLocation,
  keyOfUri,
  readCurrentMetadata,
  readManifest,
  readManifestList,
  uriOfKey,
} from './snapshot-commit.ts'
import { expireSnapshots } from './snapshot-expiry.ts'
import { publishedColumns } from './table-metadata.ts'

/** How long a replaced file stays readable by time travel. */
export const SNAPSHOT_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000

/** The current snapshot's data files, each with its date: what a query of the table reads. */
export const currentDataFiles = async (
  store: WarehouseStore,
  pointer: MetadataPointer,
  location: IcebergTableLocation,
): Promise<{ readonly key: string; readonly exportDate: string }[]> => {
  const current = await readCurrentMetadata(store, pointer, location)
  if (current === undefined) return []
  const files = []
  for (const manifest of await readManifestList(store, location, current.metadata)) {
    for (const entry of await readManifest(store, location, manifest)) {
      if (entry.status === ManifestEntryStatus.DELETED) continue
      files.push({ key: keyOfUri(location, entry.file.file_path), exportDate: entry.file.dt })
    }
  }
  return files
}

/** Manifests read at once while a sweep finds what the kept snapshots reference (S3 round trips, not bytes). */
const SWEEP_READS = 16

/**
 * Removes every file under the table's data/ and metadata/ folders that neither the current metadata file, the
 * metadata files its log names, nor any kept snapshot references: what a run killed before its commit (or
 * during an expiry) left. Run under the table's lease, after a commit, so no other writer's files are in flight.
 */
export const sweepUnreferenced = async (
  store: WarehouseStore,
  pointer: MetadataPointer,
  location: IcebergTableLocation,
): Promise<number> => {
  const current = await readCurrentMetadata(store, pointer, location)
  if (current === undefined) return 0
  const { metadata } = current
  const referenced = new Set([current.metadataKey])
  for (const entry of metadata['metadata-log']) referenced.add(keyOfUri(location, entry['metadata-file']))
  const manifests = new Map<string, ManifestFile>()
  for (const snapshot of metadata.snapshots) {
    referenced.add(keyOfUri(location, snapshot['manifest-list']))
    const asOf = { ...metadata, 'current-snapshot-id': snapshot['snapshot-id'] }
    for (const manifest of await readManifestList(store, location, asOf)) {
      manifests.set(keyOfUri(location, manifest.manifest_path), manifest)
    }
  }
  const all = [...manifests]
  for (let at = 0; at < all.length; at += SWEEP_READS) {
    const read = all.slice(at, at + SWEEP_READS).map(async ([key, manifest]) => {
      referenced.add(key)
      // DELETED entries too: they name files the older kept snapshots still read.
      for (const entry of await readManifest(store, location, manifest)) {
        referenced.add(keyOfUri(location, entry.file.file_path))
      }
    })
    await Promise.all(read)
  }
  const stray = [
    ...(await store.listKeys(`${location.key}/data/`)),
    ...(await store.listKeys(`${location.key}/metadata/`)),
  ].filter((key) => !referenced.has(key))
  for (const key of stray) await store.deleteObject(key)
  return stray.length
}

export const icebergLayout = (
  store: WarehouseStore,
  pointer: MetadataPointer,
  location: IcebergTableLocation,
): TableLayout => {
  const commit = (exportDate: string, files: readonly WrittenFile[], columns: Parameters<TableLayout['publish']>[2]) =>
    commitPartition(store, pointer, location, {
      exportDate,
      files: files.map((file) => ({
        file_path: uriOfKey(location, file.key),
        record_count: file.rows,
        file_size_in_bytes: file.bytes,
        dt: exportDate,
      })),
      columns,
    })
  return {
    format: 'iceberg',
    newDataKey: (exportDate, runId) => `${location.key}/data/${PARTITION_KEY}=${exportDate}/${runId}.parquet`,
    async dates() {
      const current = await readCurrentMetadata(store, pointer, location)
      if (current === undefined) return []
      const manifests = await readManifestList(store, location, current.metadata)
      return manifests.flatMap((m) => (liveFiles(m) > 0 ? (manifestDate(m) ?? []) : []))
    },
    async dataKey(exportDate) {
      const current = await readCurrentMetadata(store, pointer, location)
      if (current === undefined) return undefined
      for (const manifest of await readManifestList(store, location, current.metadata)) {
        if (manifestDate(manifest) !== exportDate) continue
        const live = (await readManifest(store, location, manifest)).find(
          (entry) => entry.status !== ManifestEntryStatus.DELETED,
        )
        if (live) return keyOfUri(location, live.file.file_path)
      }
      return undefined
    },
    async publish(exportDate, file, columns) {
      try {
        await commit(exportDate, [file], columns)
      } catch (error) {
        // No snapshot names the file: one this layout wrote goes, and the date keeps the file it had. A file it
        // adopted (a conversion's Hive object) stays where it was.
        if (file.key.startsWith(`${location.key}/data/`)) await store.deleteObject(file.key)
        throw error
      }
      // The date is in place: upkeep that fails now is a warning, and the next commit does it again.
      try {
        await expireSnapshots(store, pointer, location, { olderThanMs: Date.now() - SNAPSHOT_MAX_AGE_MS })
        await sweepUnreferenced(store, pointer, location)
        return []
      } catch (error) {
        const reason = (error as Error).message.replace(/\s*\n\s*/g, ' ')
        return [`the Iceberg snapshots older than 7 days were not expired (the next export tries again): ${reason}`]
      }
    },
    async removeDates(dates) {
      const current = await readCurrentMetadata(store, pointer, location)
      if (current === undefined) return 0
      // A date the table no longer has (a rerun finishing a retention) makes no empty snapshot.
      const present = new Set(await this.dates())
      const gone = dates.filter((date) => present.has(date))
      if (gone.length === 0) return 0
      for (const date of gone) await commit(date, [], publishedColumns(current.metadata))
      // The dates leave storage too, as they do from the Hive layout: retention is not time travel.
      return (await expireSnapshots(store, pointer, location, { olderThanMs: Number.POSITIVE_INFINITY })).dataFiles
    },
    async forgetReplaced() {
      return (await expireSnapshots(store, pointer, location, { olderThanMs: Number.POSITIVE_INFINITY })).dataFiles
    },
    dataPrefixes: (exportDate) => [`${location.key}/data/${PARTITION_KEY}=${exportDate}/`],
  }
}
