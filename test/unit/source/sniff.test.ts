/**
 * The body's first bytes: pages (markup, JSON) told from tables, however the start is split, padded or encoded,
 * and the excerpt a refusal quotes (escaped, bounded). Also the Content-Encoding and charset headers as read.
 */
import { describe, expect, it } from 'vitest'
import { contentCoding, declaredCharset } from '../../../functions/export/source/content-coding.ts'
import { bodyExcerpt, SNIFF_LIMIT_BYTES, sniffPage } from '../../../functions/export/source/sniff.ts'

const MARKUP = 'markup (an HTML or XML page)'
const JSON_DOCUMENT = 'a JSON document'

describe('sniffing the start of a body', () => {
  it.each([
    ['<!DOCTYPE html><html>', MARKUP],
    ['<!doctype html>', MARKUP],
    ['<html lang="en">', MARKUP],
    ['<title>Sign in</title>', MARKUP],
    ['<script>location="/"</script>', MARKUP],
    ['<!-- portal -->', MARKUP],
    ['<?xml version="1.0"?><a/>', MARKUP],
    ['<br/>', MARKUP],
    ['\r\n\n \t<html>', MARKUP],
    ['\ufeff<html>', MARKUP],
    ['{"error": "x"}', JSON_DOCUMENT],
    ['{}', JSON_DOCUMENT],
    ['[\n  {"error": "x"}\n]', JSON_DOCUMENT],
    ['[]', JSON_DOCUMENT],
    ['["a", "b"]', JSON_DOCUMENT],
    ['[\n', JSON_DOCUMENT],
    ['Device ID,Owner\r\n1,Ada', undefined],
    ['[Device ID],Owner\r\n1,Ada', undefined],
    ['<5 years,count\r\n3,4', undefined],
    ['{id},name\r\n1,a', undefined],
    ['sep=;\r\na;b', undefined],
    ['\r\n\r\nDevice ID,Owner', undefined],
    ['', undefined],
  ])('reads %j, the whole body, as %s', (text, kind) => {
    expect(sniffPage(Buffer.from(text.replace('\ufeff', '\u00ef\u00bb\u00bf'), 'latin1'), true)).toBe(kind)
  })

  it('reads compressed bytes and a zip as what they are, however few have arrived', async () => {
    const { gzipSync, zstdCompressSync } = await import('node:zlib')
    expect(sniffPage(gzipSync('a,b\n1,2\n'), false)).toBe('gzip-compressed bytes without a Content-Encoding')
    expect(sniffPage(zstdCompressSync('a,b\n1,2\n'), false)).toBe('zstd-compressed bytes')
    expect(sniffPage(Buffer.from('PK\u0003\u0004rest', 'latin1'), false)).toBe('a zip file (a workbook?)')
  })

  it('reads a UTF-16 page without a byte-order mark as markup', () => {
    expect(sniffPage(Buffer.from('<html><body>Sign in</body></html>', 'utf16le'), true)).toBe(MARKUP)
    expect(sniffPage(Buffer.from('Device ID,Owner\r\n', 'utf16le').swap16(), true)).toBeUndefined()
  })

  it('waits for more than a line break or a bracket before it decides', () => {
    expect(sniffPage(Buffer.from('\r\n'), false)).toBe('undecided')
    expect(sniffPage(Buffer.from('[\n'), false)).toBe('undecided')
    expect(sniffPage(Buffer.from('Device ID,Owner\r\n'), false)).toBe('undecided')
    expect(sniffPage(Buffer.from(`Device ID,Owner\r\n${'1,Ada\r\n'.repeat(50)}`), false)).toBeUndefined()
  })

  it(`holds blanks up to ${SNIFF_LIMIT_BYTES} bytes, and refuses a body that is nothing but blank that far`, () => {
    expect(sniffPage(Buffer.alloc(8192, '\n'), false)).toBe('undecided')
    expect(sniffPage(Buffer.from(`${'\r\n'.repeat(4096)}${'<html>'.padEnd(300)}`), false)).toBe(MARKUP)
    expect(sniffPage(Buffer.alloc(SNIFF_LIMIT_BYTES, '\n'), false)).toBe('nothing but blank lines in its first 1 MiB')
  })

  it.each([
    ['a sep= line', 'sep=;\r\n<!DOCTYPE html>'],
    ['blank lines, a sep= line and more blank lines', '\r\n\r\nsep=,\n\n<html>'],
    ['a second byte-order mark', '\u00ef\u00bb\u00bf\u00ef\u00bb\u00bf<html>'],
    ['a UTF-8 no-break space', '\u00c2\u00a0<html>'],
    ['a UTF-8 zero-width space', '\u00e2\u0080\u008b<html>'],
  ])('looks past %s', (_what, start) => {
    expect(sniffPage(Buffer.from(start, 'latin1'), true)).toBe(MARKUP)
  })

  it('still reads a sep= line before a header as a table', () => {
    expect(sniffPage(Buffer.from('sep=;\r\nDevice ID;Owner\r\n1;Ada\r\n'), true)).toBeUndefined()
  })

  it('quotes 40 characters, escaped, without control characters', () => {
    const excerpt = bodyExcerpt(Buffer.from(`\r\n<html>\u0000\u0085${'x'.repeat(60)}`, 'latin1'))
    expect(excerpt).toBe(`"<html>\\u0085${'x'.repeat(33)}"...`)
    expect(excerpt).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/)
  })
})

describe('the headers of a table download', () => {
  it.each([
    [undefined, { coding: 'identity' }],
    ['identity', { coding: 'identity' }],
    ['GZIP', { coding: 'gzip' }],
    ['x-gzip', { coding: 'x-gzip' }],
    [' br ', { coding: 'br' }],
    ['deflate', { coding: 'deflate' }],
    ['compress', { unsupported: 'compress' }],
    ['zstd', { unsupported: 'zstd' }],
    ['gzip, br', { unsupported: 'gzip, br' }],
    ['identity, gzip', { coding: 'gzip' }],
  ])('Content-Encoding %j is read as %j', (header, read) => {
    expect(contentCoding(header)).toEqual(read)
  })

  it.each([
    ['text/csv; charset=utf-16le', 'utf-16le'],
    ['text/csv;charset="ISO-8859-1"', 'iso-8859-1'],
    ['text/csv; header=present; Charset=windows-1252', 'windows-1252'],
    ['text/csv', undefined],
    ['text/csv; charset=', undefined],
    [undefined, undefined],
  ])('the charset of %j is %j', (contentType, charset) => {
    expect(declaredCharset(contentType)).toBe(charset)
  })
})
