/**
 * A spooled workbook read on a thread of its own, as the CSV's parse stage is (csv/parse-worker.ts): the thread
 * inflates the zip, parses the XML, looks up the shared strings, types the cells and builds the record batches,
 * while this thread names, types, encodes and uploads them. Batches cross in transferred buffers (no copy) and
 * go back for reuse once consumed; at most MAX_BATCHES_IN_FLIGHT are in flight, so the thread never runs more
 * than that ahead of the encoder. Coded errors cross as core/thread-errors.ts describes them.
 *
 * The thread runs this very module: `new Worker(new URL(import.meta.url))` loads this .ts file when run from
 * source and the bundle's index.mjs in the Lambda; the dispatch at the end starts the reading there.
 *
 * Stopping (the table's deadline, or close() before the end): this thread fails the batches at once, then asks
 * the thread to stop, so that it closes the zip and the shared strings' spill files itself (a terminated thread
 * would leave their descriptors open, and an unlinked file's disk space with them); a thread that does not stop
 * within STOP_GRACE_MS is terminated. The spooled file and its spill files are reader.ts's to delete.
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'
import { InternalError } from '../core/errors.ts'
import { describeError, type ErrorDescription, reviveError } from '../core/thread-errors.ts'
import { kernelThreadId, yieldCoresTo } from '../core/thread-priority.ts'
import { Channel } from '../csv/channel.ts'
import type { RecordBatch } from '../normalize/record-batch.ts'
import { readSpooledWorkbook, type SpooledWorkbookOptions, type WorkbookRecords } from './spooled-workbook.ts'

const ROLE = 'inventory-export-workbook-reader'
/** Batches in flight between the threads: enough that reading runs on while this thread encodes a row group. */
const MAX_BATCHES_IN_FLIGHT = 8
/** How long a thread asked to stop may take to close its files before it is terminated. */
const STOP_GRACE_MS = 2000

/** What the thread is given: the signal stays here, the thread gets a stop message instead. */
type ThreadOptions = Omit<SpooledWorkbookOptions, 'signal'>

type ToReader =
  | { readonly type: 'recycle'; readonly bytes: ArrayBuffer; readonly offsets: ArrayBuffer }
  | { readonly type: 'stop' }
type FromReader =
  | {
      readonly type: 'header'
      readonly header: string[]
      readonly sheetName: string
      /** The thread's kernel id, where the platform shows it: the other threads yield their cores to it. */
      readonly thread: number | undefined
    }
  | { readonly type: 'batch'; readonly batch: RecordBatch }
  | { readonly type: 'end'; readonly warnings: string[] }
  | { readonly type: 'error'; readonly error: ErrorDescription }

