/**
 * Object versions in front of s3rver, which keeps one object per key and no versions. As S3 does for a bucket with
 * versioning enabled (S3 User Guide, "Retaining multiple versions of objects"): a write or a delete of a key keeps
 * the object it replaces as a noncurrent version, a delete without a version id leaves a delete marker as the current
 * version, ListObjectVersions (GET ?versions) lists every version and delete marker newest first, GetObject and
 * HeadObject read a version by its id (a delete marker answers 405), and DeleteObject of a version id removes that
 * version for good, the newest version left becoming current. Without versioning (S3's default) ListObjectVersions
 * lists each object once, as version "null". The noncurrent versions live in memory, beside s3rver's folder.
 */
import { randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'
import type { KoaContext, KoaMiddleware } from './s3rver.ts'

type S3ObjectConstructor = new (
  bucket: string,
  key: string,
  content: Buffer | null,
  metadata: Record<string, string>,
) => { content: unknown }
const S3Object = createRequire(import.meta.url)('s3rver/lib/models/object') as S3ObjectConstructor

interface StoredObject {
  getMetadata(bucket: string, key: string): Promise<Record<string, string>>
  getObject(bucket: string, key: string): Promise<{ content: AsyncIterable<Buffer> | null } | null>
  putObject(object: unknown): Promise<unknown>
  deleteObject(bucket: string, key: string): Promise<void>
  listObjects(bucket: string, options: { prefix: string }): Promise<{ objects: { key: string }[] }>
}

interface Version {
  readonly versionId: string
  readonly deleteMarker: boolean
  readonly lastModified: Date
  /** An object's bytes and metadata; a delete marker has none. */
  readonly body?: Buffer
  readonly metadata?: Record<string, string>
}

const NS = 'http://s3.amazonaws.com/doc/2006-03-01/'
const escapeXml = (text: string): string =>
  text.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!)
const newVersionId = () => randomBytes(16).toString('base64url')

export interface VersionedBucket {
  readonly middleware: KoaMiddleware
  /** Every noncurrent version and delete marker kept, by key (for a test's own look). */
  noncurrent(): ReadonlyMap<string, readonly Version[]>
}

