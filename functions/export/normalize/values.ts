/**
 * Text -> typed value, one function per column type. The definitions read UTF-8 bytes (the form cells travel in
 * between the parser and the encoder), so the hot path creates no strings; each answers whether the cell is a
 * faithful value of its type and leaves the value in `parsed`. Inference and conversion call the same functions,
 * so they can never disagree; the string forms at the end wrap them for callers that hold text.
 * The rules are documented in docs/analysts.md ("Column types"); change both together.
 */

/** Where a successful parse leaves its value; one slot instead of an object per cell. */
export const parsed = {
  /** The value: integer, double, day number, epoch milliseconds, or 1/0 for booleans. */
  value: 0,
  /** Set instead of `value` for a BIGINT beyond 15 digits, which a double cannot hold exactly. */
  big: 0n,
  isBig: false,
}

const ZERO = 0x30
const PLUS = 0x2b
const MINUS = 0x2d
const DOT = 0x2e
const COLON = 0x3a
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n
/** Up to 15 digits a double holds any integer exactly; longer ones go through BigInt. */
const EXACT_DIGITS = 15
/** Decimal texts with at most 15 significant digits survive the round trip through a double exactly. */
const DOUBLE_SIGNIFICANT_DIGITS = 15
const MIN_NORMAL_DOUBLE = 2.2250738585072014e-308
/** 10^0..10^22 are exact doubles: a 15-digit mantissa times or divided by one rounds once, like Number(). */
const EXACT_POWERS_OF_TEN = Array.from({ length: 23 }, (_, i) => 10 ** i)
const MS_PER_DAY = 86_400_000
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const

const digitAt = (bytes: Uint8Array, i: number): number => {
  const d = bytes[i]! - ZERO
  return d >= 0 && d <= 9 ? d : -1
}

/** The number written by `count` ASCII digits at `i`, or -1. */
const digitsAt = (bytes: Uint8Array, i: number, count: number): number => {
  let value = 0
  for (let k = 0; k < count; k++) {
    const d = digitAt(bytes, i + k)
    if (d < 0) return -1
    value = value * 10 + d
  }
  return value
}

// Not String.fromCharCode.apply: a field of a million leading zeros would pass a million arguments and overflow the stack.
const latin1 = (bytes: Uint8Array, start: number, end: number): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1', start, end)

/** BIGINT: optional sign, no leading zeros except `0` itself, at most 19 digits, within int64. */
export const bigintAt = (bytes: Uint8Array, start: number, end: number): boolean => {
  let i = start
  const sign = bytes[i]
  const negative = sign === MINUS
  if (negative || sign === PLUS) i++
  const digits = end - i
  if (digits < 1 || digits > 19) return false
  const lead = digitAt(bytes, i)
  if (lead < 0 || (lead === 0 && digits > 1)) return false
  if (digits <= EXACT_DIGITS) {
    const value = digitsAt(bytes, i, digits)
    if (value < 0) return false
    parsed.value = negative && value !== 0 ? -value : value
    parsed.isBig = false
    return true
  }
  if (digitsAt(bytes, i, digits) < 0) return false
  const value = BigInt(latin1(bytes, start, end))
  if (value < INT64_MIN || value > INT64_MAX) return false
  parsed.big = value
  parsed.isBig = true
  return true
}

/**
 * DOUBLE: decimal point notation, an integer or digits, a point and digits with an optional 1-3 digit exponent;
 * at most 15 significant digits; finite and not subnormal. `1e5` (often a code), `.5` and `5.` are not doubles.
 */
export const doubleAt = (bytes: Uint8Array, start: number, end: number): boolean => {
  let i = start
  const sign = bytes[i]
  const negative = sign === MINUS
  if (negative || sign === PLUS) i++
  const intStart = i
  const lead = i < end ? digitAt(bytes, i) : -1
  if (lead < 0) return false
  i++
  if (lead > 0) while (i < end && digitAt(bytes, i) >= 0) i++
  const intEnd = i
  let fracStart = i
  let fracEnd = i
  let exponent = 0
  if (i < end) {
    if (bytes[i] !== DOT) return false
    fracStart = ++i
    while (i < end && digitAt(bytes, i) >= 0) i++
    fracEnd = i
    if (fracEnd === fracStart) return false
    if (i < end) {
      if ((bytes[i++]! | 0x20) !== 0x65) return false
      const expSign = bytes[i]
      if (expSign === PLUS || expSign === MINUS) i++
      const expDigits = end - i
      exponent = expDigits >= 1 && expDigits <= 3 ? digitsAt(bytes, i, expDigits) : -1
      if (exponent < 0) return false
      if (expSign === MINUS) exponent = -exponent
    }
  }
  // The significant digits (first to last non-zero, over the integer part then the fraction) as an integer.
  let mantissa = 0
  let significant = 0
  let zeros = 0
  for (let k = intStart; k < fracEnd; k++) {
    if (k === intEnd) continue // the decimal point
    const d = bytes[k]! - ZERO
    if (d === 0) {
      if (significant > 0) zeros++
      continue
    }
    significant += zeros + 1
    if (significant > DOUBLE_SIGNIFICANT_DIGITS) return false
    for (; zeros > 0; zeros--) mantissa *= 10
    mantissa = mantissa * 10 + d
  }
  if (significant === 0) {
    parsed.value = negative ? -0 : 0
    return true
  }
  const power = exponent - (fracEnd - fracStart) + zeros
  let value: number
  if (power >= 0 && power <= 22) value = mantissa * EXACT_POWERS_OF_TEN[power]!
  else if (power < 0 && power >= -22) value = mantissa / EXACT_POWERS_OF_TEN[-power]!
  else {
    // Rare (large exponents): the engine's correctly rounded conversion decides.
    value = Math.abs(Number(latin1(bytes, start, end)))
    // Overflow to Infinity and underflow to 0 or to subnormals would change the value.
    if (!Number.isFinite(value) || value < MIN_NORMAL_DOUBLE) return false
  }
  parsed.value = negative ? -value : value
  return true
}

