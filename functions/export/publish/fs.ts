/**
 * Local-folder warehouse. Uploads go to a temporary file under `_tmp/` on the same file system and are
 * renamed into place on commit: rename(2) replaces the target atomically, so readers see the old file or
 * the new one, never a part. Temporary files a killed run left behind are removed once they are a day old.
 */
import { createHash, randomUUID } from 'node:crypto'
import { createWriteStream, type WriteStream } from 'node:fs'
import { link, open, readdir, readFile, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { PublishError, StorageFullError, WriteConflictError } from '../core/errors.ts'
import { processIsAlive } from '../scratch/live-process.ts'
import { makeFolder } from '../scratch/make-folder.ts'
import type { ObjectTail, ObjectUpload, StoredVersion, VersionedObject, WarehouseStore } from './store.ts'

const TEMP_FOLDER = '_tmp'
const TEMP_SUFFIX = '.partial'
/** A temporary file untouched for this long belongs to a run that died; live uploads write far more often. */
const STALE_TEMP_MS = 24 * 60 * 60 * 1000
/** A lock is held for one small read and write; one held past this lease belongs to a run that died holding it. */
const LOCK_LEASE_MS = 30 * 1000
const LOCK_POLL_MS = 20

export class FolderWarehouseStore implements WarehouseStore {
  readonly root: string
  #swept: Promise<void> | undefined

  constructor(root: string) {
    this.root = path.resolve(root)
  }

  async openUpload(key: string): Promise<ObjectUpload> {
    const target = this.#path(key)
    let temp: string
    try {
      // A warehouse folder that cannot be created fails as a coded PublishError, as in putObject.
      temp = await this.#tempPath()
    } catch (error) {
      throw this.#error(key, error)
    }
    const stream = createWriteStream(temp, { flags: 'wx' })
    let bytes = 0
    let failure: Error | undefined
    stream.on('error', (error) => {
      failure ??= error
    })
    return {
      write: async (chunk) => {
        try {
          if (failure) throw failure
          bytes += chunk.length
          if (!stream.write(chunk)) await drained(stream)
        } catch (error) {
          throw this.#error(key, error)
        }
      },
      commit: async () => {
        await closeStream(stream)
        if (failure) throw this.#error(key, failure)
        try {
          await syncFile(temp)
          await makeFolder(path.dirname(target))
          await rename(temp, target)
        } catch (error) {
          await rm(temp, { force: true }).catch(() => undefined)
          throw this.#error(key, error)
        }
        return { bytes, location: target }
      },
      abort: async () => {
        // A stream destroyed before its open() has finished still creates the file once the open lands: waiting
        // for 'close' makes sure the file exists, or never will, before it is removed (a failure in the first
        // milliseconds of a table left a .partial behind otherwise).
        if (!stream.closed) {
          const closed = new Promise<void>((resolve) => stream.once('close', () => resolve()))
          stream.destroy()
          await closed
        }
        await rm(temp, { force: true }).catch(() => undefined)
      },
    }
  }

  async putObject(key: string, body: string | Uint8Array): Promise<string> {
    const target = this.#path(key)
    let temp: string | undefined
    try {
      // Inside the try: a warehouse folder that cannot be created fails as a coded PublishError too.
      temp = await this.#tempPath()
      // Flushed before the rename: after a crash the name points at the whole content, never at an empty file.
      const handle = await open(temp, 'wx')
      try {
        await handle.writeFile(body)
        await handle.sync()
      } finally {
        await handle.close()
      }
      await makeFolder(path.dirname(target))
      await rename(temp, target)
    } catch (error) {
      // Not in the way of the real failure: a temp file that cannot even be removed is swept later.
      if (temp) await rm(temp, { force: true }).catch(() => undefined)
      throw this.#error(key, error)
    }
    return target
  }

  async getObjectVersion(key: string): Promise<VersionedObject | undefined> {
    const body = await this.getObject(key)
    return body === undefined ? undefined : { body, version: contentVersion(body) }
  }

  /** Under an exclusive lock file beside the object (`<file>.lock`), which other runs wait for. */
  async putObjectIfVersion(
    key: string,
    body: string | Uint8Array,
    _contentType: string,
    version: string | undefined,
  ): Promise<string> {
    const target = this.#path(key)
    const release = await this.#lock(key, `${target}.lock`)
    try {
      const current = await this.getObjectVersion(key)
      if (current?.version !== version) throw new WriteConflictError({ target })
      return await this.putObject(key, body)
    } finally {
      await release()
    }
  }

  async #lock(key: string, lockPath: string): Promise<() => Promise<void>> {
    await makeFolder(path.dirname(lockPath)).catch((error: unknown) => {
      throw this.#error(key, error)
    })
    const holder = JSON.stringify({ pid: process.pid, host: os.hostname(), expiresAt: Date.now() + LOCK_LEASE_MS })
    for (const started = Date.now(); ; ) {
      try {
        await createWithContent(lockPath, holder)
        return () => rm(lockPath, { force: true })
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw this.#error(key, error)
      }
      const held = await readFile(lockPath, 'utf8').catch(() => undefined)
      // Taken over at once when its holder is gone: a killed run's lock no longer costs the next run its lease.
      if (held !== undefined && abandoned(held)) await removeIfUnchanged(lockPath, held)
      else if (Date.now() - started > LOCK_LEASE_MS) throw new WriteConflictError({ target: lockPath })
      else await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS))
    }
  }

  async getObject(key: string): Promise<Buffer | undefined> {
    try {
      return await readFile(this.#path(key))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    }
  }

  async readTail(key: string, bytes: number): Promise<ObjectTail | undefined> {
    let handle: Awaited<ReturnType<typeof open>>
    try {
      handle = await open(this.#path(key), 'r')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    }
    try {
      const { size } = await handle.stat()
      const length = Math.min(bytes, size)
      const tail = Buffer.alloc(length)
      await handle.read(tail, 0, length, size - length)
      return { tail, size }
    } finally {
      await handle.close()
    }
  }

  async readObject(key: string): Promise<AsyncIterable<Buffer> | undefined> {
    const file = this.#path(key)
    try {
      // Opened here, so that a missing object is told apart from one that fails while it streams.
      const handle = await open(file, 'r')
      return handle.createReadStream({ highWaterMark: 1024 * 1024 })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    }
  }

  async listKeys(prefix: string): Promise<string[]> {
    // The empty prefix lists the whole warehouse, as it does in S3.
    const base = prefix === '' ? this.root : this.#path(prefix)
    try {
      const entries = await readdir(base, { recursive: true, withFileTypes: true })
      return entries
        .filter((entry) => entry.isFile())
        .map((entry) => path.relative(this.root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
        .sort()
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw error
    }
  }

  async deleteObject(key: string): Promise<void> {
    const file = this.#path(key)
    try {
      await rm(file, { force: true })
    } catch (error) {
      throw this.#error(key, error)
    }
    // The date's folder goes with its last object, so a listing of the table shows no empty partitions.
    await rmdirIfEmpty(path.dirname(file), this.root)
  }

  /** A folder keeps no versions: its current objects, each as version `null`. */
  async listVersions(prefix: string): Promise<StoredVersion[]> {
    return (await this.listKeys(prefix)).map((key) => ({ key, versionId: 'null', latest: true, deleteMarker: false }))
  }

  async deleteVersion(key: string, versionId: string): Promise<void> {
    if (versionId !== 'null') throw new PublishError({ target: this.#path(key), reason: 'a folder keeps no versions' })
    await this.deleteObject(key)
  }

  #path(key: string): string {
    const resolved = path.resolve(this.root, ...key.split('/'))
    if (!resolved.startsWith(this.root + path.sep)) {
      throw new PublishError({ target: resolved, reason: `the key ${key} escapes the warehouse folder ${this.root}` })
    }
    return resolved
  }

  async #tempPath(): Promise<string> {
    const folder = path.join(this.root, TEMP_FOLDER)
    await makeFolder(folder)
    // Best effort, once per store: a sweep that fails must not fail the upload.
    this.#swept ??= sweepStaleTempFiles(folder, Date.now() - STALE_TEMP_MS).catch(() => undefined)
    await this.#swept
    return path.join(folder, `${randomUUID()}${TEMP_SUFFIX}`)
  }

  #error(key: string, cause: unknown): PublishError | StorageFullError {
    if ((cause as NodeJS.ErrnoException).code === 'ENOSPC') {
      return new StorageFullError({ path: path.join(this.root, key), cause })
    }
    return new PublishError({
      target: path.join(this.root, key),
      reason: cause instanceof Error ? cause.message : String(cause),
      cause,
    })
  }
}

/**
 * Creates `file` with `content` in one step, failing with EEXIST when it exists: written to a temporary name and
 * hard-linked into place, so a lock file is never seen empty (a run killed between create and write).
 */
const createWithContent = async (file: string, content: string): Promise<void> => {
  const temp = `${file}.${randomUUID()}${TEMP_SUFFIX}`
  await writeFile(temp, content, { flag: 'wx' })
  try {
    await link(temp, file)
  } finally {
    await rm(temp, { force: true })
  }
}

/** Whether a lock's holder is gone: its lease ran out, or it is a process of this host that no longer runs. */
const abandoned = (held: string): boolean => {
  let holder: { pid?: unknown; host?: unknown; expiresAt?: unknown }
  try {
    holder = JSON.parse(held) as typeof holder
  } catch {
    // Not written by this version (an empty file of an older one): it has no holder to wait for.
    return true
  }
  if (typeof holder.expiresAt !== 'number' || holder.expiresAt < Date.now()) return true
  return holder.host === os.hostname() && typeof holder.pid === 'number' && !processIsAlive(holder.pid)
}

/** Removes an abandoned lock unless another run took it over meanwhile (its content changed). */
const removeIfUnchanged = async (file: string, held: string): Promise<void> => {
  const aside = `${file}.${randomUUID()}.stale`
  // Renamed aside first, then compared: a lock that changed hands in between is put back (unless a third run has
  // taken the name since; the conditional write's version check still refuses a lost update then).
  const moved = await rename(file, aside).then(
    () => readFile(aside, 'utf8'),
    () => undefined,
  )
  if (moved === undefined) return
  if (moved !== held) await link(aside, file).catch(() => undefined)
  await rm(aside, { force: true })
}

/** Removes `folder` and its parents up to `root` while they are empty; a folder still in use stays. */
const rmdirIfEmpty = async (folder: string, root: string): Promise<void> => {
  for (let at = folder; at.startsWith(root + path.sep); at = path.dirname(at)) {
    const removed = await rmdir(at).then(
      () => true,
      () => false,
    )
    if (!removed) return
  }
}

const contentVersion = (body: Buffer): string => createHash('sha256').update(body).digest('hex')

/** Flushes a written file to the disk, so that renaming it into place publishes what was written. */
const syncFile = async (file: string): Promise<void> => {
  const handle = await open(file, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** Removes the temporary files of runs that died (killed, out of memory) before they could clean up. */
const sweepStaleTempFiles = async (folder: string, modifiedBefore: number): Promise<void> => {
  for (const name of await readdir(folder)) {
    if (!name.endsWith(TEMP_SUFFIX)) continue
    const file = path.join(folder, name)
    // Another run may remove the same file at the same moment: every step tolerates its absence.
    const info = await stat(file).catch(() => undefined)
    if (info !== undefined && info.mtimeMs < modifiedBefore) await rm(file, { force: true })
  }
}

/** Waits until `stream` takes more bytes; rejects when it fails or is closed first (the upload was aborted). */
const drained = (stream: WriteStream) =>
  new Promise<void>((resolve, reject) => {
    const settle = (error?: Error) => {
      stream.off('drain', onDrain)
      stream.off('error', onError)
      stream.off('close', onClose)
      if (error) reject(error)
      else resolve()
    }
    const onDrain = () => settle()
    const onError = (error: Error) => settle(error)
    const onClose = () =>
      settle(
        new PublishError({
          target: String(stream.path),
          reason: 'the upload was aborted before its bytes were written',
        }),
      )
    stream.on('drain', onDrain)
    stream.on('error', onError)
    stream.on('close', onClose)
  })

const closeStream = (stream: WriteStream) =>
  new Promise<void>((resolve) => {
    if (stream.closed) return resolve()
    stream.end(() => resolve())
    stream.once('error', () => resolve())
  })
