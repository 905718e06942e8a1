/**
 * The shared strings, looked up by index as byte strings (one character per UTF-8 byte) or appended as their
 * bytes to a worksheet row. A workbook's shared strings grow with the distinct text of the table (a million rows
 * of serial numbers and names come to 100 MB and more), so they are held in memory only up to a small budget.
 * Past it, the strings spill to two files on the spool disk: their UTF-8 bytes back to back, and an 8-byte end
 * offset per string. Lookups then read 64 KiB blocks of either file through a small cache of recently used
 * blocks. Shared strings are numbered in order of first appearance, so the rows being read mostly touch the newest
 * blocks and a few hot early ones: the cache keeps the hit rate high while memory stays fixed whatever the
 * table's size.
 */
import { readSync } from 'node:fs'
import { SpillFile } from '../scratch/spill-file.ts'

/** Text held in memory before the table spills to disk. */
export const DEFAULT_MEMORY_BYTES = 16 * 1024 * 1024
const BLOCK_BYTES = 64 * 1024
const ENDS_PER_BLOCK = BLOCK_BYTES / 8
/** Blocks of text and of end offsets kept after a spill: 8 MiB and 2 MiB. */
const CACHED_TEXT_BLOCKS = 128
const CACHED_END_BLOCKS = 32
const INITIAL_BYTES = 64 * 1024
const INITIAL_STRINGS = 4096
/** Strings up to this length are copied by a JS loop. */
const SHORT_COPY = 64

export interface StringTableOptions {
  /** Text held in memory before spilling. @default DEFAULT_MEMORY_BYTES */
  readonly memoryBytes?: number | undefined
  /** Path prefix of the spill files (`<prefix>.strings`, `<prefix>.ends`); without it the table never spills. */
  readonly spillPath?: string | undefined
  /**
   * The shared strings part's size: their text is no longer, so the text buffer is made at once, up to the memory
   * budget, rather than doubled to it. Doubling to 16 MiB held the last two sizes at once (24 MiB, and 12 more for
   * the ends), a high-water mark the reading thread's resident memory kept to the end.
   */
  readonly partBytes?: number | undefined
}

/** Where appendTo() writes a string's bytes. */
export interface ByteSink {
  append(from: Uint8Array, start: number, end: number): void
}

export class SharedStringTable {
  readonly #memoryBytes: number
  readonly #spillPath: string | undefined
  #bytes: Buffer = Buffer.allocUnsafe(INITIAL_BYTES)
  #ends = new Uint32Array(INITIAL_STRINGS)
  #used = 0
  #count = 0
  #spill: SpilledStrings | undefined

  constructor(options: StringTableOptions = {}) {
    this.#memoryBytes = options.memoryBytes ?? DEFAULT_MEMORY_BYTES
    this.#spillPath = options.spillPath
    const { partBytes } = options
    if (partBytes !== undefined && partBytes > INITIAL_BYTES) {
      this.#bytes = Buffer.allocUnsafe(Math.min(partBytes, this.#memoryBytes))
    }
  }

