/**
 * A table's file written on a thread of its own (table-file.ts's TableFileWriter, there): this thread keeps
 * learning the types, deciding the plan and uploading, while that one spools the batches, copies and fingerprints
 * them, and encodes and compresses the row groups. With the parse on every core, encoding on the thread that hands
 * the batches on is what sets the pace (docs/performance.md, "What paces the export").
 *
 * Batches cross in transferred buffers and come back, once spooled and copied, to the caller's `recycle`; at most
 * MAX_BATCHES_IN_FLIGHT are over there, so the thread never runs further behind than that and memory stays bounded.
 * The file's bytes come back in order, with the restart and the drain requests among them, so the output sees what
 * it would see with the writer on this thread. Coded errors cross as core/thread-errors.ts describes them.
 *
 * The thread runs this very module (`new Worker(new URL(import.meta.url))`, as csv/parse-worker.ts does), and
 * stops when asked: it closes the spool and the spill files itself (a terminated thread would leave their
 * descriptors open) and is terminated only if it has not within STOP_GRACE_MS.
 */
import { rm } from 'node:fs/promises'
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'
import { InternalError } from '../core/errors.ts'
import { describeError, type ErrorDescription, reviveError } from '../core/thread-errors.ts'
import type { RecordBatch } from '../normalize/record-batch.ts'
import type { WritePlan } from '../schema/plan.ts'
import { GROUP_SPILL_SUFFIXES } from '../scratch/spool-files.ts'
import { type EncodedOutput, type FileWriterPort, type TableFileSetup, TableFileWriter } from './table-file.ts'

const ROLE = 'inventory-export-parquet-encoder'
/** Batches over on the thread, not yet copied: about one row group's worth of the parse thread's batches. */
const MAX_BATCHES_IN_FLIGHT = 8
const STOP_GRACE_MS = 2000

type ToEncoder =
  /** `plan` is sent when it is not the one the last batch came with. */
  | { readonly type: 'add'; readonly batch: RecordBatch; readonly plan?: WritePlan }
  | { readonly type: 'restart'; readonly id: number }
  | { readonly type: 'finish'; readonly id: number; readonly plan: WritePlan }
  | { readonly type: 'drained'; readonly id: number }
  | { readonly type: 'stop' }
type FromEncoder =
  | { readonly type: 'bytes'; readonly bytes: Uint8Array }
  | { readonly type: 'restart' }
  | { readonly type: 'drain'; readonly id: number }
  | { readonly type: 'recycled'; readonly bytes: ArrayBuffer; readonly offsets: ArrayBuffer }
  | { readonly type: 'done'; readonly id: number; readonly rows: number }
  | { readonly type: 'error'; readonly error: ErrorDescription }
  | { readonly type: 'stopped' }

