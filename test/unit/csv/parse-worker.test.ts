/**
 * The parse stage on its own thread against the same stage on the calling thread: the same header, delimiter,
 * encoding and cells; the same coded errors with the same lines; the download's own error when the body breaks off.
 */
import { execFile } from 'node:child_process'
import { readdirSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { DataError, ProtocolError } from '../../../functions/export/core/errors.ts'
import { openParsedTable, type ParseThread, prestartParseThread } from '../../../functions/export/csv/parse-worker.ts'
import type { ParsedTable, TableParserOptions } from '../../../functions/export/csv/table-parser.ts'
import { DEFAULT_LIMITS } from '../../support/limits.ts'

const OPTIONS: TableParserOptions = {
  tableId: 't1',
  shortRows: 'fail',
  encoding: 'utf-8',
  invalidBytes: 'fail',
  limits: DEFAULT_LIMITS,
}

/** A CSV of `rows` rows with quoted commas, quotes, line breaks and non-ASCII text; about 60 bytes a row. */
const csvText = (rows: number, broken?: { row: number; line: string }): string => {
  const lines = ['id;name;note;when']
  for (let i = 1; i <= rows; i++) {
    if (broken?.row === i) lines.push(broken.line)
    else
      lines.push(
        `${i};"Grüße, ""${i % 7}""";${i % 11 === 0 ? '"two\nlines"' : ''};2026-01-${String(1 + (i % 28)).padStart(2, '0')}`,
      )
  }
  return `${lines.join('\r\n')}\r\n`
}

/** The body in chunks of `size` bytes, failing with `failure` after `failAfter` bytes. */
async function* body(text: string, size = 64 * 1024, failAfter?: { bytes: number; failure: Error }) {
  const bytes = Buffer.from(text, 'utf8')
  for (let at = 0; at < bytes.length; at += size) {
    if (failAfter && at >= failAfter.bytes) throw failAfter.failure
    yield bytes.subarray(at, at + size)
  }
}

/** Everything a parse produced: its header and dialect, and every cell (NULL for an empty one). */
const drain = async (parsed: ParsedTable) => {
  const cells: (string | null)[] = []
  let rows = 0
  try {
    for await (const batch of parsed.batches) {
      for (let cell = 0; cell < batch.rowCount * batch.columnCount; cell++) {
        const [start, end] = [batch.offsets[cell]!, batch.offsets[cell + 1]!]
        cells.push(start === end ? null : Buffer.from(batch.bytes.subarray(start, end)).toString('utf8'))
      }
      rows += batch.rowCount
      parsed.recycle(batch.bytes.buffer as ArrayBuffer, batch.offsets.buffer as ArrayBuffer)
    }
  } finally {
    await parsed.close()
  }
  return { header: parsed.header, delimiter: parsed.delimiter, report: parsed.report, rows, cells }
}

const parse = async (text: string, thread: ParseThread) => drain(await openParsedTable(body(text), OPTIONS, thread))

const failureOf = async (run: () => Promise<unknown>) => {
  try {
    await run()
  } catch (error) {
    return error
  }
  throw new Error('expected a failure')
}

describe('the parse stage on a thread of its own', () => {
  it('gives the same header, dialect and cells as on the calling thread', async () => {
    const text = csvText(60_000)
    const [inline, threaded] = await Promise.all([parse(text, 'inline'), parse(text, 'worker')])
    expect(threaded.rows).toBe(60_000)
    expect(threaded.header).toEqual(['id', 'name', 'note', 'when'])
    expect({ ...threaded, cells: undefined }).toEqual({ ...inline, cells: undefined })
    expect(threaded.cells).toEqual(inline.cells)
    expect(threaded.cells.slice(40, 44)).toEqual(['11', 'Grüße, "4"', 'two\nlines', '2026-01-12'])
  })

  it('takes a first record larger than all the bytes in flight between the threads', async () => {
    const huge = 'x'.repeat(6 * 1024 * 1024)
    const rest = Array.from({ length: 40_000 }, (_, i) => `${i + 2};n`).join('\r\n')
    const threaded = await parse(`id;note\r\n1;"${huge}"\r\n${rest}\r\n`, 'worker')
    expect(threaded.rows).toBe(40_001)
    expect(threaded.cells[1]).toBe(huge)
  })

  it.each([
    ['a row with a field too many', { row: 40_000, line: '1;2;3;4;5' }, 'ROW_FIELD_COUNT'],
    ['a quote never closed at the end', { row: 50_000, line: '1;"open;;2026-01-01' }, 'CSV_MALFORMED'],
  ])('fails on %s with the same coded error and line as on the calling thread', async (_, broken, code) => {
    const text = csvText(50_000, broken)
    const [inline, threaded] = await Promise.all([
      failureOf(() => parse(text, 'inline')),
      failureOf(() => parse(text, 'worker')),
    ])
    expect(threaded).toBeInstanceOf(DataError)
    expect(threaded).toMatchObject({ code, message: (inline as Error).message, line: (inline as DataError).line })
    expect((threaded as DataError).line).toBeGreaterThan(30_000)
  })

  it('keeps a stray quote as text and brings back the same warning as on the calling thread', async () => {
    const text = csvText(50_000, { row: 30_000, line: '1;a"b;;2026-01-01' })
    const tables = await Promise.all([
      openParsedTable(body(text), OPTIONS, 'inline'),
      openParsedTable(body(text), OPTIONS, 'worker'),
    ])
    const [inline, threaded] = await Promise.all(tables.map(drain))
    expect(threaded!.cells).toEqual(inline!.cells)
    expect(threaded!.cells).toContain('a"b')
    expect(tables[1]!.warnings).toEqual(tables[0]!.warnings)
    // Line 32,728: the header, 29,999 rows, and the 2,727 of them with a quoted line break.
    expect(tables[1]!.warnings).toEqual([expect.stringMatching(/first in the record starting on line 32728;/)])
  })

  it('fails an empty body with the same coded error as on the calling thread', async () => {
    const threaded = await failureOf(() => parse('', 'worker'))
    expect(threaded).toBeInstanceOf(DataError)
    expect(threaded).toMatchObject({ code: 'EMPTY_BODY' })
  })

  it("fails with the download's own error when the body breaks off", async () => {
    const failure = new ProtocolError('BODY_TRUNCATED', { tableId: 't1', reason: 'cut off' })
    const broken = body(csvText(60_000), 64 * 1024, { bytes: 2 * 1024 * 1024, failure })
    const error = await failureOf(async () => drain(await openParsedTable(broken, OPTIONS, 'worker')))
    expect(error).toBe(failure)
  })

  it('stops the thread when closed before the end', async () => {
    const parsed = await openParsedTable(body(csvText(60_000)), OPTIONS, 'worker')
    for await (const _ of parsed.batches) break
    await expect(parsed.close()).resolves.toBeUndefined()
  })

  // The parse holds back a CR that ends a slice until the next byte says whether it is a CRLF, and the thread hands
  // a block back once the next block's first slice is parsed: here that slice is the CR alone.
  it('reads the last record whole when a lone CR after the first MiB ends the body', async () => {
    const MiB = 1024 * 1024
    let text = 'id;note\r\n'
    let row = 0
    for (; text.length < MiB - 40; row++) text += `${row};n${row}\r\n`
    const last = `${row};`
    const tail = 'x'.repeat(MiB - text.length - last.length)
    text += `${last}${tail}\r`
    expect(text.length).toBe(MiB + 1)
    const threaded = await parse(text, 'worker')
    expect(threaded).toEqual(await parse(text, 'inline'))
    expect(threaded.cells.at(-1)).toBe(tail)
  })
})

/** This process's threads (Linux): a Worker's thread is there as soon as the Worker is constructed. */
const threads = (): number => readdirSync('/proc/self/task').length

/** Waits (up to 5 s) for a thread to end: its exit reaches this thread after the thread's last message. */
const until = async (done: () => boolean) => {
  for (let waited = 0; !done() && waited < 5000; waited += 10) await new Promise((r) => setTimeout(r, 10))
  expect(done()).toBe(true)
}

describe('a parse thread started before a table needs it', () => {
  it('starts only where a table would get one thread of its own', () => {
    const before = threads()
    prestartParseThread(0)
    prestartParseThread(3)
    expect(threads()).toBe(before)
  })

  it('is the thread the next table parsed on a thread runs on, with the same outcome; the one after starts its own', async () => {
    // A table small enough for its thread to be kept (parse-worker.ts RETIRE_BUFFER_BYTES); the first table's thread
    // is still its own, not drained yet, when the second table starts.
    const text = csvText(20_000)
    const inline = await parse(text, 'inline')
    prestartParseThread(1)
    // One thread waits: the one just started, or an earlier table's, kept.
    const waiting = threads()
    prestartParseThread(1)
    expect(threads()).toBe(waiting)
    const first = await openParsedTable(body(text), OPTIONS, 'worker')
    expect(threads()).toBe(waiting)
    const second = await openParsedTable(body(text), OPTIONS, 'worker')
    expect(threads()).toBe(waiting + 1)
    expect(await drain(first)).toEqual(inline)
    expect(await drain(second)).toEqual(inline)
    // The first table's thread waits for the next; the second's ended, as there is one waiting.
    await until(() => threads() === waiting)
    const third = await openParsedTable(body(text), OPTIONS, 'worker')
    expect(threads()).toBe(waiting)
    expect(await drain(third)).toEqual(inline)
  })

  it('is not kept after a table that left it holding more than 8 MiB of buffers: the next table starts its own', async () => {
    const text = csvText(200_000)
    const inline = await parse(text, 'inline')
    prestartParseThread(1)
    const waiting = threads()
    expect(await parse(text, 'worker')).toEqual(inline)
    await until(() => threads() === waiting - 1)
    const next = await openParsedTable(body(csvText(2000)), OPTIONS, 'worker')
    expect(threads()).toBe(waiting)
    await drain(next)
  })

  it('carries the coded error of a bad table, as a thread started for it does, and is not kept after it', async () => {
    prestartParseThread(1)
    const waiting = threads()
    const failure = await failureOf(() => parse('a,b\n1,2,3\n'.padEnd(2 * 1024 * 1024, '\n'), 'worker'))
    expect(failure).toBeInstanceOf(DataError)
    expect(failure).toMatchObject({ code: 'ROW_FIELD_COUNT', line: 2 })
    await until(() => threads() === waiting - 1)
    // The next table gets a thread that never saw the failure, and parses as it should.
    const text = csvText(20_000)
    expect(await parse(text, 'worker')).toEqual(await parse(text, 'inline'))
  })
})

describe('a data error with much of the body still to come, on the parse thread', () => {
  // In a child process: the hang this guards against starved the event loop, so no timer in this process could end it.
  const parseInChild = (head: string, filler: string, mib: number) =>
    new Promise<{ killed: boolean; outcome: unknown }>((resolve) => {
      const script = path.resolve(import.meta.dirname, '../../support/parse-on-thread.ts')
      const args = [script, JSON.stringify(head), JSON.stringify(filler), String(mib)]
      execFile(process.execPath, args, { timeout: 60_000 }, (error, stdout) =>
        resolve({ killed: error?.killed ?? false, outcome: stdout.trim() ? JSON.parse(stdout) : undefined }),
      )
    })

  it.each([
    ['a row with a field too many', 'a,b\n1,2,3\n', { code: 'ROW_FIELD_COUNT', line: 2 }],
    // A stray quote is kept as text (issue 13), so a row with a field too few is the other record error here.
    ['a row with a field too few', 'a,b,c\n1,2\n', { code: 'ROW_FIELD_COUNT', line: 2 }],
    ['bytes that are not UTF-8', 'a,b\n1,\xff\n', { code: 'INVALID_ENCODING' }],
  ])(
    'fails on %s followed by 50 MiB of rows, and does not hang',
    async (_, head, expected) => {
      const { killed, outcome } = await parseInChild(head, '7,8\n', 50)
      expect(killed).toBe(false)
      expect(outcome).toMatchObject(expected)
    },
    90_000,
  )
})
