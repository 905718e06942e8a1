/**
 * The parse stage on a thread of its own. Parsing is the export's bottleneck, so on two cores it gets a core to
 * itself: this thread keeps receiving and hashing the download, inferring types, encoding Parquet and uploading,
 * while the parse thread decodes, runs csv-parse and builds record batches. csv-parse creates a string per field;
 * on its own thread that churn stays in a small young generation instead of growing this thread's heap.
 *
 * The thread runs this very module: `new Worker(new URL(import.meta.url))` loads this .ts file when run from
 * source and the bundle's index.mjs in the Lambda, and the dispatch at the end starts the parse loop there. Bytes
 * and batches cross in transferred buffers (no copy), and go back for reuse once consumed. With one core, or a
 * body that ends within its first MiB, the same stage runs on this thread instead (`parseInline`). With three vCPUs
 * or more and a body past its first 4 MiB, chunks of it are parsed on every core instead (`parallel-parse.ts`).
 */
import { availableParallelism } from 'node:os'
import { isMainThread, type MessagePort, parentPort, Worker, workerData } from 'node:worker_threads'
import type { Delimiter } from '../core/constants.ts'
import { InternalError } from '../core/errors.ts'
import { parseThreadCount } from '../core/parse-threads.ts'
import { describeError, type ErrorDescription, reviveError } from '../core/thread-errors.ts'
import { kernelThreadId, yieldCoresTo } from '../core/thread-priority.ts'
import type { RecordBatch } from '../normalize/record-batch.ts'
import { Channel } from './channel.ts'
import { replay } from './chunks.ts'
import type { DecodeReport } from './decode.ts'
import { type ParallelShape, parseInParallel } from './parallel-parse.ts'
import { type ParsedTable, parseInline, type TableParserOptions } from './table-parser.ts'

const ROLE = 'inventory-export-csv-parser'
/** Body bytes copied into each block sent to the parse thread. */
const BLOCK_BYTES = 1024 * 1024
/** Bytes handed to csv-parse at a time (the size of a socket read). */
const PARSE_SLICE_BYTES = 64 * 1024
/** A body that ends within this many bytes is parsed here: a thread would cost more than it saves. */
const THREAD_THRESHOLD = BLOCK_BYTES
/** A body that ends within this many bytes gets one parse thread: starting one per core would cost more than it saves. */
const PARALLEL_THRESHOLD = 4 * 1024 * 1024
/** Blocks, and batches, in flight between the threads: enough that parsing runs on while this thread encodes a row group. */
const MAX_BLOCKS_IN_FLIGHT = 8
const MAX_BATCHES_IN_FLIGHT = 8

/**
 * Where the parse stage runs: on its own thread when there is a core to spare and on every core when there are
 * three or more ('auto'), or forced (tests): on this thread, on one thread, or on a `ParallelShape`'s threads.
 */
export type ParseThread = 'auto' | 'inline' | 'worker' | ParallelShape

/** Each table a thread parses has its own number: a message for a table it finished is only a buffer to reuse. */
type ToParser =
  | { readonly type: 'start'; readonly table: number; readonly options: TableParserOptions }
  | { readonly type: 'block'; readonly block: Uint8Array }
  | { readonly type: 'end' }
  /** No more tables: the thread ends as a thread does whose work is done (its exit handlers run). */
  | { readonly type: 'stop' }
  | { readonly type: 'recycle'; readonly table: number; readonly bytes: ArrayBuffer; readonly offsets: ArrayBuffer }
type FromParser =
  | {
      readonly type: 'header'
      readonly header: string[]
      readonly delimiter: Delimiter
      readonly report: DecodeReport
      /** The thread's kernel id, where the platform shows it: the other threads yield their cores to it. */
      readonly thread: number | undefined
    }
  | { readonly type: 'block'; readonly buffer: ArrayBuffer }
  | { readonly type: 'batch'; readonly batch: RecordBatch }
  | {
      readonly type: 'end'
      readonly warnings: readonly string[]
      /** Bytes of buffers the thread holds, the dead ones its collector has not freed yet included. */
      readonly buffers: number
    }
  | { readonly type: 'error'; readonly error: ErrorDescription }

/**
 * Opens the parse stage over `source`, on a thread of its own or on every core when that pays. `threads` is what
 * the edge decided the process has CPU for (core/parse-threads.ts): 0 inline, 1 one thread, more in parallel.
 */
