import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { DeadlineError, ErrorCode, PublishError, WriteConflictError } from '../../functions/export/core/errors.ts'
import { S3WarehouseStore } from '../../functions/export/publish/s3.ts'
import type { ObjectUpload } from '../../functions/export/publish/store.ts'
import { type RunningS3, S3RVER_CREDENTIALS, startS3 } from '../support/s3rver.ts'

const MiB = 1024 * 1024
/** The smallest part S3 (and lib-storage) accepts, so a few MiB make several parts. */
const PART_SIZE = 5 * MiB

let s3: RunningS3
beforeAll(async () => {
  s3 = await startS3('warehouse')
})
afterAll(() => s3.close())

const store = (options: ConstructorParameters<typeof S3WarehouseStore>[3] = {}) =>
  new S3WarehouseStore(s3.client, s3.bucket, 'inventory', { partSize: PART_SIZE, ...options })

/** Deterministic bytes: 64 KiB chunks, each filled with its own value. */
const chunksOf = (bytes: number, seed: number): Buffer[] => {
  const chunks: Buffer[] = []
  for (let offset = 0, i = 0; offset < bytes; offset += 64 * 1024, i++) {
    chunks.push(Buffer.alloc(Math.min(64 * 1024, bytes - offset), (seed + i) % 251))
  }
  return chunks
}
const sha256 = (data: Buffer | Buffer[]) =>
  createHash('sha256')
    .update(Array.isArray(data) ? Buffer.concat(data) : data)
    .digest('hex')

const writeAll = async (upload: ObjectUpload, chunks: readonly Buffer[]) => {
  for (const chunk of chunks) await upload.write(chunk)
}

/** Waits until S3 lists a multipart upload in progress for `key`. */
const untilUploadStarted = (key: string) =>
  vi.waitFor(async () => expect(await s3.pendingUploads()).toContain(key), { timeout: 10_000, interval: 50 })

describe('S3WarehouseStore uploads', () => {
  it('commits a streamed upload of three parts in one step: absent before the commit, whole after', async () => {
    const key = 'devices/dt=2026-01-01/data.parquet'
    const chunks = chunksOf(12 * MiB, 1)
    const upload = await store().openUpload(key, 'application/vnd.apache.parquet')
    await writeAll(upload, chunks)
    await untilUploadStarted(`inventory/${key}`)
    expect(await s3.read(`inventory/${key}`)).toBeUndefined()

    const committed = await upload.commit()

    expect(committed).toEqual({ bytes: 12 * MiB, location: `s3://warehouse/inventory/${key}` })
    const stored = await s3.read(`inventory/${key}`)
    expect(stored?.length).toBe(12 * MiB)
    expect(sha256(stored!)).toBe(sha256(chunks))
    expect(await s3.pendingUploads()).toEqual([])
  })

  it.each([
    ['a smaller multipart upload', 6 * MiB],
    ['a single-part upload', 300 * 1024],
  ])('replaces the previous object whole with %s of fewer bytes', async (_, bytes) => {
    const key = `replace-${bytes}/data.parquet`
    const first = await store().openUpload(key, 'application/octet-stream')
    await writeAll(first, chunksOf(11 * MiB, 2))
    await first.commit()

    const smaller = chunksOf(bytes, 3)
    const second = await store().openUpload(key, 'application/octet-stream')
    await writeAll(second, smaller)
    await second.commit()

    const stored = await s3.read(`inventory/${key}`)
    expect(stored?.length).toBe(bytes)
    expect(sha256(stored!)).toBe(sha256(smaller))
  })

  it('aborting keeps the previous object intact and leaves no multipart upload behind', async () => {
    const key = 'abort/data.parquet'
    const previous = chunksOf(1 * MiB, 4)
    const first = await store().openUpload(key, 'application/octet-stream')
    await writeAll(first, previous)
    await first.commit()

    const upload = await store().openUpload(key, 'application/octet-stream')
    await writeAll(upload, chunksOf(12 * MiB, 5))
    await untilUploadStarted(`inventory/${key}`)
    await upload.abort()

    expect(await s3.pendingUploads()).toEqual([])
    expect(sha256((await s3.read(`inventory/${key}`))!)).toBe(sha256(previous))
    await expect(upload.write(Buffer.from('late'))).rejects.toBeInstanceOf(PublishError)
  })

  it('the deadline signal stops an upload in flight with its reason and refuses new uploads', async () => {
    const key = 'deadline/data.parquet'
    const deadline = new AbortController()
    const limited = store({ signal: deadline.signal })
    const upload = await limited.openUpload(key, 'application/octet-stream')
    await writeAll(upload, chunksOf(11 * MiB, 6))
    await untilUploadStarted(`inventory/${key}`)

    deadline.abort(new DeadlineError({ reason: 'the invocation is about to time out' }))

    const late = upload.write(Buffer.alloc(64 * 1024))
    await expect(late).rejects.toBeInstanceOf(DeadlineError)
    await upload.abort()
    expect(await s3.pendingUploads()).toEqual([])
    expect(await s3.read(`inventory/${key}`)).toBeUndefined()
    await expect(limited.openUpload('deadline/other.parquet', 'application/octet-stream')).rejects.toMatchObject({
      code: ErrorCode.DEADLINE_EXCEEDED,
    })
  })
})

