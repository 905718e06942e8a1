import { describe, expect, it } from 'vitest'
import { parseBigint, parseBoolean, parseDate, parseDouble, parseTimestamp } from '../../support/values.ts'

const DAY_MS = 86_400_000

describe('parseBigint', () => {
  it.each([
    ['0', 0n],
    ['42', 42n],
    ['-17', -17n],
    ['+5', 5n],
    ['-0', 0n],
    ['9223372036854775807', 9223372036854775807n],
    ['-9223372036854775808', -9223372036854775808n],
  ])('reads %j as %s', (text, value) => {
    expect(parseBigint(text)).toBe(value)
  })

  it.each([
    ['007', 'a leading zero makes it an identifier'],
    ['00', 'a leading zero makes it an identifier'],
    ['9223372036854775808', 'it is one past the int64 maximum'],
    ['-9223372036854775809', 'it is one past the int64 minimum'],
    ['12345678901234567890', 'it has 20 digits'],
    ['1.0', 'it has a decimal point'],
    ['1e3', 'it has an exponent'],
    [' 1', 'it has a space'],
    ['1 000', 'it has a thousands separator'],
    ['0x1F', 'it is hexadecimal'],
    ['', 'it is empty'],
    ['+', 'it is only a sign'],
    ['١٢', 'its digits are not ASCII'],
  ])('rejects %j because %s', (text) => {
    expect(parseBigint(text)).toBeUndefined()
  })
})

describe('parseDouble', () => {
  it.each([
    ['1.5', 1.5],
    ['-0.25', -0.25],
    ['+3.75', 3.75],
    ['0.0', 0],
    ['42', 42],
    ['19.99', 19.99],
    ['1.5e3', 1500],
    ['2.5E-4', 0.00025],
    ['6.02214076e+23', 6.02214076e23],
    ['123456789012.345', 123456789012.345],
    ['0.100000000000001', 0.100000000000001],
    ['100000000000000000000.0', 1e20],
    ['1.7976931348623e308', 1.7976931348623e308],
    ['2.3e-308', 2.3e-308],
  ])('reads %j as %d', (text, value) => {
    expect(parseDouble(text)).toBe(value)
  })

  it.each([
    ['1234567890123.456', 'its 16 significant digits would be rounded'],
    ['0.1000000000000001', 'its 16 significant digits would be rounded'],
    ['12345678901234567', 'its 17 digits would be rounded'],
    ['1e5', 'an exponent needs a decimal point'],
    ['.5', 'it has no digit before the point'],
    ['5.', 'it has no digit after the point'],
    ['1,5', 'a decimal comma is text'],
    ['007.5', 'a leading zero makes it an identifier'],
    ['1.8e308', 'it overflows to Infinity'],
    ['1.0e-320', 'it would be a subnormal, losing digits'],
    ['2.2250738585072e-308', 'it is just below the smallest normal double'],
    ['1.0e1000', 'its exponent has four digits'],
    ['NaN', 'it is not a number'],
    ['Infinity', 'it is not a finite number'],
    ['1.5 ', 'it has a trailing space'],
  ])('rejects %j because %s', (text) => {
    expect(parseDouble(text)).toBeUndefined()
  })
})

describe('parseBoolean', () => {
  it.each([
    ['true', true],
    ['false', false],
    ['TRUE', true],
    ['False', false],
    ['tRuE', true],
  ])('reads %j as %s', (text, value) => {
    expect(parseBoolean(text)).toBe(value)
  })

  it.each([['yes'], ['no'], ['1'], ['0'], ['t'], ['f'], [' true'], ['truee'], ['']])('rejects %j', (text) => {
    expect(parseBoolean(text)).toBeUndefined()
  })
})

