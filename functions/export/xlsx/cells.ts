/**
 * A cell's value as the text the CSV would carry for it, so that from here on both formats take one path (naming,
 * inference, conversion): whole numbers as integers, other numbers with at most the 15 significant digits a
 * spreadsheet keeps (or the decimals their format shows), booleans as `true`/`false`, date-formatted numbers as
 * `YYYY-MM-DD` or `YYYY-MM-DD HH:MM:SS[.sss]` (UTC, rounded to the millisecond), time-of-day formats as `HH:MM:SS`.
 */
import { civilFromDays } from '../core/civil-date.ts'
import { type NumberFormat, NumberKind } from './number-format.ts'

const MS_PER_DAY = 86_400_000
/** Serial of 1970-01-01 in the 1900 date system (which counts the 29th of February 1900 that never was). */
const EPOCH_1900 = 25_569
/** Serial of 1970-01-01 in the 1904 date system. */
const EPOCH_1904 = 24_107
/** Serials before this (1900-03-01) do not count the phantom 1900-02-29, so they are one day later than computed. */
const FIRST_REAL_1900_SERIAL = 61
/** Largest serial of a date (9999-12-31) in the 1900 system. */
const MAX_SERIAL = 2_958_465

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n))

/** A number as a decimal the CSV inference reads back to the same value (never `1e21` without a point). */
export const numberText = (value: number, format: NumberFormat): string => {
  if (format.kind === NumberKind.FIXED && Math.abs(value) < 1e15) {
    const fixed = value.toFixed(format.decimals)
    if (Number(fixed) === value) return fixed
  }
  if (Number.isSafeInteger(value)) return String(value)
  const text = String(Number(value.toPrecision(15)))
  const exponent = text.indexOf('e')
  return exponent < 0 || text.lastIndexOf('.', exponent) >= 0
    ? text
    : `${text.slice(0, exponent)}.0${text.slice(exponent)}`
}

/**
 * A date-formatted serial as date or timestamp text; time formats as a time of day; undefined when the serial is
 * no date (negative or past 9999), then the number stands.
 */
export const serialText = (serial: number, kind: NumberKind, date1904: boolean): string | undefined => {
  if (!(serial >= 0) || serial > MAX_SERIAL) return undefined
  let days = Math.floor(serial)
  let ms = Math.round((serial - days) * MS_PER_DAY)
  if (ms === MS_PER_DAY) {
    days++
    ms = 0
  }
  if (kind === NumberKind.TIME) return timeText(ms, days)
  const epoch = date1904 ? EPOCH_1904 : days < FIRST_REAL_1900_SERIAL ? EPOCH_1900 - 1 : EPOCH_1900
  const date = civilDate(days - epoch)
  // A date format shows the day; a time in it would be lost, so it stays a timestamp then.
  if (kind === NumberKind.DATE && ms === 0) return date
  return `${date} ${timeText(ms, 0)}`
}

/**
 * `YYYY-MM-DD` of a count of days since 1970-01-01, as `Date.toISOString()` writes it for years 1000 to 9999, by
 * the proleptic Gregorian calendar's arithmetic (H. Hinnant's civil_from_days) rather than a Date per cell.
 */
export const civilDate = (daysSinceEpoch: number): string => {
  const date = civilFromDays(daysSinceEpoch)
  return `${Math.floor(date / 10_000)}-${pad2(Math.floor(date / 100) % 100)}-${pad2(date % 100)}`
}

/** `HH:MM:SS[.sss]` of `ms` into a day; `days` whole days before it count as hours (elapsed-time formats). */
const timeText = (ms: number, days: number): string => {
  const seconds = Math.floor(ms / 1000)
  const fraction = ms % 1000
  const hours = days * 24 + Math.floor(seconds / 3600)
  const clock = `${pad2(hours)}:${pad2(Math.floor(seconds / 60) % 60)}:${pad2(seconds % 60)}`
  return fraction === 0 ? clock : `${clock}.${String(fraction).padStart(3, '0')}`
}
