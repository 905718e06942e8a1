/**
 * An S3-protocol server on loopback (s3rver) with one bucket, and an S3 client for it. Two shims make s3rver 3.7
 * speak what the store needs: it implements neither AbortMultipartUpload nor ListMultipartUploads (answered here
 * from its own folder layout, so an abort is a real request and "no upload left behind" is asked over the wire),
 * and its ListObjectsV2 continuation tokens use DES, which the OpenSSL of Node 24 refuses (served here as V1
 * marker listings). A third makes it refuse a conditional write whose condition fails, as S3 does, and
 * s3rver-versions.ts adds object versions (ListObjectVersions, and a versioned bucket on request).
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { GetObjectCommand, ListMultipartUploadsCommand, S3Client } from '@aws-sdk/client-s3'
import { objectVersions, type VersionedBucket } from './s3rver-versions.ts'

/** s3rver's built-in account; any other key is refused. */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const
export const S3RVER_REGION = 'us-east-1'
const NS = 'http://s3.amazonaws.com/doc/2006-03-01/'

/** The part of s3rver's Koa context the shims (and test/aws's IAM front) use. */
export interface KoaContext {
  get(header: string): string
  store: { getMetadata(bucket: string, key: string): Promise<{ etag: string }> }
  method: string
  path: string
  query: Record<string, string | string[] | undefined>
  params: Record<string, string>
  status: number
  type: string
  /** The Node response: its 'close' says the body has been sent. */
  res: { once(event: 'close', listener: () => void): void }
  body: unknown
}
export type KoaMiddleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void>
interface S3rverInstance {
  middleware: KoaMiddleware[]
  run(): Promise<{ port: number }>
  close(): Promise<void>
}
type S3rverConstructor = new (options: Record<string, unknown>) => S3rverInstance
const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor

export interface RunningS3 {
  /** e.g. http://127.0.0.1:41234 */
  readonly endpoint: string
  readonly bucket: string
  /** Path-style client with s3rver's credentials. */
  readonly client: S3Client
  /** Environment variables that point an AWS SDK (the handler's) at this server. */
  readonly sdkEnvironment: Record<string, string>
  /** Keys of multipart uploads started and neither completed nor aborted. */
  pendingUploads(): Promise<string[]>
  /** An object's bytes, or undefined when there is none. */
  read(key: string): Promise<Buffer | undefined>
  /** The noncurrent versions and delete markers the bucket keeps (none unless started `versioned`). */
  readonly versions: VersionedBucket
  close(): Promise<void>
}

const escapeXml = (text: string): string =>
  text.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!)

/** s3rver keeps an upload's parts in `<dir>/<bucket>/._S3rver_uploads/<uploadId>/`, with the key in `key`. */
const multipartShim =
  (directory: string): KoaMiddleware =>
  async (ctx, next) => {
    const [bucket, ...keyParts] = ctx.path.split('/').filter((part) => part !== '')
    const uploadsDir = path.join(directory, bucket ?? '', '._S3rver_uploads')
    if (ctx.method === 'GET' && keyParts.length === 0 && 'uploads' in ctx.query) {
      const ids = await readdir(uploadsDir).catch(() => [] as string[])
      const uploads = await Promise.all(
        ids.map(async (id) => ({ id, key: await readFile(path.join(uploadsDir, id, 'key'), 'utf8') })),
      )
      ctx.type = 'application/xml'
      ctx.body =
        `<?xml version="1.0" encoding="UTF-8"?>\n<ListMultipartUploadsResult xmlns="${NS}">` +
        `<Bucket>${escapeXml(bucket ?? '')}</Bucket><IsTruncated>false</IsTruncated>` +
        uploads.map((u) => `<Upload><Key>${escapeXml(u.key)}</Key><UploadId>${u.id}</UploadId></Upload>`).join('') +
        '</ListMultipartUploadsResult>'
      return
    }
    const uploadId = ctx.query.uploadId
    if (ctx.method === 'DELETE' && keyParts.length > 0 && typeof uploadId === 'string') {
      const folder = path.join(uploadsDir, path.basename(uploadId))
      const known = await readdir(folder).then(
        () => true,
        () => false,
      )
      await rm(folder, { recursive: true, force: true })
      ctx.status = known ? 204 : 404
      if (!known) {
        ctx.type = 'application/xml'
        ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>`
      }
      return
    }
    await next()
  }

/**
 * S3 honours If-Match and If-None-Match on PutObject, answering 412 PreconditionFailed when the object's ETag
 * does not match (or, for If-None-Match: *, when there is one); s3rver ignores both. This checks them, one
 * conditional write per key at a time, as S3 settles racing conditional writes.
 */
const conditionalWriteShim = (): KoaMiddleware => {
  const queues = new Map<string, Promise<void>>()
  return async (ctx, next) => {
    const [bucket, ...keyParts] = ctx.path.split('/').filter((part) => part !== '')
    const ifMatch = ctx.get('if-match')
    const ifNoneMatch = ctx.get('if-none-match')
    if (ctx.method !== 'PUT' || keyParts.length === 0 || 'uploadId' in ctx.query || !(ifMatch || ifNoneMatch)) {
      return next()
    }
    const key = keyParts.map(decodeURIComponent).join('/')
    const queued = `${bucket}/${key}`
    const before = queues.get(queued) ?? Promise.resolve()
    let release!: () => void
    const mine = new Promise<void>((resolve) => (release = resolve))
    queues.set(
      queued,
      before.then(() => mine),
    )
    await before
    try {
      const etag = await ctx.store.getMetadata(bucket ?? '', key).then(
        (metadata) => metadata.etag,
        () => undefined,
      )
      const holds = ifNoneMatch === '*' ? etag === undefined : etag === ifMatch
      if (holds) return await next()
      ctx.status = 412
      ctx.type = 'application/xml'
      ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message><Condition>${ifMatch ? 'If-Match' : 'If-None-Match'}</Condition></Error>`
    } finally {
      release()
    }
  }
}

