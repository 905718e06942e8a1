/**
 * S3 warehouse. An upload is one streamed multipart upload: S3 makes the object visible only when
 * CompleteMultipartUpload succeeds, in one step, replacing the previous object whole; until then readers
 * see the previous object. Aborting sends AbortMultipartUpload, so no parts are left behind.
 */
import { PassThrough } from 'node:stream'
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  ListObjectVersionsCommand,
  type ListObjectVersionsCommandOutput,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { ExportError, PublishError, WriteConflictError } from '../core/errors.ts'
import type { ObjectTail, ObjectUpload, StoredVersion, VersionedObject, WarehouseStore } from './store.ts'

/** 8 MiB parts: S3 needs at least 5 MiB per part but the last; 10,000 parts then allow 80 GB objects. */
const DEFAULT_PART_SIZE = 8 * 1024 * 1024
/** Parts in flight at once; memory is about (queueSize + 1) x partSize. */
const DEFAULT_QUEUE_SIZE = 2

export interface S3WarehouseStoreOptions {
  /** Bytes per multipart part (lib-storage refuses less than 5 MiB). @default DEFAULT_PART_SIZE */
  readonly partSize?: number
  /** Parts uploaded at once. @default DEFAULT_QUEUE_SIZE */
  readonly queueSize?: number
  /** Keys per ListObjectsV2 page. @default 1000 */
  readonly listPageSize?: number
  /** When it fires, uploads in flight are aborted and new ones refused (the Lambda deadline). */
  readonly signal?: AbortSignal | undefined
}

export class S3WarehouseStore implements WarehouseStore {
  readonly root: string
  readonly #client: S3Client
  readonly #bucket: string
  /** `<prefix>/`, or empty at the top of the bucket. */
  readonly #prefix: string
  readonly #options: S3WarehouseStoreOptions

  /**
   * Every key lands under `<prefix>/`; slashes around `prefix` are dropped, and an empty one (the CLI's
   * `--out s3://BUCKET`) puts the warehouse at the top of the bucket.
   */
  constructor(client: S3Client, bucket: string, prefix: string, options: S3WarehouseStoreOptions = {}) {
    this.#client = client
    this.#bucket = bucket
    const trimmed = prefix.replace(/^\/+|\/+$/g, '')
    this.#prefix = trimmed === '' ? '' : `${trimmed}/`
    this.#options = options
    this.root = `s3://${bucket}${trimmed === '' ? '' : `/${trimmed}`}`
  }

