/** The cell texts that cells.ts computes without a Date, against what a Date writes. */
import { describe, expect, it } from 'vitest'
import { civilDate } from '../../../functions/export/xlsx/cells.ts'

describe('a day count becomes its calendar date', () => {
  it('as Date.toISOString writes it, for every day from 1899-12-30 to 9999-12-31', () => {
    const first = Date.UTC(1899, 11, 30) / 86_400_000
    const last = Date.UTC(9999, 11, 31) / 86_400_000
    const wrong: string[] = []
    for (let days = first; days <= last; days++) {
      const expected = new Date(days * 86_400_000).toISOString().slice(0, 10)
      if (civilDate(days) !== expected) wrong.push(`${days}: ${civilDate(days)} for ${expected}`)
      if (wrong.length > 5) break
    }
    expect(wrong).toEqual([])
  })
})
