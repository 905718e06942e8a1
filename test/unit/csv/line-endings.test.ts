/**
 * Records may end in LF, CRLF or a lone CR, mixed in one file. The parser gives csv-parse the one ending the
 * records have so far and starts again at a record boundary when another appears; whatever the chunking, the
 * records, blank lines and line numbers must be those of a parse that accepts all three everywhere.
 */
import { parse } from 'csv-parse/sync'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { DataError } from '../../../functions/export/core/errors.ts'
import { openCsv } from '../../support/csv.ts'
import { DEFAULT_LIMITS } from '../../support/limits.ts'

async function* chunked(text: string, size: number): AsyncGenerator<Buffer> {
  const bytes = Buffer.from(text, 'utf8')
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size)
}

const records = async (text: string, chunk: number): Promise<string[][]> => {
  const csv = await openCsv(chunked(text, chunk), { tableId: 't1', shortRows: 'fail', limits: DEFAULT_LIMITS })
  const all: string[][] = [[...csv.header]]
  for await (const batch of csv.batches) all.push(...batch)
  return all
}

/** What csv-parse reads with every ending accepted everywhere: the reference. */
const reference = (text: string, columns: number): string[][] =>
  parse(text, {
    record_delimiter: ['\r\n', '\n', '\r'],
    relax_quotes: true,
    skip_empty_lines: columns > 1,
  })

const failure = async (text: string, chunk: number): Promise<DataError> => {
  try {
    await records(text, chunk)
  } catch (error) {
    if (error instanceof DataError) return error
    throw error
  }
  throw new Error('expected a DataError')
}

const ending = fc.constantFrom('\n', '\r\n', '\r')
const field = fc.oneof(
  fc.constantFrom('', 'x', 'Grüße', '12.5'),
  fc.stringMatching(/^[a-z ,"\r\n]{0,10}$/).map((text) => `"${text.replaceAll('"', '""')}"`),
)
/** Three columns; each record, and now and then a blank line, ends its own way. */
const mixedCsv = fc
  .tuple(
    ending,
    fc.array(fc.tuple(field, field, field, ending, fc.option(ending, { freq: 6 })), { maxLength: 40 }),
    fc.boolean(),
  )
  .map(([headerEnding, rows, endsWithBreak]) => {
    let text = `id,name,note${rows.length > 0 || endsWithBreak ? headerEnding : ''}`
    rows.forEach(([a, b, c, end, blank], i) => {
      text += `${a},${b},${c}${i < rows.length - 1 || endsWithBreak ? end : ''}${blank && i < rows.length - 1 ? blank : ''}`
    })
    return text
  })

describe('records that end in more than one way', () => {
  it('read as with every ending accepted, for any mix and any chunk size', async () => {
    await fc.assert(
      fc.asyncProperty(mixedCsv, fc.integer({ min: 1, max: 64 }), async (text, chunk) => {
        expect(await records(text, chunk)).toEqual(reference(text, 3))
      }),
      { numRuns: 300 },
    )
  })

  it.each([1, 2, 3, 5, 8, 1024])('read a file that changes ending %i-byte chunks at a time', async (chunk) => {
    const text = 'a,b\n1,"x\r\ny"\r\n2,"\r"\r3,"\n"\n4,z\r\n5,w\r'
    expect(await records(text, chunk)).toEqual([
      ['a', 'b'],
      ['1', 'x\r\ny'],
      ['2', '\r'],
      ['3', '\n'],
      ['4', 'z'],
      ['5', 'w'],
    ])
  })

  it.each([
    ['a CRLF', 'a,b\n1,2\r\n3,4\n', [4, 5]],
    ['a lone CR', 'a,b\n1,2\r3,4\n', [4, 5]],
    ['an LF after CRLFs', 'a,b\r\n1,2\n3,4\r\n', [5, 6]],
    ['a CR after CRLFs', 'a,b\r\n1,2\r3,4\r\n', [5, 6]],
  ])('read %s split from the chunk before', async (_, text, chunks) => {
    for (const chunk of chunks) {
      expect(await records(text, chunk)).toEqual([
        ['a', 'b'],
        ['1', '2'],
        ['3', '4'],
      ])
    }
  })

  it('reads blank lines of a one-column table as empty values whatever they end in', async () => {
    const text = 'v\na\n\r\n\r\rb\r\n\n'
    for (const chunk of [1, 2, 3, 1024]) {
      expect(await records(text, chunk)).toEqual([['v'], ['a'], [''], [''], [''], ['b'], ['']])
    }
  })

  it('reads a file whose every record ends otherwise than the one before', async () => {
    const endings = ['\n', '\r\n', '\r']
    const rows = Array.from({ length: 60 }, (_, i) => `${i},"q\r\n${i}"${endings[i % 3]}`)
    const text = `id,note\r\n${rows.join('')}`
    for (const chunk of [1, 7, 1024]) expect(await records(text, chunk)).toEqual(reference(text, 2))
  })

  // csv-parse counts a CRLF inside quotes as two lines, as it always has: the bad record ends on line 6.
  it.each([1, 4, 1024])('names the line of a bad record after changes of ending, %i-byte chunks', async (chunk) => {
    const error = await failure('a,b\n1,"x\r\ny"\r\n3,4\r5\n6,7\n', chunk)
    expect(error).toMatchObject({
      code: 'ROW_FIELD_COUNT',
      line: 6,
      message: 'table t1: the record ending on line 6 has 1 fields where the header has 2',
    })
  })

  it.each([1, 4, 1024])(
    'names the line of a quote never closed after changes of ending, %i-byte chunks',
    async (chunk) => {
      const error = await failure('a,b\r\n1,2\n3,4\r5,"open\n6,7\n', chunk)
      expect(error).toMatchObject({ code: 'CSV_MALFORMED', line: 4 })
    },
  )
})
