import { describe, expect, it } from 'vitest'
import type { Delimiter } from '../../../functions/export/core/constants.ts'
import { DataError } from '../../../functions/export/core/errors.ts'
import { scanHeaderLine } from '../../../functions/export/csv/dialect.ts'
import { openCsv } from '../../support/csv.ts'
import { DEFAULT_LIMITS } from '../../support/limits.ts'

async function* chunked(text: string, size: number): AsyncGenerator<Buffer> {
  const bytes = Buffer.from(text, 'utf8')
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size)
}

const parseAll = async (
  text: string,
  options: { delimiter?: Delimiter; shortRows?: 'fail' | 'pad'; chunk?: number } = {},
): Promise<{ delimiter: string; header: readonly string[]; records: string[][] }> => {
  const { chunk = 1024, ...rest } = options
  const csv = await openCsv(chunked(text, chunk), { tableId: 't1', shortRows: 'fail', limits: DEFAULT_LIMITS, ...rest })
  const records: string[][] = []
  for await (const batch of csv.batches) records.push(...batch)
  return { delimiter: csv.delimiter, header: csv.header, records }
}

const parseError = async (text: string, options: Parameters<typeof parseAll>[1] = {}): Promise<DataError> => {
  try {
    await parseAll(text, options)
  } catch (error) {
    if (error instanceof DataError) return error
    throw error
  }
  throw new Error('expected a DataError')
}

describe('scanHeaderLine', () => {
  it.each([
    ['a,b,c\n', ',', 3],
    ['a;b;c\n', ';', 3],
    ['a\tb\tc\n', '\t', 3],
    ['a|b|c\n', '|', 3],
    ['a;b,c;d\n', ';', 3],
    ['"x,y";"z,w"\n', ';', 2],
    ['"a ""q"", b"|c\n', '|', 2],
    ['single\n', ',', 1],
    ['a;b\r\n1,2,3,4\r\n', ';', 2],
  ])('finds in %j the delimiter %j and %i fields', (text, delimiter, fieldCount) => {
    expect(scanHeaderLine(Buffer.from(text))).toEqual({ complete: true, delimiter, fieldCount })
  })

  it('uses a forced delimiter and counts fields under it', () => {
    expect(scanHeaderLine(Buffer.from('Last, First|Dept\n'), '|')).toEqual({
      complete: true,
      delimiter: '|',
      fieldCount: 2,
    })
  })

  it('says when the header line has not ended yet', () => {
    expect(scanHeaderLine(Buffer.from('a,"b\nc'))).toMatchObject({ complete: false })
  })
})