export const openParsedTable = async (
  source: AsyncIterable<Buffer>,
  options: TableParserOptions,
  thread: ParseThread = 'auto',
  threads: number = parseThreadCount(availableParallelism()),
): Promise<ParsedTable> => {
  if (typeof thread === 'object') return parseInParallel(source, options, thread)
  if (thread === 'inline' || (thread === 'auto' && threads === 0)) {
    return parseInline(source, options)
  }
  const workers = thread === 'auto' && threads > 1 ? threads : 0
  const iterator = source[Symbol.asyncIterator]()
  const head: Buffer[] = []
  let size = 0
  while (thread === 'auto' && size < (workers > 0 ? PARALLEL_THRESHOLD : THREAD_THRESHOLD)) {
    const next = await iterator.next()
    if (next.done)
      return size < THREAD_THRESHOLD
        ? parseInline(replay(head, undefined), options)
        : parseOnThread(replay(head, undefined), options)
    head.push(next.value)
    size += next.value.length
  }
  if (workers > 0) return parseInParallel(replay(head, iterator), options, { workers })
  return parseOnThread(replay(head, iterator), options)
}

/**
 * Blocks back from the parse threads, for the next table's body too: made anew for each table, the 30 dates of a
 * rewrite left a dozen MiB of them a date to the collector.
 */
const freeBlocks: ArrayBuffer[] = []

/** A parse thread that waits for its table's options, in a `start` message. */
const startParseThread = (): Worker =>
  new Worker(new URL(import.meta.url), {
    workerData: { role: ROLE },
    // csv-parse makes a string of every field: a small young generation keeps that churn from growing the heap.
    resourceLimits: { maxYoungGenerationSizeMb: 8 },
  })

/**
 * A parse thread waiting for a table: the one `prestartParseThread` started, or the last table's, whose parse ended
 * as it should. Taking it over saves the next table a thread's start (booting Node and loading and compiling the
 * parse modules again, about 0.2 s of CPU on each of the thread and V8's helpers): a rewrite of 30 dates starts one.
 */
let standby: Worker | undefined
let tables = 0
/**
 * A thread that ends its table holding more buffers than this is not kept: each table's batch buffers (about a
 * MiB each, a dozen in all) are left to the thread's collector, which frees them only when it runs, and a thread
 * kept over the 30 dates of a rewrite grew to 47 MiB of them by the sixth (the run's peak RSS with them: 362 MiB,
 * 304 with a thread per date). At 24 MiB, the threads that ended the dates of the 100 MB bench table holding
 * 13-14 MiB were kept, and 5 dates peaked at 273 MiB against 248 with a thread per date (loaded, 2026-12-04); a
 * new thread costs a date about 0.2 s of CPU. A small table's thread (a few batches) is still kept.
 */
const RETIRE_BUFFER_BYTES = 8 * 1024 * 1024

/** Keeps `thread` for the next table; dropped if it fails or exits meanwhile. Unused, it does not keep the process alive. */
const keepStandby = (thread: Worker): void => {
  const drop = () => {
    if (standby === thread) standby = undefined
  }
  thread.once('error', drop).once('exit', drop).unref()
  standby = thread
  if (!endingOnExit) process.once('beforeExit', endStandby)
  endingOnExit = true
}
let endingOnExit = false

/**
 * Starts a parse thread before any table needs one, so that Node boots it and loads its modules (about 0.2 s) while
 * this thread is still loading its own; the first table parsed on a thread of its own takes it. Only where that
 * table would get one thread (two cores). Unused, it does not keep the process alive.
 */
export const prestartParseThread = (threads: number = parseThreadCount(availableParallelism())): void => {
  if (standby !== undefined || threads !== 1) return
  // One that failed to start is dropped: the table then starts its own, whose failure names the table.
  keepStandby(startParseThread())
}

/**
 * Ends the waiting parse thread, if any, as a thread ends whose work is done rather than terminated with the
 * process: once the event loop has nothing left (the CLI's command is done), so that a probe reading a thread's
 * figures at its end (bench/report-rss.ts) gets them. A Lambda's loop never empties: its thread waits for the next
 * invocation.
 */
const endStandby = (): void => {
  endingOnExit = false
  const thread = standby
  if (thread === undefined) return
  standby = undefined
  void stopThread(thread)
}