/** Reads the spooled workbook `file` on a thread of its own; the same records as readSpooledWorkbook's. */
export const readOnThread = async (file: string, options: SpooledWorkbookOptions): Promise<WorkbookRecords> => {
  const { signal, ...threadOptions } = options
  const { tableId } = options
  signal?.throwIfAborted()
  const worker = new Worker(new URL(import.meta.url), {
    workerData: { role: ROLE, file, options: threadOptions satisfies ThreadOptions },
    // Cells still become short-lived strings (and workbook.xml, rels and styles go through saxes): a small young
    // generation keeps that churn small, as on the CSV's parse thread.
    resourceLimits: { maxYoungGenerationSizeMb: 8 },
  })
  const batches = new Channel<RecordBatch>()
  let warnings: string[] = []
  let ended = false
  let closing: Promise<void> | undefined
  let exited = false
  const exit = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
  let header!: (message: Extract<FromReader, { type: 'header' }>) => void
  let noHeader!: (error: unknown) => void
  const headerReceived = new Promise<Extract<FromReader, { type: 'header' }>>((resolve, reject) => {
    header = resolve
    noHeader = reject
  })
  const fail = (error: unknown) => {
    batches.fail(error)
    noHeader(error)
  }
  worker.on('message', (message: FromReader) => {
    if (message.type === 'header') header(message)
    else if (message.type === 'batch') batches.push(message.batch)
    else if (message.type === 'end') {
      warnings = message.warnings
      ended = true
      batches.end()
    } else fail(reviveError(message.error, tableId))
  })
  worker.on('error', (error) => fail(new InternalError({ tableId, reason: error.message })))
  worker.on('exit', (code) => {
    exited = true
    if (!ended && closing === undefined) {
      fail(new InternalError({ tableId, reason: `the workbook thread exited (${code}) before the sheet's end` }))
    }
  })

  const stop = async () => {
    signal?.removeEventListener('abort', onAbort)
    if (!exited) {
      worker.postMessage({ type: 'stop' } satisfies ToReader)
      let timer: NodeJS.Timeout | undefined
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, STOP_GRACE_MS)
      })
      await Promise.race([exit, late])
      clearTimeout(timer)
      await worker.terminate()
    }
  }
  const close = () => {
    closing ??= stop()
    return closing
  }
  // The deadline fails the table at once, with the same reason the reading raises on the calling thread.
  const onAbort = () => {
    fail(signal!.reason)
    // The batches carry the failure; a thread that cannot be stopped has ended already.
    close().catch(() => undefined)
  }
  signal?.addEventListener('abort', onAbort, { once: true })

  let first: Extract<FromReader, { type: 'header' }>
  try {
    first = await headerReceived
  } catch (error) {
    await close()
    throw error
  }
  // From here the reading thread sets the pace; this thread encodes on the other core, with time to spare.
  if (first.thread !== undefined) yieldCoresTo(first.thread)
  return {
    header: first.header,
    batches,
    sheetName: first.sheetName,
    warnings: () => warnings,
    recycle: (bytes, offsets) => {
      if (!exited && closing === undefined) {
        worker.postMessage({ type: 'recycle', bytes, offsets } satisfies ToReader, [bytes, offsets])
      }
    },
    close,
  }
}

/** The thread: the spooled file in, the header and batches out; the batch buffers come back for reuse. */
const runReaderThread = async (file: string, options: ThreadOptions): Promise<void> => {
  const port = parentPort!
  const post = (message: FromReader, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer)
  const stopped = new AbortController()
  let batchesInFlight = 0
  let batchCredit: (() => void) | undefined
  let recycle: (bytes: ArrayBuffer, offsets: ArrayBuffer) => void = () => undefined
  port.on('message', (message: ToReader) => {
    if (message.type === 'recycle') {
      recycle(message.bytes, message.offsets)
      batchesInFlight--
    } else stopped.abort()
    batchCredit?.()
  })
  let records: WorkbookRecords | undefined
  try {
    records = await readSpooledWorkbook(file, { ...options, signal: stopped.signal })
    recycle = records.recycle
    post({ type: 'header', header: [...records.header], sheetName: records.sheetName, thread: kernelThreadId() })
    for await (const batch of records.batches) {
      while (batchesInFlight >= MAX_BATCHES_IN_FLIGHT && !stopped.signal.aborted) {
        await new Promise<void>((resolve) => (batchCredit = resolve))
      }
      stopped.signal.throwIfAborted()
      batchesInFlight++
      post({ type: 'batch', batch }, [batch.bytes.buffer as ArrayBuffer, batch.offsets.buffer as ArrayBuffer])
    }
    post({ type: 'end', warnings: records.warnings() })
  } catch (error) {
    // Asked to stop: the calling thread has failed the batches already and waits only for the exit.
    if (!stopped.signal.aborted) post({ type: 'error', error: describeError(error) })
  } finally {
    await records?.close()
  }
  port.close()
}

if (!isMainThread && workerData?.role === ROLE) {
  // It posts its own failures; anything else ends the thread with an 'error' the calling thread codes.
  void runReaderThread(workerData.file as string, workerData.options as ThreadOptions)
}
