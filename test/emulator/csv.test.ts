import { parse } from 'csv-parse/sync'
import { describe, expect, it } from 'vitest'
import { encodeCsvCell, encodeCsvRecord } from '../../emulator/csv.ts'
import { parseRawCsv } from '../../emulator/raw-csv.ts'

describe('encodeCsvCell', () => {
  it.each([
    ['plain', 'plain'],
    ['with, comma', '"with, comma"'],
    ['14" screen', '"14"" screen"'],
    ['two\nlines', '"two\nlines"'],
    ['cr\r\nlf', '"cr\r\nlf"'],
    ['München', 'München'],
    ['000417', '000417'],
    [' padded ', ' padded '],
    ['', ''],
    [null, ''],
  ])('writes %j as %j', (value, expected) => {
    expect(encodeCsvCell(value)).toBe(expected)
  })
})

describe('encodeCsvRecord', () => {
  it('joins cells with commas and ends the record with CRLF', () => {
    expect(encodeCsvRecord(['a', null, 'b,c'])).toBe('a,,"b,c"\r\n')
  })

  it('round-trips awkward cells through an RFC 4180 parser', () => {
    const rows = [
      ['Model', 'Notes'],
      ['Latitude 7440, 14"', 'says "hi",\r\nthen\nleaves'],
      ['東京', ''],
    ]
    expect(parse(rows.map(encodeCsvRecord).join(''))).toEqual(rows)
  })
})

describe('parseRawCsv', () => {
  it('reads comma-separated records with quoted delimiters, doubled quotes and line breaks', () => {
    expect(parseRawCsv('a,b\r\n"x,1","say ""hi""\nbye"\r\n')).toEqual([
      ['a', 'b'],
      ['x,1', 'say "hi"\nbye'],
    ])
  })

  it('detects the delimiter from the first line and keeps ragged rows ragged', () => {
    expect(parseRawCsv('a;b;c\n1;2\n1;2;3;4')).toEqual([
      ['a', 'b', 'c'],
      ['1', '2'],
      ['1', '2', '3', '4'],
    ])
    expect(parseRawCsv('a\tb\n1\t2\n')).toEqual([
      ['a', 'b'],
      ['1', '2'],
    ])
  })

  it('drops a UTF-8 byte order mark and decodes UTF-16 by its byte order mark', () => {
    const utf8 = Buffer.from('\uFEFFÄ,b\n1,2\n', 'utf8')
    const utf16le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Ä,b\n1,2\n', 'utf16le')])
    const utf16be = Buffer.from(
      Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('Ä,b\n1,2\n', 'utf16le').swap16()]),
    )
    for (const raw of [utf8, utf16le, utf16be, '\uFEFFÄ,b\n1,2\n']) {
      expect(parseRawCsv(raw)).toEqual([
        ['Ä', 'b'],
        ['1', '2'],
      ])
    }
  })

  it('keeps a trailing empty field and reads an empty file as no records', () => {
    expect(parseRawCsv('a,\n')).toEqual([['a', '']])
    expect(parseRawCsv('')).toEqual([])
  })
})
