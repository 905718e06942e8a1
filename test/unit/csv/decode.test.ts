import { describe, expect, it } from 'vitest'
import { DataError } from '../../../functions/export/core/errors.ts'
import { type DecodeReport, decodeToUtf8, firstInvalidUtf8Offset } from '../../../functions/export/csv/decode.ts'

/** `bytes` as a stream of `size`-byte chunks, so sequences get split across chunk boundaries. */
async function* chunked(bytes: Uint8Array, size = bytes.length || 1): AsyncGenerator<Buffer> {
  for (let i = 0; i < bytes.length; i += size) yield Buffer.from(bytes.subarray(i, i + size))
}

const decode = async (
  bytes: Uint8Array,
  options: { encoding?: string; invalidBytes?: 'fail' | 'replace'; chunk?: number } = {},
): Promise<{ text: string; report: DecodeReport }> => {
  const { encoding = 'utf-8', invalidBytes = 'fail', chunk } = options
  const report: DecodeReport = { encoding, bom: false }
  const parts: Buffer[] = []
  for await (const part of decodeToUtf8(chunked(bytes, chunk), { tableId: 't1', encoding, invalidBytes }, report)) {
    parts.push(part)
  }
  return { text: Buffer.concat(parts).toString('utf8'), report }
}

const decodeError = async (bytes: Uint8Array, options: Parameters<typeof decode>[1] = {}): Promise<DataError> => {
  try {
    await decode(bytes, options)
  } catch (error) {
    if (error instanceof DataError) return error
    throw error
  }
  throw new Error('expected a DataError')
}

const utf16be = (text: string): Buffer => Buffer.from(text, 'utf16le').swap16()
const TEXT = 'a,b\r\nGröße,😀\r\n'

describe('decodeToUtf8', () => {
  it.each([1, 2, 3, 7, 1024])('strips a UTF-8 byte-order mark, in chunks of %i bytes', async (chunk) => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(TEXT)])
    expect(await decode(bytes, { chunk })).toEqual({ text: TEXT, report: { encoding: 'utf-8', bom: true } })
  })

  it.each([1, 3, 5, 1024])('decodes UTF-16 LE by its byte-order mark, in chunks of %i bytes', async (chunk) => {
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(TEXT, 'utf16le')])
    expect(await decode(bytes, { chunk })).toEqual({ text: TEXT, report: { encoding: 'utf-16le', bom: true } })
  })

  it.each([1, 3, 5, 1024])('decodes UTF-16 BE by its byte-order mark, in chunks of %i bytes', async (chunk) => {
    const bytes = Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be(TEXT)])
    expect(await decode(bytes, { chunk })).toEqual({ text: TEXT, report: { encoding: 'utf-16be', bom: true } })
  })

  it('decodes a configured legacy encoding', async () => {
    const bytes = Buffer.from([0x43, 0x61, 0x66, 0xe9, 0x2c, 0x80, 0x2c, 0x93, 0x78, 0x94])
    expect((await decode(bytes, { encoding: 'windows-1252' })).text).toBe('Café,€,“x”')
  })

  it('lets a byte-order mark win over the configured encoding', async () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('é')])
    expect(await decode(bytes, { encoding: 'windows-1252' })).toEqual({
      text: 'é',
      report: { encoding: 'utf-8', bom: true },
    })
  })

  it('passes multi-byte characters split across chunks', async () => {
    expect((await decode(Buffer.from(TEXT), { chunk: 1 })).text).toBe(TEXT)
  })

  it.each([
    ['no bytes at all', [], 'the service sent an empty file (0 bytes)'],
    ['only a byte-order mark', [0xef, 0xbb, 0xbf], 'the service sent an empty file (3 bytes, only a byte-order mark)'],
  ])('fails with EMPTY_BODY for %s', async (_, bytes, message) => {
    const error = await decodeError(Buffer.from(bytes))
    expect(error.code).toBe('EMPTY_BODY')
    expect(error.message).toBe(`table t1: ${message}; even an empty table has a header line`)
  })

  it.each([1, 2, 5, 1024])(
    'fails on invalid UTF-8 naming the offset of the bad sequence, in chunks of %i bytes',
    async (chunk) => {
      const bytes = Buffer.from('id,name\n1,caf\xe9 au lait\n', 'latin1')
      const error = await decodeError(bytes, { chunk })
      expect(error.code).toBe('INVALID_ENCODING')
      expect(error.message).toBe('table t1: invalid UTF-8 byte sequence at byte offset 13 (0xE9)')
    },
  )

  it('counts the offset from the start of the file, byte-order mark included', async () => {
    const bytes = Buffer.from([0xef, 0xbb, 0xbf, 0x61, 0xff])
    expect((await decodeError(bytes)).message).toBe('table t1: invalid UTF-8 byte sequence at byte offset 4 (0xFF)')
  })

  it('fails on a file that ends inside a multi-byte character', async () => {
    const bytes = Buffer.from([0x61, 0x62, 0xe2, 0x82])
    expect((await decodeError(bytes, { chunk: 1 })).message).toBe(
      'table t1: the file ends in an incomplete UTF-8 byte sequence at byte offset 2 (0xE2)',
    )
  })

  it.each([1, 4, 1024])('replaces invalid bytes with U+FFFD when asked, in chunks of %i bytes', async (chunk) => {
    const bytes = Buffer.from([0x61, 0xff, 0x62, 0xc3, 0xa9, 0xe2, 0x82])
    expect((await decode(bytes, { invalidBytes: 'replace', chunk })).text).toBe('a\ufffdbé\ufffd')
  })

  it('fails on a lone surrogate in UTF-16', async () => {
    const bytes = Buffer.from([0xff, 0xfe, 0x61, 0x00, 0x00, 0xd8, 0x62, 0x00])
    expect((await decodeError(bytes)).code).toBe('INVALID_ENCODING')
  })
})

describe('firstInvalidUtf8Offset', () => {
  it.each([
    ['plain ASCII', [0x61, 0x62], -1],
    ['well-formed 2, 3 and 4-byte characters', [0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80], -1],
    ['a stray continuation byte', [0x61, 0x80], 1],
    ['a lead byte followed by ASCII', [0x61, 0xc3, 0x28], 1],
    ['a 3-byte sequence missing its last byte', [0xe2, 0x82, 0x61], 0],
    ['an overlong encoding (C0)', [0xc0, 0xaf], 0],
    ['an overlong 3-byte encoding (E0 80)', [0xe0, 0x80, 0x80], 0],
    ['an encoded surrogate (ED A0)', [0x61, 0xed, 0xa0, 0x80], 1],
    ['a code point above U+10FFFF (F4 90)', [0xf4, 0x90, 0x80, 0x80], 0],
    ['a byte that never occurs (F8)', [0x61, 0x62, 0xf8], 2],
    ['a sequence cut off by the end', [0x61, 0xf0, 0x9f], 1],
  ])('finds %s at %i', (_, bytes, offset) => {
    expect(firstInvalidUtf8Offset(Uint8Array.from(bytes))).toBe(offset)
  })
})