  /**
   * Room for `count` strings' ends (the part's `uniqueCount`), made at once; a count the part's size cannot hold
   * (an item takes 5 bytes at the least, `<si/>`) or past what memory keeps is not taken at its word.
   */
  reserve(count: number, partBytes: number): void {
    const strings = Math.min(count, Math.floor(partBytes / 5), this.#memoryBytes / 4)
    if (this.#spill === undefined && strings > this.#ends.length) {
      const ends = new Uint32Array(strings)
      ends.set(this.#ends.subarray(0, this.#count))
      this.#ends = ends
    }
  }

  get count(): number {
    return this.#count
  }

  /** UTF-8 bytes of all strings together, in memory or on disk. */
  get byteLength(): number {
    return this.#spill?.byteLength ?? this.#used
  }

  /** Whether the strings live on disk. */
  get spilled(): boolean {
    return this.#spill !== undefined
  }

  add(text: string): void {
    const bytes = Buffer.from(text, 'utf8')
    this.addBytes(bytes, 0, bytes.length)
  }

  /** Adds the string whose UTF-8 bytes are `bytes[start..end)`. */
  addBytes(bytes: Uint8Array, start: number, end: number): void {
    this.#count++
    if (this.#spill) {
      this.#spill.add(bytes.subarray(start, end))
      return
    }
    const length = end - start
    if (this.#used + length > this.#memoryBytes && this.#spillPath !== undefined) {
      this.#spill = new SpilledStrings(
        this.#spillPath,
        this.#bytes.subarray(0, this.#used),
        this.#ends,
        this.#count - 1,
      )
      this.#bytes = Buffer.alloc(0)
      this.#ends = new Uint32Array(0)
      this.#spill.add(bytes.subarray(start, end))
      return
    }
    if (this.#used + length > this.#bytes.length) this.#bytes = grow(this.#bytes, this.#used + length)
    const into = this.#bytes
    const used = this.#used
    // Most strings are short: a loop copies them sooner than a Buffer subarray (an object each) and a native set.
    if (length > SHORT_COPY) into.set(bytes.subarray(start, end), used)
    else for (let i = 0; i < length; i++) into[used + i] = bytes[start + i]!
    this.#used = used + length
    if (this.#count > this.#ends.length) {
      const ends = new Uint32Array(this.#ends.length * 2)
      ends.set(this.#ends)
      this.#ends = ends
    }
    this.#ends[this.#count - 1] = this.#used
  }

  /** Called once every string is added, before the first lookup. */
  finish(): void {
    this.#spill?.finish()
  }

  /** The string at `index` as a byte string, or undefined when there is none. */
  at(index: number): string | undefined {
    // A fraction would index past #ends into undefined, and toString(…, undefined, undefined) is the whole buffer.
    if (!(Number.isInteger(index) && index >= 0 && index < this.#count)) return undefined
    if (this.#spill) return this.#spill.at(index)
    const start = index === 0 ? 0 : this.#ends[index - 1]!
    return this.#bytes.toString('latin1', start, this.#ends[index]!)
  }

  /**
   * Appends the UTF-8 bytes of the string at `index` to `sink` (no string made); false, with nothing appended,
   * when there is none.
   */
  appendTo(index: number, sink: ByteSink): boolean {
    if (!(Number.isInteger(index) && index >= 0 && index < this.#count)) return false
    if (this.#spill) this.#spill.appendTo(index, sink)
    else sink.append(this.#bytes, index === 0 ? 0 : this.#ends[index - 1]!, this.#ends[index]!)
    return true
  }

  /** Closes and deletes the spill files, if any. */
  close(): void {
    this.#spill?.close()
    this.#spill = undefined
  }
}

const grow = (bytes: Buffer, needed: number): Buffer => {
  const grown = Buffer.allocUnsafe(Math.max(needed, bytes.length * 2))
  bytes.copy(grown)
  return grown
}

/** The strings on disk: appended through a write buffer, then read through block caches. */
class SpilledStrings {
  readonly #text: SpillFile
  readonly #ends: SpillFile
  #byteLength: number
  #textCache: BlockCache | undefined
  #endCache: BlockCache | undefined
  readonly #endBytes = Buffer.alloc(8)

  constructor(prefix: string, bytes: Buffer, ends: Uint32Array, count: number) {
    this.#text = new SpillFile(`${prefix}.strings`)
    this.#ends = new SpillFile(`${prefix}.ends`)
    this.#text.append(bytes)
    for (let i = 0; i < count; i++) this.#appendEnd(ends[i]!)
    this.#byteLength = bytes.length
  }

  get byteLength(): number {
    return this.#byteLength
  }

  add(bytes: Uint8Array): void {
    this.#text.append(bytes)
    this.#byteLength += bytes.length
    this.#appendEnd(this.#byteLength)
  }

  #appendEnd(end: number): void {
    this.#endBytes.writeDoubleLE(end)
    this.#ends.append(this.#endBytes)
  }

  finish(): void {
    this.#text.seal()
    this.#ends.seal()
    this.#textCache = new BlockCache(this.#text.descriptor, CACHED_TEXT_BLOCKS)
    this.#endCache = new BlockCache(this.#ends.descriptor, CACHED_END_BLOCKS)
  }

  at(index: number): string {
    const [start, end] = this.#range(index)
    return this.#textCache!.text(start, end)
  }

  appendTo(index: number, sink: ByteSink): void {
    const [start, end] = this.#range(index)
    this.#textCache!.appendTo(start, end, sink)
  }

  #range(index: number): [number, number] {
    const ends = this.#endCache!
    const end = ends.block(Math.floor(index / ENDS_PER_BLOCK)).readDoubleLE((index % ENDS_PER_BLOCK) * 8)
    const start =
      index === 0
        ? 0
        : ends.block(Math.floor((index - 1) / ENDS_PER_BLOCK)).readDoubleLE(((index - 1) % ENDS_PER_BLOCK) * 8)
    return [start, end]
  }

  close(): void {
    this.#text.close()
    this.#ends.close()
  }
}

/**
 * Fixed-size blocks of a file, the most recently loaded ones kept. Eviction is first in, first out: cheaper than
 * LRU bookkeeping on every hit, and the access pattern (newest strings plus a few hot early ones reloaded when
 * evicted) does not reward more.
 */
class BlockCache {
  readonly #descriptor: number
  readonly #capacity: number
  readonly #blocks = new Map<number, Buffer>()
  #lastNumber = -1
  #last: Buffer = Buffer.alloc(0)

  constructor(descriptor: number, capacity: number) {
    this.#descriptor = descriptor
    this.#capacity = capacity
  }

  block(number: number): Buffer {
    if (number === this.#lastNumber) return this.#last
    let block = this.#blocks.get(number)
    if (block === undefined) {
      let reuse: Buffer | undefined
      if (this.#blocks.size >= this.#capacity) {
        const [oldest, evicted] = this.#blocks.entries().next().value as [number, Buffer]
        this.#blocks.delete(oldest)
        reuse = evicted
      }
      block = reuse ?? Buffer.allocUnsafe(BLOCK_BYTES)
      readFully(this.#descriptor, block, number * BLOCK_BYTES)
      this.#blocks.set(number, block)
    }
    this.#lastNumber = number
    this.#last = block
    return block
  }

  /** Appends bytes [start, end) of the file to `sink`. */
  appendTo(start: number, end: number, sink: ByteSink): void {
    const first = Math.floor(start / BLOCK_BYTES)
    if (end <= (first + 1) * BLOCK_BYTES) {
      const offset = first * BLOCK_BYTES
      sink.append(this.block(first), start - offset, end - offset)
      return
    }
    const bytes = Buffer.allocUnsafe(end - start)
    readFully(this.#descriptor, bytes, start)
    sink.append(bytes, 0, bytes.length)
  }

  /** Bytes [start, end) of the file as a byte string. */
  text(start: number, end: number): string {
    const first = Math.floor(start / BLOCK_BYTES)
    if (end <= (first + 1) * BLOCK_BYTES) {
      const offset = first * BLOCK_BYTES
      return this.block(first).toString('latin1', start - offset, end - offset)
    }
    // A string across a block boundary is read on its own, so the cache holds only whole blocks.
    const bytes = Buffer.allocUnsafe(end - start)
    readFully(this.#descriptor, bytes, start)
    return bytes.toString('latin1')
  }
}

/**
 * Fills `buffer` from `position`; past the file's end (its last block) the rest is zeroed, so a block reused from
 * the cache or fresh from allocUnsafe never carries bytes of another string, or of another table, into a lookup.
 */
const readFully = (descriptor: number, buffer: Buffer, position: number): void => {
  for (let at = 0; at < buffer.length; ) {
    const read = readSync(descriptor, buffer, at, buffer.length - at, position + at)
    if (read === 0) {
      buffer.fill(0, at)
      return
    }
    at += read
  }
}