describe('parseDate', () => {
  it.each([
    ['1970-01-01', 0],
    ['2024-02-29', Date.parse('2024-02-29T00:00:00Z') / DAY_MS],
    ['2000-02-29', Date.parse('2000-02-29T00:00:00Z') / DAY_MS],
    ['1969-12-31', -1],
    ['0001-01-01', Date.parse('0001-01-01T00:00:00Z') / DAY_MS],
    ['0004-02-29', Date.parse('0004-02-29T00:00:00Z') / DAY_MS],
    ['9999-12-31', Date.parse('9999-12-31T00:00:00Z') / DAY_MS],
  ])('reads %j as day %i since 1970-01-01', (text, days) => {
    expect(parseDate(text)).toBe(days)
  })

  it.each([
    ['2024-02-30', 'February has no 30th'],
    ['2023-02-29', '2023 is not a leap year'],
    ['1900-02-29', '1900 is not a leap year'],
    ['2024-13-01', 'there is no month 13'],
    ['2024-00-10', 'there is no month 0'],
    ['2024-04-31', 'April has 30 days'],
    ['0000-01-01', 'there is no year 0'],
    ['2024-1-5', 'month and day need two digits'],
    ['05/01/2024', 'it is not YYYY-MM-DD'],
    ['2024-01-05T00:00:00Z', 'it is a timestamp'],
  ])('rejects %j because %s', (text) => {
    expect(parseDate(text)).toBeUndefined()
  })
})

describe('parseTimestamp', () => {
  it.each([
    ['2024-03-01T10:15:30Z', '2024-03-01T10:15:30.000Z'],
    ['2024-03-01T10:15:30.5Z', '2024-03-01T10:15:30.500Z'],
    ['2024-03-01T10:15:30.123Z', '2024-03-01T10:15:30.123Z'],
    ['2024-03-01T10:15:30.120000Z', '2024-03-01T10:15:30.120Z'],
    ['2024-03-01T10:15:30.123000000Z', '2024-03-01T10:15:30.123Z'],
    ['2024-03-01T12:15:30+02:00', '2024-03-01T10:15:30.000Z'],
    ['2024-03-01T05:15:30-05:00', '2024-03-01T10:15:30.000Z'],
    ['2024-03-01T15:45:30+0530', '2024-03-01T10:15:30.000Z'],
    ['2024-01-01T00:30:00+01', '2023-12-31T23:30:00.000Z'],
    ['2024-03-01 10:15:30', '2024-03-01T10:15:30.000Z'],
    ['2024-03-01T10:15', '2024-03-01T10:15:00.000Z'],
    ['2024-03-01t10:15:30z', '2024-03-01T10:15:30.000Z'],
    ['1969-12-31T23:59:59.999Z', '1969-12-31T23:59:59.999Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
  ])('reads %j as %s', (text, iso) => {
    expect(parseTimestamp(text)).toBe(Date.parse(iso))
  })

  it.each([
    ['2024-03-01T10:15:30.1234Z', 'a sub-millisecond digit would be truncated'],
    ['2024-03-01T10:15:30.000001Z', 'a sub-millisecond digit would be truncated'],
    ['2024-03-01T24:00:00Z', 'there is no hour 24'],
    ['2024-03-01T23:59:60Z', 'leap seconds cannot be stored'],
    ['2024-02-30T10:00:00Z', 'February has no 30th'],
    ['2024-03-01T10:00:00+24:00', 'an offset is less than 24 hours'],
    ['2024-03-01T10:00:00+02:60', 'an offset has less than 60 minutes'],
    ['2024-03-01', 'a date alone is a DATE'],
    ['2024-03-01T10', 'minutes are required'],
    ['2024-03-01T10:15:30.Z', 'a point needs digits after it'],
    ['20240301T101530Z', 'the basic format is not read'],
    ['2024-03-01T10:15:30 +02:00', 'there is a space before the offset'],
  ])('rejects %j because %s', (text) => {
    expect(parseTimestamp(text)).toBeUndefined()
  })
})

describe('a number text of 16 million characters (limits.maxFieldBytes)', () => {
  // The rare path hands the text to Number(); its characters once went as that many call arguments.
  it('is read without overflowing the stack, and refused as a double when it underflows', () => {
    expect(parseDouble(`0.${'0'.repeat(16 * 1024 * 1024)}15`)).toBeUndefined()
  })
})