/**
 * S3 replaces an object atomically: a GET sees the old object or the new one, never a file half written. s3rver
 * writes the object's file in place, so a read (or a second write) of the same key while a write is in flight
 * sees 0 bytes or breaks the connection. This runs one request per key at a time, held until its response has
 * been sent (a GET streams its body after the middleware returns); the parts of a multipart upload go unqueued.
 */
const objectLockShim = (): KoaMiddleware => {
  const queues = new Map<string, Promise<void>>()
  return async (ctx, next) => {
    const [bucket, ...keyParts] = ctx.path.split('/').filter((part) => part !== '')
    if (keyParts.length === 0 || ('uploadId' in ctx.query && ctx.method === 'PUT')) return next()
    const queued = `${bucket}/${keyParts.map(decodeURIComponent).join('/')}`
    const before = queues.get(queued) ?? Promise.resolve()
    let release!: () => void
    const mine = new Promise<void>((resolve) => (release = resolve))
    const tail = before.then(() => mine)
    queues.set(queued, tail)
    void tail.then(() => {
      if (queues.get(queued) === tail) queues.delete(queued)
    })
    await before
    ctx.res.once('close', release)
    try {
      await next()
    } catch (error) {
      release()
      throw error
    }
  }
}

const toToken = (key: string): string => Buffer.from(key, 'utf8').toString('base64url')
const fromToken = (token: string): string => Buffer.from(token, 'base64url').toString('utf8')

/** ListObjectsV2 as a V1 listing that starts after the key the continuation token names. */
const listV2Shim: KoaMiddleware = async (ctx, next) => {
  const parts = ctx.path.split('/').filter((part) => part !== '')
  const { 'list-type': listType, 'continuation-token': token, 'start-after': startAfter, ...rest } = ctx.query
  if (ctx.method !== 'GET' || parts.length !== 1 || listType !== '2') return next()
  const marker = typeof token === 'string' ? fromToken(token) : startAfter
  ctx.query = { ...rest, ...(typeof marker === 'string' ? { marker } : {}) }
  await next()
  const result = (ctx.body as { ListBucketResult?: Record<string, unknown> } | undefined)?.ListBucketResult
  if (result === undefined) return
  const contents = (result.Contents ?? []) as { Key: string }[]
  delete result.Marker
  delete result.NextMarker
  result['@'] = { xmlns: NS }
  result.KeyCount = contents.length
  if (typeof token === 'string') result.ContinuationToken = token
  if (result.IsTruncated === true && contents.length > 0) result.NextContinuationToken = toToken(contents.at(-1)!.Key)
}

export interface StartS3Options {
  /** Middleware run before every shim and route, e.g. test/aws's IAM decisions. @default none */
  readonly front?: readonly KoaMiddleware[]
  /** A bucket with versioning enabled (s3rver-versions.ts). @default false, as S3's default */
  readonly versioned?: boolean
}

/** Starts s3rver on 127.0.0.1 (a free port) over a fresh temporary folder, with `bucket` created. */
export const startS3 = async (
  bucket = 'warehouse',
  { front = [], versioned = false }: StartS3Options = {},
): Promise<RunningS3> => {
  const versions = objectVersions(versioned)
  const directory = await mkdtemp(path.join(os.tmpdir(), 's3rver-'))
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    allowMismatchedSignatures: true,
    configureBuckets: [{ name: bucket }],
  })
  // After s3rver's logger and XML encoder (so ctx.body is still an object), before its routes.
  if (server.middleware.length !== 5) throw new Error('s3rver changed its middleware; revisit test/support/s3rver.ts')
  server.middleware.splice(
    2,
    0,
    ...front,
    objectLockShim(),
    multipartShim(directory),
    listV2Shim,
    conditionalWriteShim(),
    // Last: it keeps the version a write replaces only once the write is really made (not a failed condition).
    versions.middleware,
  )
  const { port } = await server.run()
  const endpoint = `http://127.0.0.1:${port}`
  const client = new S3Client({
    endpoint,
    region: S3RVER_REGION,
    forcePathStyle: true,
    credentials: S3RVER_CREDENTIALS,
  })
  return {
    endpoint,
    bucket,
    client,
    sdkEnvironment: {
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_REGION: S3RVER_REGION,
      AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    },
    versions,
    pendingUploads: async () => {
      const listing = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }))
      return (listing.Uploads ?? []).map((upload) => upload.Key ?? '')
    },
    read: async (key) => {
      try {
        const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))
        return Buffer.from((await object.Body?.transformToByteArray()) ?? [])
      } catch (error) {
        if ((error as Error).name === 'NoSuchKey') return undefined
        throw error
      }
    },
    close: async () => {
      client.destroy()
      await server.close()
      await rm(directory, { recursive: true, force: true })
    },
  }
}
