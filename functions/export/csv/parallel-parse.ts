/**
 * The parse stage on every core, for large bodies: the decoded body is cut into chunks at line breaks guessed to
 * end records (chunks.ts), and each chunk is parsed by csv-parse on one of a few worker threads, as if it were the
 * rest of the file from a record boundary (segment.ts). The guesses are verified in order, as DuckDB's parallel
 * CSV reader does: a chunk's start is right when the chunk before it, itself started right, ended outside any
 * quoted field. When it did not (its last line break was inside a quoted field), that chunk's records are thrown
 * away and the unfinished record plus the chunk are parsed again from the true start. Rows come out in order and
 * numbered as one parse numbers them; a chunk that fails from a verified start is parsed again on this thread from
 * the file's own line numbers, so the error is the one the serial parse gives.
 *
 * Workers run this very module (`new Worker(new URL(import.meta.url))`, as in parse-worker.ts). Chunks and batches
 * cross as transferred buffers, batch buffers come back for reuse, and at most two chunks per worker are in flight
 * ahead of the one being taken: the consumer's pace bounds memory.
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'
import { InternalError } from '../core/errors.ts'
import { describeError, type ErrorDescription } from '../core/thread-errors.ts'
import { DEFAULT_BATCH_LIMITS, type RecordBatch, RecordBatchBuilder } from '../normalize/record-batch.ts'
import { type ChunkPiece, cutChunks, gather, headerLineEnd, replay } from './chunks.ts'
import { DEFAULT_ENCODING, type DecodeReport, decodeToUtf8 } from './decode.ts'
import { looseQuoteWarning, readHeaderLine } from './parse.ts'
import {
  parseSegment,
  parseSegmentStream,
  type SegmentOptions,
  type SegmentResult,
  type SegmentStart,
} from './segment.ts'
import { type ParsedTable, parseDecoded, type TableParserOptions } from './table-parser.ts'

const ROLE = 'inventory-export-csv-chunk-parser'
const MiB = 1024 * 1024

/** A parallel parse's shape: this many worker threads, chunks of this size (small ones in tests). */
export interface ParallelShape {
  /** Worker threads parsing chunks. */
  readonly workers: number
  /** @default DEFAULT_CHUNK_BYTES */
  readonly chunkBytes?: number
}

/** Large enough that a message per chunk costs nothing, small enough that the chunks in flight stay small. */
const DEFAULT_CHUNK_BYTES = MiB
/** Chunks in flight per worker. */
const CHUNKS_PER_WORKER = 2
/** Batch buffers kept for reuse, at most. */
const MAX_FREE_BUFFERS = 16

/** A chunk's parse as the worker saw it: from line 1, row 1. */
const RELATIVE = { line: 1, guardLine: 1, firstRow: 1, lastRecordLine: 0 } as const

type Position = Required<Pick<SegmentStart, 'line' | 'guardLine' | 'firstRow' | 'lastRecordLine'>>

interface ChunkParsed {
  /** Absent when the parse failed (on a verified start that is the file's error, to be redone for its lines). */
  readonly result?: SegmentResult
  /** The chunk's bytes, back from the worker. */
  readonly bytes: Buffer
}

type ToWorker =
  | {
      readonly id: number
      readonly bytes: Uint8Array
      readonly last: boolean
      readonly free: readonly { bytes: ArrayBuffer; offsets: ArrayBuffer }[]
    }
  /** No more chunks: the worker ends as a thread whose work is done (its exit handlers run). */
  | { readonly stop: true }
type FromWorker =
  | { readonly id: number; readonly bytes: Uint8Array; readonly result: SegmentResult }
  | { readonly id: number; readonly bytes: Uint8Array; readonly error: ErrorDescription }

interface WorkerSetup extends SegmentOptions {
  readonly role: typeof ROLE
}

/** The worker threads, each taking chunks in turn; a chunk's parse is a promise of its result. */
class ChunkParsers {
  readonly #workers: { worker: Worker; jobs: number }[] = []
  readonly #jobs = new Map<number, { resolve: (parsed: ChunkParsed) => void; reject: (error: unknown) => void }>()
  readonly #free: { bytes: ArrayBuffer; offsets: ArrayBuffer }[] = []
  #nextId = 0
  #failure: unknown
  #closed = false