describe('S3WarehouseStore small objects', () => {
  it('puts and gets an object under the prefix, and answers undefined for a missing key', async () => {
    const location = await store().putObject('_runs/dt=2026-01-01/run-1.json', '{"ok":true}\n', 'application/json')
    expect(location).toBe('s3://warehouse/inventory/_runs/dt=2026-01-01/run-1.json')
    expect((await store().getObject('_runs/dt=2026-01-01/run-1.json'))?.toString()).toBe('{"ok":true}\n')
    expect(await store().getObject('_runs/dt=2026-01-01/none.json')).toBeUndefined()
  })

  it('streams an object of several chunks back whole, and answers undefined for a missing key', async () => {
    const body = Buffer.alloc(3 * 1024 * 1024 + 17, 'inventory ')
    await store().putObject('_raw/t/dt=2026-01-01/body.csv.gz', body, 'application/gzip')
    const chunks: Buffer[] = []
    for await (const chunk of (await store().readObject('_raw/t/dt=2026-01-01/body.csv.gz'))!) chunks.push(chunk)
    expect(chunks.length).toBeGreaterThan(1)
    expect(Buffer.concat(chunks).equals(body)).toBe(true)
    expect(await store().readObject('_raw/t/dt=2026-01-02/body.csv.gz')).toBeUndefined()
  })

  it('reads the end of an object with its size, all of a smaller one, and undefined for a missing key', async () => {
    const body = Buffer.from('0123456789abcdef')
    await store().putObject('t/dt=2026-01-01/data.parquet', body, 'application/vnd.apache.parquet')
    expect(await store().readTail('t/dt=2026-01-01/data.parquet', 4)).toEqual({ tail: Buffer.from('cdef'), size: 16 })
    expect(await store().readTail('t/dt=2026-01-01/data.parquet', 100)).toEqual({ tail: body, size: 16 })
    expect(await store().readTail('t/dt=2026-01-02/data.parquet', 4)).toBeUndefined()
  })

  it('lists the keys under a folder across pages, relative to the prefix, without sibling folders', async () => {
    const listing = store({ listPageSize: 2 })
    const keys = ['list/a/1.json', 'list/a/2.json', 'list/a/sub/3.json', 'list/a/4.json', 'list/a/5.json']
    for (const key of [...keys, 'list/ab/6.json']) await listing.putObject(key, 'x', 'application/json')
    expect(await listing.listKeys('list/a')).toEqual([...keys].sort())
    expect(await listing.listKeys('list/none')).toEqual([])
  })

  it("keeps the warehouse at the top of the bucket when the prefix is empty (the CLI's --out s3://BUCKET)", async () => {
    const top = new S3WarehouseStore(s3.client, s3.bucket, '', { listPageSize: 1 })
    expect(top.root).toBe('s3://warehouse')
    expect(await top.putObject('top/a/1.json', 'x', 'application/json')).toBe('s3://warehouse/top/a/1.json')
    await top.putObject('top/a/2.json', 'y', 'application/json')
    expect(await s3.read('top/a/1.json')).toEqual(Buffer.from('x'))
    expect((await top.getObject('top/a/2.json'))?.toString()).toBe('y')
    expect(await top.listKeys('top/a')).toEqual(['top/a/1.json', 'top/a/2.json'])
    await expect(top.putObject('/top/b.json', 'x', 'application/json')).rejects.toBeInstanceOf(PublishError)
  })

  it('refuses keys that climb out of the prefix', async () => {
    await expect(store().putObject('../escape.json', 'x', 'application/json')).rejects.toBeInstanceOf(PublishError)
    await expect(store().openUpload('a//b', 'application/json')).rejects.toThrow(/not a relative path/)
  })

  it('turns S3 failures into a PublishError naming the object, without credentials', async () => {
    const missing = new S3WarehouseStore(s3.client, 'no-such-bucket', 'inventory')
    const error = await missing.putObject('_runs/x.json', 'x', 'application/json').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PublishError)
    expect(error).toMatchObject({ code: ErrorCode.PUBLISH_FAILED, failureClass: 'publish' })
    expect((error as Error).message).toContain(
      'writing s3://no-such-bucket/inventory/_runs/x.json failed: NoSuchBucket',
    )
    expect((error as Error).message).not.toContain(S3RVER_CREDENTIALS.secretAccessKey)
  })

  it('fails an upload whose parts S3 refuses, aborting it on the way', async () => {
    const upload = await new S3WarehouseStore(s3.client, 'no-such-bucket', 'inventory', {
      partSize: PART_SIZE,
    }).openUpload('x/data.parquet', 'application/octet-stream')
    const error = await (async () => {
      await writeAll(upload, chunksOf(12 * MiB, 7))
      return upload.commit()
    })().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PublishError)
    expect((error as Error).message).toContain('s3://no-such-bucket/inventory/x/data.parquet')
  })
})

