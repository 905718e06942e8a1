/**
 * The proleptic Gregorian date of a count of days since 1970-01-01 (H. Hinnant's civil_from_days), packed as
 * `year * 10000 + month * 100 + day` so the per-cell callers (the workbook's dates, the fingerprint's instants)
 * get it without an object or a Date per cell.
 */
export const civilFromDays = (daysSinceEpoch: number): number => {
  const z = daysSinceEpoch + 719_468
  const era = Math.floor(z / 146_097)
  const dayOfEra = z - era * 146_097
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  )
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100))
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153)
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
  return year * 10_000 + month * 100 + day
}
