import { describe, expect, it } from 'vitest'
import { exportDateProblem } from '../../../functions/export/core/export-date.ts'

const NOW = new Date('2026-11-24T23:30:00Z')

describe('exportDateProblem', () => {
  it.each(['2000-01-01', '2026-11-24', '2026-11-25'])('accepts %s, inside the window', (date) => {
    expect(exportDateProblem(date, NOW)).toBeUndefined()
  })

  it.each(['1999-12-31', '2026-11-26', '2206-11-24'])('rejects %s, naming the window', (date) => {
    expect(exportDateProblem(date, NOW)).toBe('must be between 2000-01-01 and 2026-11-25 (today in UTC plus one day)')
  })

  it.each(['2026-02-30', '2026-1-01', '24.11.2026', ''])('rejects %j as not a calendar date', (date) => {
    expect(exportDateProblem(date, NOW)).toBe('must be a calendar date as YYYY-MM-DD')
  })
})
