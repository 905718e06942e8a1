/**
 * Where the encoder's bytes go: one upload, opened at the first byte and committed only after the last, so the
 * previous object stays visible until the new one is complete. Writes are queued in order; a restart (the rare
 * re-encode) aborts the upload and opens a new one; any failure aborts it.
 */
import { PublishError } from '../core/errors.ts'
import type { PublishedObject } from '../core/run-record.ts'
import type { ObjectUpload, WarehouseStore } from '../publish/store.ts'
import type { EncodedOutput } from './table-encoder.ts'

export const PARQUET_CONTENT_TYPE = 'application/vnd.apache.parquet'

/** Bytes queued for the upload beyond which the encoder waits (S3 takes them in 5+ MiB parts). */
const MAX_PENDING_BYTES = 4 * 1024 * 1024

export class ParquetUpload implements EncodedOutput {
  readonly #store: WarehouseStore
  readonly #key: string
  #upload: Promise<ObjectUpload> | undefined
  #queue: Promise<void> = Promise.resolve()
  #pending = 0
  #failure: unknown
  #committed = false
  readonly #stopListening: () => void

  /** When `signal` fires the upload is aborted at once, so a write waiting on the store's backpressure is freed. */
  constructor(store: WarehouseStore, key: string, signal?: AbortSignal) {
    this.#store = store
    this.#key = key
    const onAbort = () => void this.abort()
    signal?.addEventListener('abort', onAbort, { once: true })
    this.#stopListening = () => signal?.removeEventListener('abort', onAbort)
  }

  write(bytes: Uint8Array): void {
    this.#pending += bytes.length
    this.#enqueue(async () => {
      this.#upload ??= this.#store.openUpload(this.#key, PARQUET_CONTENT_TYPE)
      await (await this.#upload).write(bytes)
      this.#pending -= bytes.length
    })
  }

  restart(): void {
    this.#enqueue(async () => {
      const upload = this.#upload
      this.#upload = undefined
      await (await upload)?.abort()
    })
  }

  /** Resolves when the bytes written so far are taken in (backpressure); rejects with the upload's failure. */
  async drained(): Promise<void> {
    if (this.#pending > MAX_PENDING_BYTES) await this.#queue
    if (this.#failure !== undefined) throw this.#failure
  }

  /** Waits for every byte, then makes the object visible. */
  async commit(): Promise<PublishedObject> {
    await this.#queue
    if (this.#failure !== undefined) throw this.#failure
    this.#upload ??= this.#store.openUpload(this.#key, PARQUET_CONTENT_TYPE)
    const { location, bytes } = await (await this.#upload).commit()
    this.#committed = true
    this.#stopListening()
    return { key: this.#key, location, bytes }
  }

  /** Drops the upload unless it was committed; the previous object stays as it was. */
  async abort(): Promise<void> {
    if (this.#committed) return
    this.#stopListening()
    this.#failure ??= new PublishError({ target: this.#key, reason: 'the upload was aborted; nothing was published' })
    // The open upload first: a write in the queue waiting on the store's backpressure then fails instead of
    // holding the abort until the store takes it. Then again once the queue settled, for one it opened meanwhile
    // (an upload's abort is idempotent).
    await this.#abortOpen()
    await this.#queue
    await this.#abortOpen()
    this.#upload = undefined
  }

  async #abortOpen(): Promise<void> {
    await (await this.#upload?.catch(() => undefined))?.abort().catch(() => undefined)
  }

  #enqueue(task: () => Promise<void>): void {
    this.#queue = this.#queue
      .then(() => (this.#failure === undefined ? task() : undefined))
      .catch((error: unknown) => {
        this.#failure ??= error
      })
  }
}
