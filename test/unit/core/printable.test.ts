import { describe, expect, it } from 'vitest'
import { printable, printableJson } from '../../../functions/export/core/printable.ts'

describe('printable', () => {
  it.each([
    ['ESC', '\x1b[2J', '\\x1b[2J'],
    ['LF', 'a\nb', 'a\\nb'],
    ['CR', 'a\rb', 'a\\rb'],
    ['TAB', 'a\tb', 'a\\tb'],
    ['NUL and BEL', '\x00\x07', '\\x00\\x07'],
    ['DEL', '\x7f', '\\x7f'],
    ['a C1 CSI', '\u009b2J', '\\x9b2J'],
    ['a right-to-left override', 'a\u202eb', 'a\\u202eb'],
    ['a first-strong isolate', '\u2068x\u2069', '\\u2068x\\u2069'],
    ['the line separator', 'a\u2028b', 'a\\u2028b'],
  ])('shows %s as a visible escape', (_what, text, shown) => {
    expect(printable(text)).toBe(shown)
  })

  it('keeps printable text, backslashes and letters past ASCII as they are, and changes nothing the second time', () => {
    const text = 'C:\\Geräte\\Ünïcode – 東京 ✓'
    expect(printable(text)).toBe(text)
    expect(printable(printable('\x1b\n\u202e'))).toBe(printable('\x1b\n\u202e'))
  })
})

describe('printableJson', () => {
  it('writes C1 and bidi controls as \\u escapes, and parses back to the same value', () => {
    const value = { header: '\x1b[2J\u009b\u202e\n', n: 1 }
    const line = printableJson(value)
    expect(line).not.toMatch(/[\x00-\x1f\u007f-\u009f\u202a-\u202e]/)
    expect(JSON.parse(line)).toEqual(value)
  })
})