/** Asks a thread between tables to end, and waits for it (terminated if it has not within 2 s). */
const stopThread = async (thread: Worker): Promise<void> => {
  // Referenced, the thread keeps the process until it has ended.
  thread.ref()
  const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()))
  thread.postMessage({ type: 'stop' } satisfies ToParser)
  const late = setTimeout(() => void thread.terminate(), 2000)
  await exited
  clearTimeout(late)
}

const parseOnThread = async (source: AsyncIterable<Buffer>, options: TableParserOptions): Promise<ParsedTable> => {
  const worker = standby ?? startParseThread()
  standby = undefined
  worker.removeAllListeners('error').removeAllListeners('exit')
  worker.ref()
  const table = ++tables
  worker.postMessage({ type: 'start', table, options } satisfies ToParser)
  const batches = new Channel<RecordBatch>()
  const warnings: string[] = []
  let blockCredit: (() => void) | undefined
  let blocksInFlight = 0
  let closed = false
  // Set by a failure from either side or by close(): the pump stops sending and stops reading the body.
  let stopped = false
  let ended = false
  let header!: (message: Extract<FromParser, { type: 'header' }>) => void
  let noHeader!: (error: unknown) => void
  const headerReceived = new Promise<Extract<FromParser, { type: 'header' }>>((resolve, reject) => {
    header = resolve
    noHeader = reject
  })
  const fail = (error: unknown) => {
    stopped = true
    batches.fail(error)
    noHeader(error)
    blockCredit?.()
  }
  const onMessage = (message: FromParser) => {
    if (message.type === 'header') header(message)
    else if (message.type === 'batch') batches.push(message.batch)
    else if (message.type === 'block') {
      if (freeBlocks.length <= MAX_BLOCKS_IN_FLIGHT) freeBlocks.push(message.buffer)
      blocksInFlight--
      blockCredit?.()
    } else if (message.type === 'end') {
      warnings.push(...message.warnings)
      ended = true
      retire = message.buffers > RETIRE_BUFFER_BYTES
      batches.end()
    } else fail(reviveError(message.error, options.tableId))
  }
  let exited = false
  let retire = false
  worker.on('message', onMessage)
  worker.on('error', (error) => fail(new InternalError({ tableId: options.tableId, reason: error.message })))
  worker.on('exit', (code) => {
    exited = true
    if (!closed && !ended)
      fail(new InternalError({ tableId: options.tableId, reason: `the parse thread exited (${code})` }))
  })

  /** Copies the body into blocks and sends them, waiting while the parse thread is behind. */
  const pump = async () => {
    const first = freeBlocks.pop()
    let block = first ? new Uint8Array(first) : new Uint8Array(BLOCK_BYTES)
    let used = 0
    /** Whether the block went out; false once stopped, and then the pump must return, not await again. */
    const send = async (): Promise<boolean> => {
      while (blocksInFlight >= MAX_BLOCKS_IN_FLIGHT && !stopped) await new Promise<void>((r) => (blockCredit = r))
      if (stopped) return false
      blocksInFlight++
      worker.postMessage({ type: 'block', block: block.subarray(0, used) } satisfies ToParser, [block.buffer])
      const free = freeBlocks.pop()
      block = free ? new Uint8Array(free) : new Uint8Array(BLOCK_BYTES)
      used = 0
      return true
    }
    // Returning from inside `for await` ends the body's iteration, which frees the download.
    for await (const chunk of source) {
      if (stopped) return
      for (let at = 0; at < chunk.length; ) {
        const take = Math.min(chunk.length - at, block.length - used)
        block.set(chunk.subarray(at, at + take), used)
        used += take
        at += take
        if (used === block.length && !(await send())) return
      }
    }
    if (used > 0 && !(await send())) return
    if (!stopped) worker.postMessage({ type: 'end' } satisfies ToParser)
  }
  const close = async () => {
    const clean = ended && !stopped && !exited && !closed
    closed = true
    stopped = true
    blockCredit?.()
    // A thread whose table ended as it should waits for the next, or, if one waits already or it holds too much,
    // ends as a thread whose work is done; any other is terminated.
    if (clean) worker.off('message', onMessage).removeAllListeners('error').removeAllListeners('exit')
    if (clean && !retire && standby === undefined) keepStandby(worker)
    else if (clean) await stopThread(worker)
    else await worker.terminate()
  }
  // A failure of the download ends the batches with it (the download's own coded error).
  pump().catch((error: unknown) => {
    fail(error)
    // The batches carry the failure; a thread that cannot be terminated has ended already.
    close().catch(() => undefined)
  })
  let first: Extract<FromParser, { type: 'header' }>
  try {
    first = await headerReceived
  } catch (error) {
    await close()
    throw error
  }
  // From here the parse thread sets the pace; this thread encodes on the other core, with time to spare.
  if (first.thread !== undefined) yieldCoresTo(first.thread)
  return {
    header: first.header,
    delimiter: first.delimiter,
    report: first.report,
    batches,
    warnings,
    recycle: (bytes, offsets) => {
      if (!closed) worker.postMessage({ type: 'recycle', table, bytes, offsets } satisfies ToParser, [bytes, offsets])
    },
    close,
  }
}

