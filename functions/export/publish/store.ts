/**
 * Publish stage interface. An object becomes visible only when its upload commits, in one step, replacing any
 * previous object under the same key; an aborted upload leaves the previous object untouched.
 * Implementations: a local folder (rename) and S3 (multipart upload whose completion is the commit).
 */

export interface ObjectUpload {
  /** Appends bytes; resolves when they are accepted (backpressure). */
  write(chunk: Uint8Array): Promise<void>
  /** Makes the object visible under its key, replacing the previous one atomically. */
  commit(): Promise<{ readonly bytes: number; readonly location: string }>
  /** Drops everything written; the previous object stays as it was. */
  abort(): Promise<void>
}

export interface VersionedObject {
  readonly body: Buffer
  /** Opaque: an S3 ETag, or a hash of a file's content. */
  readonly version: string
}

export interface ObjectTail {
  readonly tail: Buffer
  /** The whole object's size in bytes. */
  readonly size: number
}

/** One version of an object, as a versioned bucket keeps them. */
export interface StoredVersion {
  readonly key: string
  /** `null` in a store or bucket that keeps no versions. */
  readonly versionId: string
  /** The current version (or delete marker) of its key; the others are noncurrent. */
  readonly latest: boolean
  /** A delete marker: what a versioned bucket leaves as the current version of a deleted object. */
  readonly deleteMarker: boolean
}

export interface WarehouseStore {
  /** Where keys land, for messages: a folder path or an `s3://bucket/prefix` URI. */
  readonly root: string
  /** Starts a streamed upload of `key` (a `/`-separated path relative to the warehouse root). */
  openUpload(key: string, contentType: string): Promise<ObjectUpload>
  /** Writes a small object in one step (run records, schemas). */
  putObject(key: string, body: string | Uint8Array, contentType: string): Promise<string>
  /** Reads a small object, or undefined when there is none. */
  getObject(key: string): Promise<Buffer | undefined>
  /** Reads a small object with its version, for a read-modify-write; undefined when there is none. */
  getObjectVersion(key: string): Promise<VersionedObject | undefined>
  /**
   * Writes a small object only if it is still at `version` (undefined: only if there is none yet); otherwise
   * throws WriteConflictError and writes nothing, so that two writers can never lose each other's change.
   */
  putObjectIfVersion(
    key: string,
    body: string | Uint8Array,
    contentType: string,
    version: string | undefined,
  ): Promise<string>
  /**
   * The last `bytes` bytes of an object (all of it when it is smaller) and its whole size, or undefined when there
   * is none: a Parquet footer without reading the data before it.
   */
  readTail(key: string, bytes: number): Promise<ObjectTail | undefined>
  /** Streams an object of any size, or undefined when there is none. */
  readObject(key: string): Promise<AsyncIterable<Buffer> | undefined>
  /** Keys under a prefix (relative to the root). */
  listKeys(prefix: string): Promise<string[]>
  /** Removes an object; one that is not there is no failure, so a removal can be repeated after a crash. */
  deleteObject(key: string): Promise<void>
  /**
   * Every version of the objects under a prefix, the current one first per key: a versioned bucket's noncurrent versions and
   * delete markers too; a folder (or an unversioned bucket) has only its current objects, as version `null`.
   */
  listVersions(prefix: string): Promise<StoredVersion[]>
  /** Removes one version of an object for good (a noncurrent one, or a delete marker); an absent one is no failure. */
  deleteVersion(key: string, versionId: string): Promise<void>
}