/** The versions model for `bucket`: versioned (`versioned`), or S3's unversioned default. */
export const objectVersions = (versioned: boolean): VersionedBucket => {
  /** The current version of each key the model has seen written (a delete marker, after a delete). */
  const current = new Map<string, Version>()
  const older = new Map<string, Version[]>()
  const store = (ctx: KoaContext) => ctx.store as unknown as StoredObject

  const read = async (ctx: KoaContext, bucket: string, key: string): Promise<Version | undefined> => {
    const object = await store(ctx).getObject(bucket, key)
    if (object?.content == null) return undefined
    const chunks: Buffer[] = []
    for await (const chunk of object.content) chunks.push(chunk)
    const metadata = await store(ctx).getMetadata(bucket, key)
    const known = current.get(`${bucket}/${key}`)
    return {
      versionId: known?.deleteMarker === false ? known.versionId : 'null',
      deleteMarker: false,
      lastModified: new Date(metadata['last-modified'] ?? Date.now()),
      body: Buffer.concat(chunks),
      metadata,
    }
  }

  const retire = (id: string, version: Version | undefined) => {
    if (version !== undefined) older.set(id, [version, ...(older.get(id) ?? [])])
  }

  /** After the current version of `id` is removed: the newest version left becomes current, as in S3. */
  const promote = async (ctx: KoaContext, bucket: string, key: string) => {
    const id = `${bucket}/${key}`
    const [newest, ...rest] = older.get(id) ?? []
    older.set(id, rest)
    if (newest === undefined) current.delete(id)
    else if (newest.deleteMarker) current.set(id, newest)
    else {
      await store(ctx).putObject(new S3Object(bucket, key, newest.body!, newest.metadata!))
      current.set(id, { ...newest, body: undefined, metadata: undefined } as Version)
    }
  }

  const listVersions = async (ctx: KoaContext, bucket: string) => {
    const prefix = typeof ctx.query.prefix === 'string' ? ctx.query.prefix : ''
    const listed = await store(ctx).listObjects(bucket, { prefix })
    const keys = new Set(listed.objects.map((o) => o.key))
    for (const id of [...current.keys(), ...older.keys()]) {
      const key = id.slice(bucket.length + 1)
      if (id.startsWith(`${bucket}/`) && key.startsWith(prefix)) keys.add(key)
    }
    const entries: string[] = []
    for (const key of [...keys].sort()) {
      const id = `${bucket}/${key}`
      const latest = current.get(id)
      const live =
        latest?.deleteMarker === true
          ? undefined
          : await store(ctx)
              .getMetadata(bucket, key)
              .catch(() => undefined)
      const versions: Version[] = [
        ...(latest?.deleteMarker === true ? [latest] : []),
        ...(live === undefined
          ? []
          : [
              {
                versionId: latest?.versionId ?? 'null',
                deleteMarker: false,
                lastModified: new Date(live['last-modified']!),
                metadata: live,
              },
            ]),
        ...(versioned ? (older.get(id) ?? []) : []),
      ]
      versions.forEach((version, i) => {
        const common = `<Key>${escapeXml(key)}</Key><VersionId>${version.versionId}</VersionId><IsLatest>${i === 0}</IsLatest><LastModified>${version.lastModified.toISOString()}</LastModified>`
        entries.push(
          version.deleteMarker
            ? `<DeleteMarker>${common}</DeleteMarker>`
            : `<Version>${common}<ETag>${version.metadata?.etag ?? '""'}</ETag><Size>${version.metadata?.['content-length'] ?? version.body?.length ?? 0}</Size><StorageClass>STANDARD</StorageClass></Version>`,
        )
      })
    }
    ctx.type = 'application/xml'
    ctx.body =
      `<?xml version="1.0" encoding="UTF-8"?>\n<ListVersionsResult xmlns="${NS}"><Name>${escapeXml(bucket)}</Name>` +
      `<Prefix>${escapeXml(prefix)}</Prefix><IsTruncated>false</IsTruncated>${entries.join('')}</ListVersionsResult>`
  }

  const middleware: KoaMiddleware = async (ctx, next) => {
    const [bucket = '', ...keyParts] = ctx.path.split('/').filter((part) => part !== '')
    if (keyParts.length === 0) {
      if (ctx.method === 'GET' && 'versions' in ctx.query) return listVersions(ctx, bucket)
      return next()
    }
    const key = keyParts.map(decodeURIComponent).join('/')
    const id = `${bucket}/${key}`
    const versionId = typeof ctx.query.versionId === 'string' ? ctx.query.versionId : undefined
    const uploading = 'uploadId' in ctx.query || 'uploads' in ctx.query
    if (versionId !== undefined) return versionRequest(ctx, next, bucket, key, versionId)
    const writes = (ctx.method === 'PUT' && !uploading) || (ctx.method === 'POST' && 'uploadId' in ctx.query)
    const deletes = ctx.method === 'DELETE' && !uploading
    if (!versioned || !(writes || deletes)) return next()
    const replaced = (current.get(id)?.deleteMarker ? current.get(id) : undefined) ?? (await read(ctx, bucket, key))
    await next()
    if (ctx.status >= 300) return
    retire(id, replaced)
    current.set(id, { versionId: newVersionId(), deleteMarker: deletes, lastModified: new Date() })
  }

  const versionRequest = async (
    ctx: KoaContext,
    next: () => Promise<void>,
    bucket: string,
    key: string,
    versionId: string,
  ) => {
    const id = `${bucket}/${key}`
    const latest = current.get(id) ?? (versionId === 'null' ? { versionId: 'null', deleteMarker: false } : undefined)
    const found = (older.get(id) ?? []).find((v) => v.versionId === versionId)
    const isCurrent = latest?.versionId === versionId
    if (ctx.method === 'GET' || ctx.method === 'HEAD') {
      if (isCurrent && !latest!.deleteMarker) {
        const { versionId: _id, ...rest } = ctx.query
        ctx.query = rest
        return next()
      }
      if ((isCurrent && latest!.deleteMarker) || found?.deleteMarker) {
        ctx.status = 405
        ctx.type = 'application/xml'
        ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>MethodNotAllowed</Code><Message>The specified method is not allowed against this resource.</Message></Error>`
        return
      }
      if (found === undefined) {
        ctx.status = 404
        ctx.type = 'application/xml'
        ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchVersion</Code><Message>The specified version does not exist.</Message></Error>`
        return
      }
      ctx.status = 200
      ctx.type = found.metadata?.['content-type'] ?? 'binary/octet-stream'
      ctx.body = ctx.method === 'HEAD' ? null : found.body
      return
    }
    if (ctx.method !== 'DELETE') return next()
    if (found !== undefined)
      older.set(
        id,
        older.get(id)!.filter((v) => v !== found),
      )
    else if (isCurrent) {
      if (!latest!.deleteMarker) await store(ctx).deleteObject(bucket, key)
      await promote(ctx, bucket, key)
    }
    ctx.status = 204
    ctx.body = null
  }

  return { middleware, noncurrent: () => older }
}
