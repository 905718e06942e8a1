/**
 * The record limits hold while parsing: a record too wide or too long, or a field too long, fails the table with a
 * coded error that names the limit, the line and the next step, before csv-parse has collected the record. Quoted
 * delimiters, doubled quotes and line breaks inside quotes count as the field's bytes, never as fields or records.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { DataError } from '../../../functions/export/core/errors.ts'
import { type RecordLimits, RecordScanner } from '../../../functions/export/csv/record-guard.ts'
import { openCsv } from '../../support/csv.ts'

const LIMITS: RecordLimits = { maxColumns: 4, maxRecordBytes: 64, maxFieldBytes: 16 }

async function* chunked(text: string, size: number): AsyncGenerator<Buffer> {
  const bytes = Buffer.from(text, 'utf8')
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size)
}

const parseAll = async (text: string, chunk = 7, limits = LIMITS): Promise<string[][]> => {
  const csv = await openCsv(chunked(text, chunk), { tableId: 't1', shortRows: 'fail', limits })
  const records: string[][] = []
  for await (const batch of csv.batches) records.push(...batch)
  return records
}

const failure = async (text: string, chunk = 7, limits = LIMITS): Promise<DataError> => {
  try {
    await parseAll(text, chunk, limits)
  } catch (error) {
    if (error instanceof DataError) return error
    throw error
  }
  throw new Error('expected a DataError')
}

describe('the record limits', () => {
  it.each([1, 2, 3, 64])(
    'accept quoted delimiters, doubled quotes and line breaks inside quotes up to the limits, in chunks of %i bytes',
    async (chunk) => {
      const text = 'a,b,c,d\r\n"1,2,3,4,5",x,"say ""hi""",\r\n"two\nlines\r\nhe",,,\n'
      expect(await parseAll(text, chunk)).toEqual([
        ['1,2,3,4,5', 'x', 'say "hi"', ''],
        ['two\nlines\r\nhe', '', '', ''],
      ])
    },
  )

  it.each([
    ['a header wider than maxColumns', 'a,b,c,d,e\n1,2,3,4,5\n', 'maxColumns', 1],
    ['a row wider than maxColumns', 'a,b\n1,2\n,,,,,,,,,,,,\n', 'maxColumns', 3],
    ['a field longer than maxFieldBytes', 'a,b\n1,2\n3,xxxxxxxxxxxxxxxxxxxx\n', 'maxFieldBytes', 3],
    ['a quote that is never closed', 'a,b\n1,"2\n3,4\n5,6\n7,8\n9,0\n', 'maxFieldBytes', 2],
    [
      'a record longer than maxRecordBytes',
      `a,b,c,d\n1,2,3,4\n${'x'.repeat(16)},${'x'.repeat(16)},${'x'.repeat(16)},${'x'.repeat(16)}\n`,
      'maxRecordBytes',
      3,
    ],
  ])('fail on %s, naming the limit, the line and the next step', async (_, text, limit, line) => {
    const error = await failure(text)
    expect(error).toMatchObject({ code: 'LIMIT_EXCEEDED', failureClass: 'data', line, retryable: false })
    expect(error.message).toContain(`line ${line} is over limits.${limit}`)
    expect(error.hint).toContain(`raise limits.${limit}`)
  })

  // The first record just past a limit fails, wherever it falls among records within them.
  it.each([1, 5, 64, 1024])(
    'fail on the first record just too wide or too long among short ones, %i-byte chunks',
    async (chunk) => {
      const rows = (row: string) => `${',,,\r\n'.repeat(20)}${row}\r\n,,,\r\n`
      expect(await parseAll(`a,b,c,d\r\n${rows(',,,')}`, chunk)).toHaveLength(22)
      expect(await failure(`a,b,c,d\r\n${rows(',,,,')}`, chunk)).toMatchObject({ code: 'LIMIT_EXCEEDED', line: 22 })
      const wide = { maxColumns: 100, maxRecordBytes: 64, maxFieldBytes: 16 }
      expect(await parseAll(`a\n${'x\n'.repeat(20)}${'x'.repeat(16)}\nx\n`, chunk, wide)).toHaveLength(22)
      const error = await failure(`a\n${'x\n'.repeat(20)}${'x'.repeat(17)}\nx\n`, chunk, wide)
      expect(error.message).toContain('line 22 is over limits.maxFieldBytes')
    },
  )

  // The guard skips ordinary bytes four at a time: a delimiter, quote or line break at any place in a word counts.
  it.each([1, 3, 4, 64])(
    'count a field to the byte wherever it starts and ends within a word, %i-byte chunks',
    async (chunk) => {
      const wide = { maxColumns: 100, maxRecordBytes: 1024, maxFieldBytes: 16 }
      for (let lead = 0; lead < 8; lead++) {
        const row = (field: string) => `${'y'.repeat(lead)},"${'q'.repeat(lead % 3)}",${field},z\n`
        const fits = `a,b,c,d\n${row('x'.repeat(16))}${row('"x""y"')}`
        expect(await parseAll(fits, chunk, wide)).toEqual([
          ['y'.repeat(lead), 'q'.repeat(lead % 3), 'x'.repeat(16), 'z'],
          ['y'.repeat(lead), 'q'.repeat(lead % 3), 'x"y', 'z'],
        ])
        const error = await failure(`a,b,c,d\n${row('x'.repeat(16))}${row('x'.repeat(17))}`, chunk, wide)
        expect(error.message).toContain('line 3 is over limits.maxFieldBytes')
      }
    },
  )
})

/**
 * What the guard tells of `text` read in chunks of `size` bytes: where the record ending changes, the first loose
 * quote, any failure. (Whether a chunk ends in a CR depends on the chunking, so it is left out.)
 */
