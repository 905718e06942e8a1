import { describe, expect, it } from 'vitest'
import { mayRespell, writeCanonicalCell } from '../../../functions/export/normalize/canonical-cell.ts'

/** The cell's one spelling, or undefined when it is hashed as it is; the quick look must never skip a respelling. */
const spellingOf = (cell: string): string | undefined => {
  const bytes = Buffer.from(cell, 'latin1')
  const out = Buffer.alloc(32)
  const length = writeCanonicalCell(bytes, 0, bytes.length, out, 0)
  if (length >= 0) expect(mayRespell(bytes, 0, bytes.length)).toBe(true)
  return length < 0 ? undefined : out.toString('latin1', 0, length)
}

const SPAN = Date.UTC(9999, 11, 31) - Date.UTC(1, 0, 1)
/** Instants across the years TIMESTAMP reads, leap days and the epoch's edges included. */
const INSTANTS = [
  Date.UTC(1, 0, 1),
  Date.UTC(1969, 11, 31, 23, 59, 59, 999),
  0,
  Date.UTC(2000, 1, 29, 12, 0, 0, 1),
  Date.UTC(2024, 1, 29, 23, 59, 59),
  Date.UTC(2100, 2, 1),
  Date.UTC(9999, 11, 31, 23, 59, 59, 999),
  // Spread over years 1 to 9999 by the golden ratio's fractions.
  ...Array.from({ length: 200 }, (_, i) => Date.UTC(1, 0, 1) + Math.floor(((i * 0.618_033_988_7) % 1) * SPAN)),
]

describe('the one spelling a fingerprint hashes', () => {
  it.each(INSTANTS.map((ms) => [new Date(ms).toISOString()]))('of %s is its ISO instant in UTC', (iso) => {
    const expected = iso.endsWith('.000Z') ? `${iso.slice(0, 19)}Z` : iso
    expect(spellingOf(`${iso.slice(0, 10)} ${iso.slice(11, 23)}`)).toBe(expected)
    expect(spellingOf(expected)).toBeUndefined()
  })

  it.each([
    ['TRUE', 'true'],
    ['False', 'false'],
    ['fALSE', 'false'],
    ['tRUE', 'true'],
    ['false', undefined],
    ['true', undefined],
    ['truth', undefined],
    ['2026-02-30T00:00:00Z', undefined],
    ['2026-11-20', undefined],
    ['2026-11-20T08:15:42.123000Z', '2026-11-20T08:15:42.123Z'],
    // No timestamp (the type keeps milliseconds): text, hashed as it is.
    ['2026-11-20T08:15:42.123456Z', undefined],
  ])('of %s is %s', (cell, expected) => {
    expect(spellingOf(cell)).toBe(expected)
  })
})
