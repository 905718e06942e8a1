/**
 * Blank lines and Excel's `sep=` line before the header, read past on every parse path (this thread, a parse
 * thread, parallel chunks): the same header, delimiter and rows as without them, and errors on the file's lines.
 */
import { describe, expect, it } from 'vitest'
import { DataError } from '../../../functions/export/core/errors.ts'
import { openParsedTable, type ParseThread } from '../../../functions/export/csv/parse-worker.ts'
import type { TableParserOptions } from '../../../functions/export/csv/table-parser.ts'
import { DEFAULT_LIMITS } from '../../support/limits.ts'

const OPTIONS: TableParserOptions = { tableId: 't1', shortRows: 'fail', invalidBytes: 'fail', limits: DEFAULT_LIMITS }

/** The body in chunks of `size` bytes, so a preamble can end in the middle of one or across several. */
async function* body(text: string, size: number) {
  const bytes = Buffer.from(text, 'utf8')
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size)
}

const rowsOf = (count: number): string => Array.from({ length: count }, (_, i) => `${i};"note, ${i}"`).join('\r\n')

const PATHS: readonly [string, ParseThread][] = [
  ['this thread', 'inline'],
  ['a parse thread', 'worker'],
  ['parallel chunks', { workers: 2, chunkBytes: 4096 }],
]

const parse = async (text: string, thread: ParseThread, chunk: number, options = OPTIONS) => {
  const parsed = await openParsedTable(body(text, chunk), options, thread)
  let rows = 0
  try {
    for await (const batch of parsed.batches) {
      rows += batch.rowCount
      parsed.recycle(batch.bytes.buffer as ArrayBuffer, batch.offsets.buffer as ArrayBuffer)
    }
  } finally {
    await parsed.close()
  }
  return { header: parsed.header, delimiter: parsed.delimiter, rows }
}

describe.each(PATHS)('the start of a CSV, on %s', (_, thread) => {
  it.each([2, 7, 64 * 1024])('reads past blank lines and sep=; in chunks of %i bytes', async (chunk) => {
    const text = ` \r\n\n\r\nsep=;\r\nid;note\r\n${rowsOf(2000)}\r\n`
    expect(await parse(text, thread, chunk)).toEqual({ header: ['id', 'note'], delimiter: ';', rows: 2000 })
  })

  it('keeps a forced delimiter over sep=', async () => {
    const text = `sep=;\nid|note\n1|a;b\n`
    expect(await parse(text, thread, 3, { ...OPTIONS, delimiter: '|' })).toEqual({
      header: ['id', 'note'],
      delimiter: '|',
      rows: 1,
    })
  })

  it('takes a first line that only starts like sep= as the header', async () => {
    expect(await parse('sep=;x,note\n1,a\n', thread, 4)).toMatchObject({ header: ['sep=;x', 'note'], rows: 1 })
  })

  it('names the file line of a bad record after the preamble', async () => {
    const text = `\r\n\r\nsep=;\r\nid;note\r\n${rowsOf(2000)}\r\n1;2;3\r\n`
    const error = await parse(text, thread, 1000).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(DataError)
    expect(error).toMatchObject({ code: 'ROW_FIELD_COUNT', line: 2005 })
  })
})