  constructor(count: number, setup: WorkerSetup) {
    for (let i = 0; i < count; i++) {
      const worker = new Worker(new URL(import.meta.url), {
        workerData: setup,
        // csv-parse makes a string of every field: a small young generation keeps that churn from growing the heap.
        resourceLimits: { maxYoungGenerationSizeMb: 8 },
      })
      const entry = { worker, jobs: 0 }
      worker.on('message', (message: FromWorker) => {
        entry.jobs--
        const job = this.#jobs.get(message.id)
        this.#jobs.delete(message.id)
        const bytes = Buffer.from(message.bytes.buffer, message.bytes.byteOffset, message.bytes.byteLength)
        job?.resolve('result' in message ? { result: message.result, bytes } : { bytes })
      })
      worker.on('error', (error) => this.#fail(new InternalError({ tableId: setup.tableId, reason: error.message })))
      worker.on('exit', (code) => {
        if (!this.#closed)
          this.#fail(new InternalError({ tableId: setup.tableId, reason: `a parse thread exited (${code})` }))
      })
      this.#workers.push(entry)
    }
  }

  /** Parses a chunk from a record boundary, as the rest of a file, on the least busy worker. */
  parse(bytes: Buffer, last: boolean): Promise<ChunkParsed> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure)
    const entry = this.#workers.reduce((best, next) => (next.jobs < best.jobs ? next : best))
    const id = this.#nextId++
    const free = this.#free.splice(0, 4)
    const job = new Promise<ChunkParsed>((resolve, reject) => this.#jobs.set(id, { resolve, reject }))
    // Awaited in order later; a failure before then must not count as unhandled.
    job.catch(() => undefined)
    entry.jobs++
    const message: ToWorker = { id, bytes, last, free }
    entry.worker.postMessage(message, [
      bytes.buffer as ArrayBuffer,
      ...free.flatMap((pair) => [pair.bytes, pair.offsets]),
    ])
    return job
  }

  recycle(bytes: ArrayBuffer, offsets: ArrayBuffer): void {
    if (this.#free.length < MAX_FREE_BUFFERS && !bytes.detached && !offsets.detached)
      this.#free.push({ bytes, offsets })
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    // Workers with chunks still in hand are stopped at once; the others end once their queue is done.
    await Promise.all(
      this.#workers.map(async ({ worker, jobs }) => {
        if (jobs > 0 || this.#failure !== undefined) return worker.terminate()
        const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
        worker.postMessage({ stop: true } satisfies ToWorker)
        const late = setTimeout(() => void worker.terminate(), 2000)
        await exited
        clearTimeout(late)
      }),
    )
  }

  #fail(error: unknown): void {
    this.#failure ??= error
    for (const job of this.#jobs.values()) job.reject(this.#failure)
    this.#jobs.clear()
  }
}

/**
 * Parses `source` on `shape.workers` threads. A body whose header csv-parse reads otherwise than the dialect scan
 * (a stray quote in it), or whose header line is not in its first bytes, is parsed on this thread instead.
 */
export const parseInParallel = async (
  source: AsyncIterable<Buffer>,
  options: TableParserOptions,
  shape: ParallelShape,
): Promise<ParsedTable> => {
  const report: DecodeReport = { encoding: options.encoding ?? DEFAULT_ENCODING, bom: false }
  const decoded = decodeToUtf8(source, options, report)[Symbol.asyncIterator]()
  const { limits } = options
  const { buffered, read, ended, scan, firstLine } = await readHeaderLine(
    decoded,
    options.delimiter,
    limits,
    options.tableId,
  )
  // From the body's start: the serial parse reads past its blank lines and `sep=` line itself.
  const serially = () => parseDecoded(replay(read, ended ? undefined : decoded), options, report)
  const head = Buffer.concat(buffered)
  const end = scan.complete && !ended ? headerLineEnd(head) : -1
  if (end < 0) return serially()
  const segment: SegmentOptions = {
    tableId: options.tableId,
    delimiter: scan.delimiter,
    headerFields: scan.fieldCount,
    shortRows: options.shortRows,
    limits,
  }
  const builder = new RecordBatchBuilder(scan.fieldCount, DEFAULT_BATCH_LIMITS)
  const headerStart = {
    ...RELATIVE,
    line: firstLine,
    guardLine: firstLine,
    lastRecordLine: firstLine - 1,
    header: true,
    last: false,
  }
  const first = await parseSegment(head.subarray(0, end), segment, headerStart, builder).catch(() => undefined)
  if (first?.header?.length !== scan.fieldCount || first.rows > 0 || first.open) return serially()
  const warnings: string[] = []
  if (first.looseQuoteLine !== undefined) warnings.push(looseQuoteWarning(first.looseQuoteLine))
  const parsers = new ChunkParsers(shape.workers, { ...segment, role: ROLE })
  const chunks = cutChunks(head.subarray(end), decoded, {
    chunkBytes: shape.chunkBytes ?? DEFAULT_CHUNK_BYTES,
    maxLineBytes: Math.max(4 * (shape.chunkBytes ?? DEFAULT_CHUNK_BYTES), 4 * MiB),
    delimiter: scan.delimiter,
    headerFields: scan.fieldCount,
  })
  const ordered = inOrder({
    chunks,
    parsers,
    builder,
    segment,
    start: { line: first.nextLine, guardLine: first.nextGuardLine, firstRow: 1, lastRecordLine: first.lastRecordLine },
    inFlight: shape.workers * CHUNKS_PER_WORKER,
    warn: (line) => {
      if (warnings.length === 0) warnings.push(looseQuoteWarning(line))
    },
  })
  return {
    header: first.header,
    delimiter: scan.delimiter,
    report,
    batches: ordered,
    warnings,
    recycle: (bytes, offsets) => parsers.recycle(bytes, offsets),
    close: async () => {
      await ordered.return(undefined)
      await parsers.close()
      // When the batches were never read, nothing has ended the body's iteration yet.
      await decoded.return?.(undefined)
    },
  }
}

interface Ordering {
  readonly chunks: AsyncGenerator<ChunkPiece>
  readonly parsers: ChunkParsers
  /** For what is parsed on this thread. */
  readonly builder: RecordBatchBuilder
  readonly segment: SegmentOptions
  readonly start: Position
  readonly inFlight: number
  /** Called with the line of each record with a stray quote, in order. */
  readonly warn: (line: number) => void
}

type Slot = { readonly last: boolean; readonly job: Promise<ChunkParsed> } | { readonly rest: AsyncIterable<Buffer> }

/** The chunks' batches in the body's order, each chunk's start verified by the one before. */
async function* inOrder(setup: Ordering): AsyncGenerator<RecordBatch> {
  const { chunks, parsers, builder, segment } = setup
  const queue: Slot[] = []
  let chunksDone = false
  let position: Position = setup.start
  /** The start of a record the last chunk left open: the next chunk's start was guessed wrong. */
  let carry: Buffer | undefined
  const fill = async () => {
    while (!chunksDone && queue.length < setup.inFlight) {
      const next = await chunks.next()
      if (next.done) chunksDone = true
      else if ('rest' in next.value) {
        queue.push(next.value)
        chunksDone = true
      } else queue.push({ last: next.value.last, job: parsers.parse(next.value.bytes, next.value.last) })
    }
  }
  const discard = (result: SegmentResult | undefined) => {
    for (const batch of result?.batches ?? [])
      parsers.recycle(batch.bytes.buffer as ArrayBuffer, batch.offsets.buffer as ArrayBuffer)
  }
  /** Takes a result parsed from `from` (line 1 on a worker, the file's lines here) as the rows at `position`. */
  function* accept(result: SegmentResult, from: Position, bytes: Buffer): Generator<RecordBatch> {
    const at = position
    // A line where a record ended, in the file's numbering. The line the segment's parse started from stands for
    // the record before the segment, which ended on `at.lastRecordLine` (blank lines may lie between the two).
    const recordLine = (line: number) => (line === from.lastRecordLine ? at.lastRecordLine : at.line + line - from.line)
    if (result.looseQuoteLine !== undefined) setup.warn(recordLine(result.looseQuoteLine - 1) + 1)
    if (result.open) {
      carry = bytes.subarray(result.open.start)
      position = {
        line: at.line + result.open.line - from.line,
        guardLine: at.guardLine + result.open.guardLine - from.guardLine,
        firstRow: at.firstRow + result.rows,
        lastRecordLine: recordLine(result.open.line - 1),
      }
    } else {
      position = {
        line: at.line + result.nextLine - from.line,
        guardLine: at.guardLine + result.nextGuardLine - from.guardLine,
        firstRow: at.firstRow + result.rows,
        lastRecordLine: recordLine(result.lastRecordLine),
      }
    }
    for (const batch of result.batches) yield { ...batch, firstRow: at.firstRow + batch.firstRow - from.firstRow }
  }
  try {
    for (;;) {
      await fill()
      const slot = queue.shift()
      if (slot === undefined) {
        // The last chunk was cut before the body was known to end, so it was parsed as not the last, and it left
        // a record open: from a verified start, that is the body's last record, whole or malformed.
        if (carry !== undefined) {
          const bytes = carry
          carry = undefined
          const start = { ...position, header: false, last: true }
          yield* accept(await parseSegment(bytes, segment, start, builder), position, bytes)
        }
        return
      }
      if ('rest' in slot) {
        yield* restOfBody(carry, slot.rest, segment, position, builder, setup.warn)
        return
      }
      let parsed = await slot.job
      let last = slot.last
      if (carry !== undefined) {
        // The guess was wrong: this chunk started inside the record left open. Parse that record and the chunk
        // again from the record's start; take a few more chunks when the record is already long.
        discard(parsed.result)
        let bytes = gather([carry, parsed.bytes])
        while (!last && bytes.length < 2 * carry.length) {
          await fill()
          const more = queue[0]
          if (more === undefined || 'rest' in more) break
          queue.shift()
          const next = await more.job
          discard(next.result)
          bytes = gather([bytes, next.bytes])
          last = more.last
        }
        carry = undefined
        parsed = await parsers.parse(bytes, last)
      }
      if (parsed.result) {
        yield* accept(parsed.result, RELATIVE, parsed.bytes)
        continue
      }
      // A verified start and a failure: the file's own error. Parsed here again to throw it with the file's lines.
      const start = { ...position, header: false, last }
      yield* accept(await parseSegment(parsed.bytes, segment, start, builder), position, parsed.bytes)
    }
  } finally {
    await chunks.return(undefined)
    await parsers.close()
  }
}

/** The rest of a body with a line too long to cut at, parsed on this thread as it streams. */
async function* restOfBody(
  carry: Buffer | undefined,
  rest: AsyncIterable<Buffer>,
  segment: SegmentOptions,
  position: Position,
  builder: RecordBatchBuilder,
  warn: (line: number) => void,
): AsyncGenerator<RecordBatch> {
  async function* source() {
    if (carry) yield carry
    yield* rest
  }
  const stream = parseSegmentStream(source(), segment, { ...position, header: false, last: true }, builder)
  let next = await stream.next()
  for (; !next.done; next = await stream.next()) yield next.value
  if (next.value.looseQuoteLine !== undefined) warn(next.value.looseQuoteLine)
}

/** The worker: chunks in, their batches out. */
const runChunkParser = (setup: WorkerSetup): void => {
  const port = parentPort!
  const builder = new RecordBatchBuilder(setup.headerFields, DEFAULT_BATCH_LIMITS)
  // One chunk at a time, in the order they came: the next waits for the one before.
  let queue = Promise.resolve()
  port.on('message', (message: ToWorker) => {
    if ('stop' in message) {
      queue = queue.then(() => port.close())
      return
    }
    for (const pair of message.free) builder.recycle(pair.bytes, pair.offsets)
    queue = queue.then(async () => {
      const bytes = Buffer.from(message.bytes.buffer, message.bytes.byteOffset, message.bytes.byteLength)
      try {
        const result = await parseSegment(bytes, setup, { ...RELATIVE, header: false, last: message.last }, builder)
        const transfer = result.batches.flatMap((batch) => [
          batch.bytes.buffer as ArrayBuffer,
          batch.offsets.buffer as ArrayBuffer,
        ])
        port.postMessage({ id: message.id, bytes: message.bytes, result } satisfies FromWorker, [
          message.bytes.buffer as ArrayBuffer,
          ...transfer,
        ])
      } catch (error) {
        port.postMessage({ id: message.id, bytes: message.bytes, error: describeError(error) } satisfies FromWorker, [
          message.bytes.buffer as ArrayBuffer,
        ])
      }
    })
  })
}

if (!isMainThread && workerData?.role === ROLE) runChunkParser(workerData as WorkerSetup)