/** Opens the thread that writes `setup`'s file into `output`; pushed batches' buffers come back to `recycle`. */
export const openEncodeThread = (
  setup: TableFileSetup,
  output: EncodedOutput,
  recycle: ((bytes: ArrayBuffer, offsets: ArrayBuffer) => void) | undefined,
): FileWriterPort => {
  const worker = new Worker(new URL(import.meta.url), {
    workerData: { role: ROLE, setup },
    // Each column chunk's values are made and dropped in turn: as the other threads, a small young generation.
    resourceLimits: { maxYoungGenerationSizeMb: 8 },
  })
  const { tableId } = setup
  const replies = new Map<number, { resolve: (rows: number) => void; reject: (error: unknown) => void }>()
  let nextId = 0
  let failure: unknown
  let stopped = false
  let inFlight = 0
  let credit: (() => void) | undefined
  let sentPlan: WritePlan | undefined
  let stoppedReply: (() => void) | undefined
  let exited = false

  const fail = (error: unknown) => {
    failure ??= error
    for (const reply of replies.values()) reply.reject(failure)
    replies.clear()
    credit?.()
  }
  worker.on('message', (message: FromEncoder) => {
    if (message.type === 'bytes') output.write(message.bytes)
    else if (message.type === 'restart') output.restart()
    else if (message.type === 'drain') {
      output.drained().then(
        () => worker.postMessage({ type: 'drained', id: message.id } satisfies ToEncoder),
        (error: unknown) => fail(error),
      )
    } else if (message.type === 'recycled') {
      inFlight--
      credit?.()
      recycle?.(message.bytes, message.offsets)
    } else if (message.type === 'done') {
      replies.get(message.id)?.resolve(message.rows)
      replies.delete(message.id)
    } else if (message.type === 'error') fail(reviveError(message.error, tableId))
    else stoppedReply?.()
  })
  worker.on('error', (error) => fail(new InternalError({ tableId, reason: error.message })))
  worker.on('exit', (code) => {
    exited = true
    stoppedReply?.()
    if (!stopped) fail(new InternalError({ tableId, reason: `the encode thread exited (${code})` }))
  })

  const request = (message: (id: number) => ToEncoder): Promise<number> => {
    if (failure !== undefined) return Promise.reject(failure)
    const id = nextId++
    const reply = new Promise<number>((resolve, reject) => replies.set(id, { resolve, reject }))
    worker.postMessage(message(id))
    return reply
  }

  return {
    add: async (batch, plan) => {
      while (inFlight >= MAX_BATCHES_IN_FLIGHT && failure === undefined) {
        await new Promise<void>((resolve) => (credit = resolve))
      }
      if (failure !== undefined) throw failure
      inFlight++
      const message: ToEncoder = { type: 'add', batch, ...(plan === sentPlan ? {} : { plan }) }
      sentPlan = plan
      worker.postMessage(message, [batch.bytes.buffer as ArrayBuffer, batch.offsets.buffer as ArrayBuffer])
    },
    restart: async () => {
      await request((id) => ({ type: 'restart', id }))
    },
    finish: (plan) => request((id) => ({ type: 'finish', id, plan })),
    close: async () => {
      if (stopped) return
      stopped = true
      fail(new InternalError({ tableId, reason: 'the table encoder was closed' }))
      if (!exited) {
        const done = new Promise<void>((resolve) => (stoppedReply = resolve))
        worker.postMessage({ type: 'stop' } satisfies ToEncoder)
        const late = setTimeout(() => void worker.terminate(), STOP_GRACE_MS)
        await done
        clearTimeout(late)
      }
      // A thread that had to be terminated left its spill files; the spool is its owner's to delete.
      await Promise.all(GROUP_SPILL_SUFFIXES.map((suffix) => rm(`${setup.spoolPath}${suffix}`, { force: true })))
    },
  }
}

/** The thread: one table's writer, its work done in the order it came. */
const runEncoder = (setup: TableFileSetup): void => {
  const port = parentPort!
  const post = (message: FromEncoder, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer)
  const drains = new Map<number, () => void>()
  let nextDrain = 0
  const output: EncodedOutput = {
    // Each piece is a copy of the file's buffer (encode.ts), so it goes over whole.
    write: (bytes) => post({ type: 'bytes', bytes }, [bytes.buffer as ArrayBuffer]),
    restart: () => post({ type: 'restart' }),
    drained: () =>
      new Promise<void>((resolve) => {
        const id = nextDrain++
        drains.set(id, resolve)
        post({ type: 'drain', id })
      }),
  }
  const writer = new TableFileWriter(setup, output)
  let plan: WritePlan | undefined
  let stopping = false
  let queue = Promise.resolve()
  port.on('message', (message: ToEncoder) => {
    if (message.type === 'drained') {
      drains.get(message.id)?.()
      drains.delete(message.id)
      return
    }
    if (message.type === 'stop') {
      stopping = true
      writer.close()
      post({ type: 'stopped' })
      port.close()
      return
    }
    queue = queue.then(async () => {
      if (stopping) return
      try {
        if (message.type === 'add') {
          plan = message.plan ?? plan
          await writer.add(message.batch, plan!)
          const { bytes, offsets } = message.batch
          post({ type: 'recycled', bytes: bytes.buffer as ArrayBuffer, offsets: offsets.buffer as ArrayBuffer }, [
            bytes.buffer as ArrayBuffer,
            offsets.buffer as ArrayBuffer,
          ])
        } else if (message.type === 'restart') {
          await writer.restart()
          post({ type: 'done', id: message.id, rows: 0 })
        } else {
          post({ type: 'done', id: message.id, rows: await writer.finish(message.plan) })
        }
      } catch (error) {
        // The first failure is the table's; the thread then only waits to be stopped.
        if (!stopping) post({ type: 'error', error: describeError(error) })
        stopping = true
      }
    })
  })
}

if (!isMainThread && workerData?.role === ROLE) runEncoder(workerData.setup as TableFileSetup)