/**
 * The parse thread: a table's options first, then blocks in, the header and batches out; the blocks and batch
 * buffers go back for reuse. Once a table's batches have ended the thread waits for the next table's options; after
 * a failure it ends.
 */
const runParseThread = (): void => {
  const port = parentPort!
  let current: TableParse | undefined
  port.on('message', (message: ToParser) => {
    // It posts its own failures; anything else ends the thread with an 'error' the calling thread codes.
    if (message.type === 'start') {
      current = new TableParse(port, message.table)
      void current.run(message.options)
    } else if (message.type === 'recycle') current?.recycled(message)
    else if (message.type === 'block') current?.blocks.push(message.block)
    else if (message.type === 'end') current?.blocks.end()
    else port.close()
  })
}

/** One table's parse on the parse thread. */
class TableParse {
  readonly blocks = new Channel<Uint8Array>()
  readonly #port: MessagePort
  readonly #table: number
  #batchesInFlight = 0
  #batchCredit: (() => void) | undefined
  #recycle: (bytes: ArrayBuffer, offsets: ArrayBuffer) => void = () => undefined
  /**
   * csv-parse keeps a view of the last slice it parsed until it has parsed the next one, so a block goes back once
   * the first slice of the block after it is parsed (the header scan copies what it holds).
   */
  #previous: ArrayBuffer | undefined

  constructor(port: MessagePort, table: number) {
    this.#port = port
    this.#table = table
  }

  recycled(message: Extract<ToParser, { type: 'recycle' }>): void {
    this.#recycle(message.bytes, message.offsets)
    // A buffer of a table this thread parsed before is only a buffer: the credit is this table's.
    if (message.table !== this.#table) return
    this.#batchesInFlight--
    this.#batchCredit?.()
  }

  async run(options: TableParserOptions): Promise<void> {
    try {
      const parsed = await parseInline(this.#body(), options)
      this.#recycle = parsed.recycle
      this.#post({
        type: 'header',
        header: [...parsed.header],
        delimiter: parsed.delimiter,
        report: parsed.report,
        thread: kernelThreadId(),
      })
      for await (const batch of parsed.batches) {
        while (this.#batchesInFlight >= MAX_BATCHES_IN_FLIGHT) await new Promise<void>((r) => (this.#batchCredit = r))
        this.#batchesInFlight++
        this.#post({ type: 'batch', batch }, [batch.bytes.buffer as ArrayBuffer, batch.offsets.buffer as ArrayBuffer])
      }
      this.#post({ type: 'end', warnings: [...parsed.warnings], buffers: process.memoryUsage().arrayBuffers })
    } catch (error) {
      this.#post({ type: 'error', error: describeError(error) })
      this.#port.close()
    }
  }

  #post(message: FromParser, transfer: ArrayBuffer[] = []): void {
    this.#port.postMessage(message, transfer)
  }

  async *#body(): AsyncGenerator<Buffer> {
    for await (const block of this.blocks) {
      // In slices: csv-parse hands over a slice's records at once, and fewer of them alive keeps the heap small.
      for (let at = 0; at < block.byteLength; at += PARSE_SLICE_BYTES) {
        const end = Math.min(block.byteLength, at + PARSE_SLICE_BYTES)
        yield Buffer.from(block.buffer, block.byteOffset + at, end - at)
        if (this.#previous) this.#post({ type: 'block', buffer: this.#previous }, [this.#previous])
        this.#previous = undefined
      }
      this.#previous = block.buffer as ArrayBuffer
    }
  }
}

if (!isMainThread && workerData?.role === ROLE) runParseThread()