/** BOOLEAN: `true` or `false` in any letter case. */
export const booleanAt = (bytes: Uint8Array, start: number, end: number): boolean => {
  const length = end - start
  if (length === 4) {
    if ((bytes[start]! | 0x20) !== 0x74 || (bytes[start + 1]! | 0x20) !== 0x72) return false
    if ((bytes[start + 2]! | 0x20) !== 0x75 || (bytes[start + 3]! | 0x20) !== 0x65) return false
    parsed.value = 1
    return true
  }
  if (length === 5) {
    if ((bytes[start]! | 0x20) !== 0x66 || (bytes[start + 1]! | 0x20) !== 0x61) return false
    if ((bytes[start + 2]! | 0x20) !== 0x6c || (bytes[start + 3]! | 0x20) !== 0x73) return false
    if ((bytes[start + 4]! | 0x20) !== 0x65) return false
    parsed.value = 0
    return true
  }
  return false
}

const isLeapYear = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0

const daysInMonth = (year: number, month: number): number =>
  month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]!

/** Days from 1970-01-01 to a valid proleptic Gregorian date (H. Hinnant's days_from_civil). */
const daysFromCivil = (year: number, month: number, day: number): number => {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yearOfEra = y - era * 400
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear
  return era * 146_097 + dayOfEra - 719_468
}

/** `YYYY-MM-DD` at `i` as days since 1970-01-01, or NaN when it is not a real date (year 1 to 9999). */
const calendarDayAt = (bytes: Uint8Array, i: number): number => {
  if (bytes[i + 4] !== MINUS || bytes[i + 7] !== MINUS) return Number.NaN
  const year = digitsAt(bytes, i, 4)
  const month = digitsAt(bytes, i + 5, 2)
  const day = digitsAt(bytes, i + 8, 2)
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return Number.NaN
  return daysFromCivil(year, month, day)
}

/** DATE: `YYYY-MM-DD` that exists in the calendar; the value is days since 1970-01-01. */
export const dateAt = (bytes: Uint8Array, start: number, end: number): boolean => {
  if (end - start !== 10) return false
  const days = calendarDayAt(bytes, start)
  if (Number.isNaN(days)) return false
  parsed.value = days
  return true
}

/**
 * TIMESTAMP: `YYYY-MM-DD[T ]HH:MM[:SS[.fraction]][Z|±HH[[:]MM]]` (letters in any case), a missing offset meaning UTC;
 * stored in milliseconds, so digits after the third fraction digit must be zeros. The value is epoch milliseconds.
 */
export const timestampAt = (bytes: Uint8Array, start: number, end: number): boolean => {
  if (end - start < 16) return false
  const separator = bytes[start + 10]
  if (separator !== 0x54 && separator !== 0x74 && separator !== 0x20) return false
  if (bytes[start + 13] !== COLON) return false
  const days = calendarDayAt(bytes, start)
  const hour = digitsAt(bytes, start + 11, 2)
  const minute = digitsAt(bytes, start + 14, 2)
  if (Number.isNaN(days) || hour < 0 || hour > 23 || minute < 0 || minute > 59) return false
  let i = start + 16
  let second = 0
  let ms = 0
  if (i < end && bytes[i] === COLON) {
    second = digitsAt(bytes, i + 1, 2)
    if (second < 0 || second > 59 || i + 3 > end) return false
    i += 3
    if (i < end && bytes[i] === DOT) {
      const fractionStart = ++i
      while (i < end && digitAt(bytes, i) >= 0) i++
      const digits = i - fractionStart
      if (digits < 1 || digits > 9) return false
      for (let k = 0; k < 3; k++) ms = ms * 10 + (k < digits ? bytes[fractionStart + k]! - ZERO : 0)
      for (let k = fractionStart + 3; k < i; k++) if (bytes[k] !== ZERO) return false
    }
  }
  const offset = zoneOffsetMinutes(bytes, i, end)
  if (Number.isNaN(offset)) return false
  parsed.value = days * MS_PER_DAY + ((hour * 60 + minute - offset) * 60 + second) * 1000 + ms
  return true
}

/** The zone suffix from `i` to `end` in minutes east of UTC (none means UTC), or NaN when it is not one. */
const zoneOffsetMinutes = (bytes: Uint8Array, i: number, end: number): number => {
  const length = end - i
  if (length === 0) return 0
  const sign = bytes[i]
  if (length === 1) return (sign! | 0x20) === 0x7a ? 0 : Number.NaN
  if (sign !== PLUS && sign !== MINUS) return Number.NaN
  const hours = digitsAt(bytes, i + 1, 2)
  let minutes = 0
  if (length === 5) minutes = digitsAt(bytes, i + 3, 2)
  else if (length === 6 && bytes[i + 3] === COLON) minutes = digitsAt(bytes, i + 4, 2)
  else if (length !== 3) return Number.NaN
  if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59) return Number.NaN
  return (sign === MINUS ? -1 : 1) * (hours * 60 + minutes)
}