describe('S3WarehouseStore conditional writes', () => {
  it('writes only over the version it read, and refuses a stale one as a write conflict', async () => {
    const key = `_schemas/conditional-${Date.now()}.json`
    const first = store()
    await first.putObjectIfVersion(key, '{"v":1}', 'application/json', undefined)
    const read = await first.getObjectVersion(key)
    expect(read?.body.toString()).toBe('{"v":1}')

    await first.putObjectIfVersion(key, '{"v":2}', 'application/json', read!.version)
    await expect(first.putObjectIfVersion(key, '{"v":3}', 'application/json', read!.version)).rejects.toBeInstanceOf(
      WriteConflictError,
    )
    await expect(first.putObjectIfVersion(key, '{"v":3}', 'application/json', undefined)).rejects.toBeInstanceOf(
      WriteConflictError,
    )
    expect((await s3.read(`inventory/${key}`))?.toString()).toBe('{"v":2}')
  })

  it('lets exactly one of two writers over the same version win', async () => {
    const key = `_schemas/race-${Date.now()}.json`
    await store().putObject(key, '{"v":0}', 'application/json')
    const { version } = (await store().getObjectVersion(key))!
    const results = await Promise.allSettled(
      ['a', 'b'].map((writer) => store().putObjectIfVersion(key, `{"v":"${writer}"}`, 'application/json', version)),
    )
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected'])
    expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toBeInstanceOf(
      WriteConflictError,
    )
  })
})