describe('openCsv', () => {
  it.each([
    ['LF', 'a,b\n1,2\n3,4\n'],
    ['CRLF', 'a,b\r\n1,2\r\n3,4\r\n'],
    ['a lone CR', 'a,b\r1,2\r3,4\r'],
    ['LF then CRLF', 'a,b\n1,2\r\n3,4\r\n'],
    ['CRLF then LF', 'a,b\r\n1,2\n3,4\n'],
    ['no final line break', 'a,b\n1,2\n3,4'],
  ])('reads records ending in %s', async (_, text) => {
    expect(await parseAll(text)).toEqual({
      delimiter: ',',
      header: ['a', 'b'],
      records: [
        ['1', '2'],
        ['3', '4'],
      ],
    })
  })

  it.each([1, 3, 1024])(
    'keeps quoted delimiters, doubled quotes and line breaks, in chunks of %i bytes',
    async (chunk) => {
      const text = 'id;"note\n(text)"\r\n1;"a;b ""c""\r\nd"\r\n2;""\r\n'
      expect(await parseAll(text, { chunk })).toEqual({
        delimiter: ';',
        header: ['id', 'note\n(text)'],
        records: [
          ['1', 'a;b "c"\r\nd'],
          ['2', ''],
        ],
      })
    },
  )

  it('reads a header-only file as a header and no records', async () => {
    expect(await parseAll('a|b')).toEqual({ delimiter: '|', header: ['a', 'b'], records: [] })
  })

  it('reads a blank line of a one-column table as one empty value', async () => {
    expect((await parseAll('v\na\n\nb\n')).records).toEqual([['a'], [''], ['b']])
  })

  it('skips a blank line of a multi-column table', async () => {
    expect((await parseAll('a,b\n1,2\n\n3,4\n\n')).records).toEqual([
      ['1', '2'],
      ['3', '4'],
    ])
  })

  it('pads short records only when asked', async () => {
    expect((await parseAll('a,b,c\n1\n', { shortRows: 'pad' })).records).toEqual([['1']])
  })

  it.each([
    ['a longer record', 'a,b\n1,2\n3,4,5\n', {}, 3, 'the record ending on line 3 has 3 fields where the header has 2'],
    [
      'a shorter record',
      'a,b\n1,"x\ny"\n3\n',
      {},
      4,
      'the record ending on line 4 has 1 fields where the header has 2',
    ],
    [
      'a longer record even when padding',
      'a,b\n1,2,3\n',
      { shortRows: 'pad' as const },
      2,
      'the record ending on line 2 has 3 fields where the header has 2',
    ],
  ])('fails with ROW_FIELD_COUNT on %s', async (_, text, options, line, message) => {
    const error = await parseError(text, options)
    expect(error).toMatchObject({ code: 'ROW_FIELD_COUNT', line, message: `table t1: ${message}` })
  })

  it('fails with CSV_MALFORMED naming the line where a never-closed quote opened', async () => {
    const error = await parseError('a,b\n1,2\n3,"open\n4,5\n6,7\n')
    expect(error).toMatchObject({
      code: 'CSV_MALFORMED',
      line: 3,
      retryable: false,
      message:
        'table t1: the file ends inside a quoted field: a quote opened in the record starting on line 3 is never closed',
    })
  })

  const parseWithWarnings = async (text: string, chunk: number) => {
    const csv = await openCsv(chunked(text, chunk), { tableId: 't1', shortRows: 'fail', limits: DEFAULT_LIMITS })
    const records: string[][] = []
    for await (const batch of csv.batches) records.push(...batch)
    return { records, warnings: csv.warnings }
  }

  it.each([1, 3, 7, 1024])(
    'keeps stray quotes as text and warns with the first record, in chunks of %i bytes',
    async (chunk) => {
      const text = `a,b\n1,"x ""q"" y"\n2,x"y\n"x"y,3\n4,37°36'37.8"N\n`
      expect(await parseWithWarnings(text, chunk)).toEqual({
        records: [
          ['1', 'x "q" y'],
          ['2', 'x"y'],
          ['"x"y', '3'],
          ['4', `37°36'37.8"N`],
        ],
        warnings: [
          "a quote inside an unquoted field (or after a closing quote) was kept as text, first in the record starting on line 3; the saved table's export does not quote such fields",
        ],
      })
    },
  )

  it('warns about nothing when every quote is where CSV puts it', async () => {
    const text = 'a,"b ""c""",d\r\n"1\n2","""",x\n'
    expect((await parseWithWarnings(text, 2)).warnings).toEqual([])
  })

  it.each([
    ['inside an unquoted field', '1,x"y\n', true],
    ['after a closing quote', '1,"x"y\n', true],
    ['after a closing quote, then a space', '"x" ,y\n', true],
    ['doubled inside a quoted field', '"x""y",z\n', false],
    ['quoted with a line break', '"x\r\ny",z\r\n', false],
    ['quoted, then a delimiter', '"x",y\n', false],
    ['quoted, at the end of the file', '1,"x"', false],
  ])('warns about a quote %s: %j -> %s, in chunks of 1 to 1024 bytes', async (_, row, loose) => {
    for (const chunk of [1, 2, 3, 1024]) {
      const { warnings } = await parseWithWarnings(`a,b\n${row}`, chunk)
      expect(warnings.map((warning) => warning.includes('starting on line 2'))).toEqual(loose ? [true] : [])
    }
  })
})
