/**
 * The byte-level value definitions against the regular expressions they replaced (kept here as the oracle),
 * over generated texts near every format's edges: the two must agree on every text, -0 included.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseBigint, parseBoolean, parseDate, parseDouble, parseTimestamp } from '../../support/values.ts'

const oracle = {
  bigint: (text: string): bigint | undefined => {
    if (!/^[+-]?(0|[1-9]\d{0,18})$/.test(text)) return undefined
    const value = BigInt(text)
    return value < -(2n ** 63n) || value > 2n ** 63n - 1n ? undefined : value
  },
  double: (text: string): number | undefined => {
    const match = /^[+-]?(0|[1-9]\d*)(?:\.(\d+)(?:[eE][+-]?\d{1,3})?)?$/.exec(text)
    if (!match) return undefined
    const significant = (match[1]! + (match[2] ?? '')).replace(/^0+/, '').replace(/0+$/, '').length
    if (significant > 15) return undefined
    const value = Number(text)
    if (!Number.isFinite(value) || (significant > 0 && Math.abs(value) < 2.2250738585072014e-308)) return undefined
    return value
  },
  boolean: (text: string): boolean | undefined => {
    if (text.length !== 4 && text.length !== 5) return undefined
    const lower = text.toLowerCase()
    return lower === 'true' ? true : lower === 'false' ? false : undefined
  },
  millis: (y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0): number | undefined => {
    const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0
    const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1]
    if (y < 1 || days === undefined || d < 1 || d > days || h > 23 || mi > 59 || s > 59) return undefined
    const date = new Date(Date.UTC(2000, mo - 1, d, h, mi, s, ms))
    date.setUTCFullYear(y)
    return date.getTime()
  },
  date: (text: string): number | undefined => {
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text)
    const millis = m ? oracle.millis(Number(m[1]), Number(m[2]), Number(m[3])) : undefined
    return millis === undefined ? undefined : millis / 86_400_000
  },
  timestamp: (text: string): number | undefined => {
    const m =
      /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i.exec(text)
    if (!m) return undefined
    const [, y, mo, d, h, mi, s, fraction, zone] = m
    let ms = 0
    if (fraction !== undefined) {
      const padded = fraction.padEnd(3, '0')
      if (!/^\d{3}0*$/.test(padded)) return undefined
      ms = Number(padded.slice(0, 3))
    }
    const local = oracle.millis(Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s ?? 0), ms)
    let offset: number | undefined = 0
    if (zone !== undefined && zone.toUpperCase() !== 'Z') {
      const digits = zone.slice(1).replace(':', '')
      const hours = Number(digits.slice(0, 2))
      const minutes = Number(digits.slice(2, 4) || '0')
      offset = hours > 23 || minutes > 59 ? undefined : (zone.startsWith('-') ? -1 : 1) * (hours * 60 + minutes)
    }
    return local === undefined || offset === undefined ? undefined : local - offset * 60_000
  },
}

/** Texts built from the characters the formats use, so that most are near a boundary of some format. */
const near = (alphabet: string, maxLength: number) =>
  fc.array(fc.constantFrom(...alphabet), { maxLength }).map((chars) => chars.join(''))

const numberText = fc.oneof(
  near('0123456789+-.eE', 24),
  fc
    .tuple(
      fc.constantFrom('', '-', '+'),
      near('0123456789', 20),
      near('0123456789', 20),
      fc.integer({ min: -400, max: 400 }),
    )
    .map(([sign, int, frac, exp]) => `${sign}${int || '0'}.${frac || '0'}e${exp}`),
  fc.double({ noNaN: true }).map(String),
  fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String),
)

const pad = (n: number, width: number) => String(n).padStart(width, '0')
const dateText = fc
  .tuple(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 }))
  .map(([y, m, d]) => `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`)
const timestampText = fc
  .tuple(
    dateText,
    fc.constantFrom('T', 't', ' ', 'x'),
    fc.integer({ min: 0, max: 25 }),
    fc.integer({ min: 0, max: 61 }),
    fc.option(fc.integer({ min: 0, max: 61 })),
    fc.option(near('0123456789', 11)),
    fc.constantFrom('', 'Z', 'z', '+01', '-0530', '+05:30', '+24', '-12:60', '+1', '+01:0', 'Q'),
  )
  .map(
    ([date, sep, h, mi, s, fraction, zone]) =>
      `${date}${sep}${pad(h, 2)}:${pad(mi, 2)}${s === null ? '' : `:${pad(s, 2)}${fraction === null ? '' : `.${fraction}`}`}${zone}`,
  )

const agree = <T>(actual: T | undefined, expected: T | undefined) => {
  expect(Object.is(actual, expected) || actual === expected).toBe(true)
}

describe('the byte-level value definitions', () => {
  it('read BIGINT exactly as the regular expression and int64 range did', () => {
    fc.assert(
      fc.property(fc.oneof(numberText, fc.string()), (text) => agree(parseBigint(text), oracle.bigint(text))),
      { numRuns: 20_000 },
    )
  })

  it('read DOUBLE exactly as the regular expression and Number() did, -0 included', () => {
    fc.assert(
      fc.property(fc.oneof(numberText, fc.string()), (text) => agree(parseDouble(text), oracle.double(text))),
      { numRuns: 20_000 },
    )
  })

  it('read BOOLEAN exactly as before, in any letter case and any text', () => {
    const casing = fc
      .tuple(
        fc.constantFrom('true', 'false', 'trUE', 'fals', 'truee'),
        fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
      )
      .map(([word, upper]) => [...word].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''))
    fc.assert(
      fc.property(fc.oneof(casing, fc.string()), (text) => agree(parseBoolean(text), oracle.boolean(text))),
      { numRuns: 5_000 },
    )
  })

  it('read DATE exactly as before, across the calendar and its invalid days', () => {
    fc.assert(
      fc.property(fc.oneof(dateText, fc.string()), (text) => agree(parseDate(text), oracle.date(text))),
      { numRuns: 20_000 },
    )
  })

  it('read TIMESTAMP exactly as before: separators, seconds, fractions, zones and their ranges', () => {
    fc.assert(
      fc.property(fc.oneof(timestampText, fc.string()), (text) => agree(parseTimestamp(text), oracle.timestamp(text))),
      { numRuns: 30_000 },
    )
  })

  it.each([
    ['0.000000000000000000000000001', 1e-27],
    ['-0.0', -0],
    ['123456789012345.0e-5', 1234567890.12345],
    ['9.99999999999999e307', 9.99999999999999e307],
    ['1.0e-307', 1e-307],
  ])('reads the edge case %j as %d', (text, value) => {
    agree(parseDouble(text), value)
    agree(parseDouble(text), oracle.double(text))
  })
})