  async openUpload(key: string, contentType: string): Promise<ObjectUpload> {
    const objectKey = this.#key(key)
    const { signal } = this.#options
    if (signal?.aborted) throw this.#abortReason(key, signal)
    const body = new PassThrough()
    // Destroying the body with a reason must not become an uncaught 'error' once lib-storage stopped reading it.
    body.on('error', () => undefined)
    const upload = new Upload({
      client: this.#client,
      params: { Bucket: this.#bucket, Key: objectKey, Body: body, ContentType: contentType },
      partSize: this.#options.partSize ?? DEFAULT_PART_SIZE,
      queueSize: this.#options.queueSize ?? DEFAULT_QUEUE_SIZE,
      leavePartsOnError: false,
    })
    let bytes = 0
    let failure: unknown
    let closed = false
    let stopping: Promise<void> | undefined
    // done() consumes `body`; it settles only after a failed upload has been aborted on S3.
    const done = upload.done().catch((error: unknown) => {
      failure ??= error
      body.destroy()
      throw error
    })
    done.catch(() => undefined)
    /** Ends the body with an error: every part uploader stops, then lib-storage sends AbortMultipartUpload. */
    const stop = (reason: Error): Promise<void> => {
      closed = true
      failure ??= reason
      stopping ??= (async () => {
        body.destroy(reason)
        await done.catch(() => undefined)
      })()
      return stopping
    }
    const onAbort = () => void stop(this.#abortReason(key, signal!))
    signal?.addEventListener('abort', onAbort, { once: true })
    const settle = () => signal?.removeEventListener('abort', onAbort)

    return {
      write: async (chunk) => {
        if (closed) throw this.#error(key, failure ?? 'the upload is closed')
        bytes += chunk.length
        if (body.write(chunk)) return
        await drained(body, () => failure ?? 'the upload stream closed').catch((error: unknown) => {
          throw this.#error(key, error)
        })
      },
      commit: async () => {
        if (closed) {
          settle()
          throw this.#error(key, failure ?? 'the upload is closed')
        }
        closed = true
        body.end()
        try {
          await done
          return { bytes, location: `s3://${this.#bucket}/${objectKey}` }
        } catch (error) {
          throw this.#error(key, failure ?? error)
        } finally {
          settle()
        }
      },
      abort: async () => {
        settle()
        await stop(this.#error(key, 'the upload was aborted by the exporter; nothing was published'))
      },
    }
  }

  async putObject(key: string, body: string | Uint8Array, contentType: string): Promise<string> {
    const objectKey = this.#key(key)
    try {
      await this.#client.send(
        new PutObjectCommand({ Bucket: this.#bucket, Key: objectKey, Body: body, ContentType: contentType }),
      )
    } catch (error) {
      throw this.#error(key, error)
    }
    return `s3://${this.#bucket}/${objectKey}`
  }

  async getObjectVersion(key: string): Promise<VersionedObject | undefined> {
    try {
      const response = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }))
      const body =
        response.Body === undefined ? Buffer.alloc(0) : Buffer.from(await response.Body.transformToByteArray())
      return { body, version: response.ETag ?? '' }
    } catch (error) {
      if (await this.#isAbsent(error, key)) return undefined
      throw this.#error(key, error)
    }
  }

  async putObjectIfVersion(
    key: string,
    body: string | Uint8Array,
    contentType: string,
    version: string | undefined,
  ): Promise<string> {
    const objectKey = this.#key(key)
    const condition = version === undefined ? { IfNoneMatch: '*' } : { IfMatch: version }
    try {
      await this.#client.send(
        new PutObjectCommand({
          Bucket: this.#bucket,
          Key: objectKey,
          Body: body,
          ContentType: contentType,
          ...condition,
        }),
      )
    } catch (error) {
      // 412: the ETag moved (or the object appeared); 409: a conditional write to the same key raced this one.
      const name = (error as { name?: string }).name
      if (name === 'PreconditionFailed' || name === 'ConditionalRequestConflict') {
        throw new WriteConflictError({ target: `s3://${this.#bucket}/${objectKey}`, cause: error })
      }
      throw this.#error(key, error)
    }
    return `s3://${this.#bucket}/${objectKey}`
  }

  async getObject(key: string): Promise<Buffer | undefined> {
    try {
      const response = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }))
      return response.Body === undefined ? Buffer.alloc(0) : Buffer.from(await response.Body.transformToByteArray())
    } catch (error) {
      if (await this.#isAbsent(error, key)) return undefined
      throw this.#error(key, error)
    }
  }

  async readTail(key: string, bytes: number): Promise<ObjectTail | undefined> {
    try {
      // The size first, then a range from it: a suffix range (`bytes=-N`) would save the request on S3, but
      // stand-ins of S3 read it as the first N bytes.
      const head = await this.#client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }))
      const size = head.ContentLength ?? 0
      if (size === 0) return { tail: Buffer.alloc(0), size }
      const Range = `bytes=${Math.max(0, size - bytes)}-${size - 1}`
      const response = await this.#client.send(
        new GetObjectCommand({ Bucket: this.#bucket, Key: this.#key(key), Range }),
      )
      const tail =
        response.Body === undefined ? Buffer.alloc(0) : Buffer.from(await response.Body.transformToByteArray())
      return { tail, size }
    } catch (error) {
      if (await this.#isAbsent(error, key)) return undefined
      throw this.#error(key, error)
    }
  }

  async readObject(key: string): Promise<AsyncIterable<Buffer> | undefined> {
    try {
      const response = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }))
      // In Node the SDK's body is a Readable: it streams the object as it arrives.
      return (response.Body as AsyncIterable<Buffer> | undefined) ?? (async function* () {})()
    } catch (error) {
      if (await this.#isAbsent(error, key)) return undefined
      throw this.#error(key, error)
    }
  }

  async listKeys(prefix: string): Promise<string[]> {
    const folder = prefix === '' ? '' : `${prefix.replace(/\/+$/, '')}/`
    const keys: string[] = []
    let continuationToken: string | undefined
    do {
      let page: ListObjectsV2CommandOutput
      try {
        page = await this.#client.send(
          new ListObjectsV2Command({
            Bucket: this.#bucket,
            Prefix: `${this.#prefix}${folder}`,
            MaxKeys: this.#options.listPageSize ?? 1000,
            ContinuationToken: continuationToken,
          }),
        )
      } catch (error) {
        throw this.#error(folder, error)
      }
      for (const object of page.Contents ?? []) {
        if (object.Key !== undefined) keys.push(object.Key.slice(this.#prefix.length))
      }
      continuationToken = page.NextContinuationToken
    } while (continuationToken !== undefined)
    return keys.sort()
  }

  /** DeleteObject answers 204 for a key that is not there too; in a versioned bucket it writes a delete marker. */
  async deleteObject(key: string): Promise<void> {
    try {
      await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }))
    } catch (error) {
      throw this.#error(key, error)
    }
  }

  /** ListObjectVersions, a page at a time: versions and delete markers together, newest first per key. */
  async listVersions(prefix: string): Promise<StoredVersion[]> {
    const found: StoredVersion[] = []
    let markers: { KeyMarker?: string; VersionIdMarker?: string } = {}
    for (;;) {
      let page: ListObjectVersionsCommandOutput
      try {
        page = await this.#client.send(
          new ListObjectVersionsCommand({
            Bucket: this.#bucket,
            Prefix: `${this.#prefix}${prefix}`,
            MaxKeys: this.#options.listPageSize ?? 1000,
            ...markers,
          }),
        )
      } catch (error) {
        throw this.#error(prefix, error)
      }
      const entries = [
        ...(page.Versions ?? []).map((v) => ({ ...v, deleteMarker: false })),
        ...(page.DeleteMarkers ?? []).map((m) => ({ ...m, deleteMarker: true })),
      ]
      for (const entry of entries) {
        if (entry.Key === undefined) continue
        found.push({
          key: entry.Key.slice(this.#prefix.length),
          versionId: entry.VersionId ?? 'null',
          latest: entry.IsLatest === true,
          deleteMarker: entry.deleteMarker,
        })
      }
      if (page.IsTruncated !== true) break
      markers = { KeyMarker: page.NextKeyMarker, VersionIdMarker: page.NextVersionIdMarker }
    }
    return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : Number(b.latest) - Number(a.latest)))
  }

  async deleteVersion(key: string, versionId: string): Promise<void> {
    try {
      await this.#client.send(
        new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#key(key), VersionId: versionId }),
      )
    } catch (error) {
      throw this.#error(key, error)
    }
  }

  /**
   * Whether a failed GetObject means the key is not there. S3 answers a missing key 404 NoSuchKey only to a caller
   * that may list the bucket with no prefix; the role may list only under its prefix, so S3 answers it 403
   * AccessDenied (S3 GetObject, "Permissions"). A listing of the key's own name, which the prefix grant covers,
   * tells absence from a real denial: absent only when the key is not listed; a failed listing keeps the 403.
   */
  async #isAbsent(error: unknown, key: string): Promise<boolean> {
    const { name, $metadata } = error as { name?: string; $metadata?: { httpStatusCode?: number } }
    // A HEAD's answer has no body to name its error (the SDK names it by status, or Unknown): only its status says
    // 404 or 403. A named error is taken by its name, so a NoSuchBucket (also 404) is never taken for absent.
    const unnamed = name === 'NotFound' || name === 'Forbidden' || name === 'Unknown'
    const status =
      name === 'NoSuchKey' ? 404 : name === 'AccessDenied' ? 403 : unnamed ? $metadata?.httpStatusCode : undefined
    if (status === 404) return true
    if (status !== 403) return false
    const objectKey = this.#key(key)
    try {
      // The key itself sorts first among the keys it prefixes, so one entry answers.
      const page = await this.#client.send(
        new ListObjectsV2Command({ Bucket: this.#bucket, Prefix: objectKey, MaxKeys: 1 }),
      )
      return !(page.Contents ?? []).some((object) => object.Key === objectKey)
    } catch {
      return false
    }
  }

  /** The full object key; keys are relative and may not climb out of the prefix. */
  #key(key: string): string {
    const segments = key.split('/')
    if (segments.some((segment) => segment === '' || segment === '.' || segment === '..')) {
      throw new PublishError({
        target: `${this.root}/${key}`,
        reason: 'the key is not a relative path of named segments',
      })
    }
    return `${this.#prefix}${key}`
  }

  #abortReason(key: string, signal: AbortSignal): ExportError {
    return signal.reason instanceof ExportError
      ? signal.reason
      : new PublishError({ target: `${this.root}/${key}`, reason: 'the upload was stopped before it completed' })
  }

  #error(key: string, cause: unknown): ExportError {
    if (cause instanceof ExportError) return cause
    return new PublishError({ target: `${this.root}/${key}`, reason: describe(cause), cause })
  }
}

/** An SDK error as "Name (HTTP status): message"; SDK messages carry no credentials. */
const describe = (cause: unknown): string => {
  if (!(cause instanceof Error)) return String(cause)
  const status = (cause as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode
  const name = cause.name && cause.name !== 'Error' ? `${cause.name}${status ? ` (HTTP ${status})` : ''}: ` : ''
  return `${name}${cause.message}`
}

/**
 * Waits until `body` accepts more bytes, or rejects with `failure()` when the upload behind it failed and closed
 * it; the caller turns that into its coded error.
 */
const drained = (body: PassThrough, failure: () => unknown) =>
  new Promise<void>((resolve, reject) => {
    const cleanup = () => {
      body.off('drain', onDrain)
      body.off('close', onClose)
    }
    const onDrain = () => {
      cleanup()
      resolve()
    }
    const onClose = () => {
      cleanup()
      reject(failure())
    }
    body.on('drain', onDrain)
    body.on('close', onClose)
  })
