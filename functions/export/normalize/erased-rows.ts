/**
 * The rows of recorded erasure requests, left out of a table's records right after its columns are named and
 * controlled, so no later stage (type inference, keys, fingerprints, statistics, the spool) sees them. A request
 * matches a row when, for every column it names, the row's cell is one of that column's values; the values are
 * known only as keyed digests (core/digest-condition.ts), so a cell in clear is digested with the key, once per
 * row and column (remembered for cells that repeat), and a cell that already is a pseudonym is its own digest.
 * The rows kept are numbered on without the ones left out, as a date an erasure rewrote numbers them.
 */
import type { ColumnType } from '../core/constants.ts'
import { conditionDigests, type DigestCondition } from '../core/digest-condition.ts'
import type { PseudonymizationKey } from '../core/pseudonymization-key.ts'
import { pseudonym } from './personal-data.ts'
import type { RecordBatch } from './record-batch.ts'
import type { TableRecords } from './table-records.ts'

/** A written column as the filter reads it. */
export interface ErasureColumn {
  readonly name: string
  /** Whether its cells are pseudonyms (hashed by the controls, or read back as such): compared as they are. */
  readonly pseudonymized: boolean
  /** Its registered type, whose spelling a request's typed digest is of; undefined when none is registered. */
  readonly type: ColumnType | undefined
}

/** A request's conditions, as the warehouse records them. */
export interface ErasureConditions {
  readonly where: readonly DigestCondition[]
}

export interface ErasedRows {
  readonly records: TableRecords
  /** Rows left out so far (all of them, once the batches end). */
  readonly dropped: () => number
}

/** Distinct cells whose digests are remembered, as the controls remember pseudonyms. */
const MEMO_SIZE = 1 << 16
/** Cells looked up before a column that repeats in fewer than one in ten stops being remembered. */
const MEMO_SAMPLE = 4096

const latin1 = (cell: Uint8Array): string =>
  Buffer.from(cell.buffer, cell.byteOffset, cell.byteLength).toString('latin1')

/** Columns named by `requests` that `columns` lacks: their rows could not be told apart. */
export const unmatchableColumns = (
  requests: readonly ErasureConditions[],
  columns: readonly ErasureColumn[],
): string[] => {
  const names = new Set(columns.map((c) => c.name))
  return [...new Set(requests.flatMap((r) => r.where.map((c) => c.column)))].filter((name) => !names.has(name))
}

/** The records without the rows `requests` match; every column they name must be in `columns`. */
export const dropErasedRows = (
  records: TableRecords,
  columns: readonly ErasureColumn[],
  requests: readonly ErasureConditions[],
  key: PseudonymizationKey,
): ErasedRows => {
  const compiled = requests.map((request) => {
    const byColumn = new Map<number, Set<string>>()
    for (const condition of request.where) {
      const index = columns.findIndex((c) => c.name === condition.column)
      const digests = byColumn.get(index) ?? new Set<string>()
      for (const digest of conditionDigests(condition, columns[index]!.type)) digests.add(digest)
      byColumn.set(index, digests)
    }
    return [...byColumn].map(([column, digests]) => ({ column, digests }))
  })
  // Remembered per column while it pays: a column of unique values (an id) stops remembering after a sample.
  const memos = columns.map(() => ({ map: new Map<string, string>(), looked: 0, found: 0, on: true }))
  const digestOf = (column: number, cell: Uint8Array): string => {
    if (columns[column]!.pseudonymized) return latin1(cell)
    const memo = memos[column]!
    if (!memo.on) return pseudonym(key, cell)
    const text = latin1(cell)
    memo.looked++
    let digest = memo.map.get(text)
    if (digest !== undefined) {
      memo.found++
      return digest
    }
    if (memo.looked === MEMO_SAMPLE && memo.found * 10 < memo.looked) memo.on = false
    if (memo.map.size >= MEMO_SIZE) memo.map.clear()
    digest = pseudonym(key, cell)
    memo.map.set(text, digest)
    return digest
  }
  let dropped = 0
  const matches = (batch: RecordBatch, row: number, seen: (string | undefined)[]): boolean =>
    compiled.some((groups) =>
      groups.every(({ column, digests }) => {
        const cell = row * batch.columnCount + column
        const start = batch.offsets[cell]!
        const end = batch.offsets[cell + 1]!
        if (end === start) return false
        seen[column] ??= digestOf(column, batch.bytes.subarray(start, end))
        return digests.has(seen[column]!)
      }),
    )
  const seen = new Array<string | undefined>(columns.length)
  const filter = (batch: RecordBatch): RecordBatch => {
    const kept: number[] = []
    for (let row = 0; row < batch.rowCount; row++) {
      seen.fill(undefined)
      if (!matches(batch, row, seen)) kept.push(row)
    }
    const firstRow = batch.firstRow - dropped
    dropped += batch.rowCount - kept.length
    if (kept.length === batch.rowCount) return firstRow === batch.firstRow ? batch : { ...batch, firstRow }
    const copy = keptRows(batch, kept, firstRow)
    records.recycle(batch.bytes.buffer as ArrayBuffer, batch.offsets.buffer as ArrayBuffer)
    return copy
  }
  return {
    records: {
      header: records.header,
      batches: filtered(records.batches, filter),
      recycle: (bytes, offsets) => records.recycle(bytes, offsets),
      close: () => records.close(),
    },
    dropped: () => dropped,
  }
}

async function* filtered(
  batches: AsyncIterable<RecordBatch>,
  filter: (batch: RecordBatch) => RecordBatch,
): AsyncGenerator<RecordBatch> {
  for await (const batch of batches) {
    const kept = filter(batch)
    if (kept.rowCount > 0) yield kept
  }
}

/** The rows `kept` of `batch`, on buffers of their own. */
const keptRows = (batch: RecordBatch, kept: readonly number[], firstRow: number): RecordBatch => {
  const { columnCount, bytes, offsets } = batch
  let size = 0
  for (const row of kept) size += offsets[(row + 1) * columnCount]! - offsets[row * columnCount]!
  const out = Buffer.allocUnsafeSlow(Math.max(size, 1))
  const outOffsets = new Int32Array(kept.length * columnCount + 1)
  let at = 0
  let cell = 0
  for (const row of kept) {
    const start = offsets[row * columnCount]!
    const end = offsets[(row + 1) * columnCount]!
    out.set(bytes.subarray(start, end), at)
    for (let c = 1; c <= columnCount; c++) outOffsets[++cell] = at + offsets[row * columnCount + c]! - start
    at += end - start
  }
  return {
    firstRow,
    rowCount: kept.length,
    columnCount,
    bytes: new Uint8Array(out.buffer, out.byteOffset, at),
    offsets: outOffsets,
  }
}