const scanned = (text: string, size: number, limits: RecordLimits) => {
  const bytes = Buffer.from(text, 'latin1')
  const scanner = new RecordScanner(0x2c, limits, 't1', 1)
  const changes: { at: number; ending: string }[] = []
  try {
    for (let at = 0; at < bytes.length; at += size) {
      const seen = scanner.scan(bytes.subarray(at, at + size))
      changes.push(...seen.changes.map((change) => ({ at: at + change.at, ending: change.ending })))
    }
  } catch (error) {
    // Lengths are checked at the latest at a chunk's end, so which limit a record breaks first, and what else its
    // chunk held, may depend on the chunking: the code and the line count.
    const { code, line } = error as DataError
    return { failure: { code, line } }
  }
  return { changes, looseQuote: scanner.looseQuote }
}

const cell = fc.oneof(
  fc.constantFrom('', 'x', 'abc', 'a"b', '"', 'tail"'),
  fc.stringMatching(/^[a-z ,"\r\n]{0,8}$/).map((text) => `"${text.replaceAll('"', '""')}"`),
  // A closing quote not followed by a delimiter or line break: csv-parse keeps it as text.
  fc.constantFrom('"ab"c', '""x'),
)
const anyEnding = fc.constantFrom('\n', '\r\n', '\r')
/** Rows of one to four cells; mostly one ending throughout, now and then another. */
const guardedCsv = fc
  .tuple(
    anyEnding,
    fc.array(fc.tuple(fc.array(cell, { minLength: 1, maxLength: 4 }), fc.option(anyEnding, { freq: 8 }))),
  )
  .map(([usual, rows]) => rows.map(([cells, other]) => `${cells.join(',')}${other ?? usual}`).join(''))

describe('the record guard', () => {
  // Records the byte walk would pass with no other effect are passed a line break at a time (indexOf): whatever the
  // chunking, everything the guard reports must be what it reports one byte at a time, where none can be.
  it('reports the same endings, loose quote and failure whatever the chunk size', () => {
    const limits = fc.oneof(
      fc.constant({ maxColumns: 2000, maxRecordBytes: 64 * 1024 * 1024, maxFieldBytes: 16 * 1024 * 1024 }),
      fc.record({
        maxColumns: fc.integer({ min: 1, max: 40 }),
        maxRecordBytes: fc.integer({ min: 8, max: 60 }),
        maxFieldBytes: fc.integer({ min: 2, max: 20 }),
      }),
    )
    fc.assert(
      fc.property(guardedCsv, fc.integer({ min: 2, max: 300 }), limits, (text, size, limit) => {
        expect(scanned(text, size, limit)).toEqual(scanned(text, 1, limit))
      }),
      { numRuns: 3000 },
    )
  })
})
