/**
 * Text -> typed value, one function per column type. Each returns undefined when the text is not a faithful
 * value of that type, so inference and conversion share one definition and can never disagree.
 * The rules are documented in the README ("Column types"); change both together.
 */

/** Optional sign, no leading zeros except `0` itself, at most 19 digits (the range is checked after). */
const BIGINT_TEXT = /^[+-]?(0|[1-9]\d{0,18})$/
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n
/**
 * Decimal point notation: an integer, or digits, a point and digits with an optional exponent.
 * `1e5` (an exponent without a fraction, often a code), `.5` and `5.` are not doubles.
 */
const DOUBLE_TEXT = /^[+-]?(0|[1-9]\d*)(?:\.(\d+)(?:[eE][+-]?\d{1,3})?)?$/
/** Decimal texts with at most 15 significant digits survive the round trip through a double exactly. */
const DOUBLE_SIGNIFICANT_DIGITS = 15
const MIN_NORMAL_DOUBLE = 2.2250738585072014e-308
const DATE_TEXT = /^(\d{4})-(\d{2})-(\d{2})$/
const TIMESTAMP_TEXT =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i
/** Timestamps are stored in milliseconds: digits after the third fraction digit must be zeros. */
const SUB_MILLISECOND_DIGITS = /^\d{3}0*$/
const MS_PER_DAY = 86_400_000
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const

export const parseBigint = (text: string): bigint | undefined => {
  if (!BIGINT_TEXT.test(text)) return undefined
  const value = BigInt(text)
  return value < INT64_MIN || value > INT64_MAX ? undefined : value
}

export const parseDouble = (text: string): number | undefined => {
  const match = DOUBLE_TEXT.exec(text)
  if (!match) return undefined
  const significant = (match[1]! + (match[2] ?? '')).replace(/^0+/, '').replace(/0+$/, '').length
  if (significant > DOUBLE_SIGNIFICANT_DIGITS) return undefined
  const value = Number(text)
  // Overflow to Infinity and underflow to 0 or to subnormals would change the value.
  if (!Number.isFinite(value) || (significant > 0 && Math.abs(value) < MIN_NORMAL_DOUBLE)) return undefined
  return value
}

export const parseBoolean = (text: string): boolean | undefined => {
  if (text.length !== 4 && text.length !== 5) return undefined
  const lower = text.toLowerCase()
  return lower === 'true' ? true : lower === 'false' ? false : undefined
}

const isLeapYear = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0

const daysInMonth = (year: number, month: number): number =>
  month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]!

/** Milliseconds since the epoch of a proleptic Gregorian date-time read as UTC, or undefined if it does not exist. */
const utcMillis = (
  year: number,
  month: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0,
  ms = 0,
): number | undefined => {
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined
  if (hour > 23 || minute > 59 || second > 59) return undefined
  const date = new Date(Date.UTC(2000, month - 1, day, hour, minute, second, ms))
  date.setUTCFullYear(year) // Date.UTC maps years 0-99 to 1900-1999; the day was checked against the real year
  return date.getTime()
}

/** Days since 1970-01-01. */
export const parseDate = (text: string): number | undefined => {
  const match = DATE_TEXT.exec(text)
  if (!match) return undefined
  const millis = utcMillis(Number(match[1]), Number(match[2]), Number(match[3]))
  return millis === undefined ? undefined : millis / MS_PER_DAY
}

/** Milliseconds since the epoch, UTC; a missing offset means UTC. */
export const parseTimestamp = (text: string): number | undefined => {
  const match = TIMESTAMP_TEXT.exec(text)
  if (!match) return undefined
  const [, y, mo, d, h, mi, s, fraction, zone] = match
  let ms = 0
  if (fraction !== undefined) {
    const padded = fraction.padEnd(3, '0')
    if (!SUB_MILLISECOND_DIGITS.test(padded)) return undefined
    ms = Number(padded.slice(0, 3))
  }
  const local = utcMillis(Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s ?? 0), ms)
  const offset = zoneOffsetMinutes(zone)
  if (local === undefined || offset === undefined) return undefined
  return local - offset * 60_000
}

const zoneOffsetMinutes = (zone: string | undefined): number | undefined => {
  if (zone === undefined || zone.toUpperCase() === 'Z') return 0
  const sign = zone.startsWith('-') ? -1 : 1
  const digits = zone.slice(1).replace(':', '')
  const hours = Number(digits.slice(0, 2))
  const minutes = Number(digits.slice(2, 4) || '0')
  return hours > 23 || minutes > 59 ? undefined : sign * (hours * 60 + minutes)
}
