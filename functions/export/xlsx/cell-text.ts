/**
 * A scanned cell's bytes -> the text the CSV would carry for it, appended as UTF-8 bytes to the row being read.
 * Shared-string indexes and plain integers are read from the bytes; shared strings, plain UTF-8 text and plain
 * integers go on as the bytes they are, and a string is made only for a value the fast paths do not cover
 * (decimals, dates, `_xHHHH_` escapes, bytes that are not UTF-8), which takes the rules of cells.ts and
 * shared-strings.ts as they are.
 */
import { isUtf8 } from 'node:buffer'
import { WorkbookError } from '../core/errors.ts'
import { ESCAPES, HIGH_BYTES, textTraits } from './cell-bytes.ts'
import { numberText, serialText } from './cells.ts'
import { GENERAL_FORMAT, type NumberFormat, NumberKind } from './number-format.ts'
import type { RowBytes } from './row-bytes.ts'
import { byteString, unescapeText } from './shared-strings.ts'
import type { WorkbookParts } from './workbook.ts'

/** A cell's `t` attribute; anything SpreadsheetML does not name reads as a number, as `n` does. */
export const CellType = {
  NUMBER: 0,
  SHARED: 1,
  INLINE: 2,
  STRING: 3,
  BOOLEAN: 4,
  ERROR: 5,
  DATE: 6,
} as const
export type CellType = (typeof CellType)[keyof typeof CellType]

/** The longest index or row number read: 15 digits stay exact in a double. */
const MAX_DIGITS = 15
/** Distinct error values named in the warning. */
const ERROR_VALUES_NAMED = 5
const QUOTED_PREFIX = 32

/** The bytes of a cell being read: its `<v>` or its inline string. */
export interface CellBytes {
  readonly bytes: Buffer
  readonly length: number
}

export interface CellContext {
  readonly tableId: string
  readonly part: string
  readonly formats: readonly NumberFormat[]
  readonly parts: WorkbookParts
  readonly errorCells: { count: number; values: Set<string> }
  cellName(): string
}

/** The decimal digits `bytes[start..end)` as a number, or -1 unless they are 1 to 15 digits and nothing else. */
export const digitsValue = (bytes: Uint8Array, start: number, end: number): number => {
  if (end <= start || end - start > MAX_DIGITS) return -1
  let n = 0
  for (let i = start; i < end; i++) {
    const digit = bytes[i]! - 0x30
    if (digit < 0 || digit > 9) return -1
    n = n * 10 + digit
  }
  return n
}

const equals = (bytes: Uint8Array, start: number, end: number, text: string): boolean => {
  if (end - start !== text.length) return false
  for (let i = 0; i < text.length; i++) if (bytes[start + i] !== text.charCodeAt(i)) return false
  return true
}

/** The type named by a `t` attribute's bytes. */
export const cellType = (bytes: Uint8Array, start: number, end: number): CellType => {
  if (end - start === 1) {
    const t = bytes[start]
    if (t === 0x73) return CellType.SHARED
    if (t === 0x62) return CellType.BOOLEAN
    if (t === 0x65) return CellType.ERROR
    if (t === 0x64) return CellType.DATE
    return CellType.NUMBER
  }
  if (equals(bytes, start, end, 'str')) return CellType.STRING
  if (equals(bytes, start, end, 'inlineStr')) return CellType.INLINE
  return CellType.NUMBER
}

const hasHighByte = (bytes: Uint8Array, end: number): boolean => {
  for (let i = 0; i < end; i++) if (bytes[i]! >= 0x80) return true
  return false
}

/**
 * The cell's bytes as a byte string: as they are when they are valid UTF-8, otherwise decoded with U+FFFD for
 * what is not (as a decoder before the XML parser did), and `_xHHHH_` escapes undone when `escapes` says so.
 */
export const textOf = ({ bytes, length }: CellBytes, escapes: boolean): string => {
  const traits = textTraits(bytes, length)
  if (escapes && traits & ESCAPES) return byteString(unescapeText(bytes.toString('utf8', 0, length)))
  if (!(traits & HIGH_BYTES) || isUtf8(bytes.subarray(0, length))) return bytes.toString('latin1', 0, length)
  return byteString(bytes.toString('utf8', 0, length))
}

/** The integer a `<v>` of `-?digits` holds when it is written as String() would write it, or undefined. */
const plainInteger = (bytes: Buffer, length: number): number | undefined => {
  const negative = bytes[0] === 0x2d
  const start = negative ? 1 : 0
  // A leading zero or "-0" is the number written otherwise: Number() reads it, numberText() writes it anew.
  if (bytes[start] === 0x30 && length - start !== 1) return undefined
  const n = digitsValue(bytes, start, length)
  if (n < 0 || (negative && n === 0)) return undefined
  return negative ? -n : n
}

/** Significant digits a double keeps for any decimal: a decimal of no more reads back as written. */
const EXACT_DIGITS = 15
/** String() writes numbers below 1e-6 with an exponent: a fraction after "0." starts with at most 5 zeros. */
const MAX_LEADING_FRACTION_ZEROS = 5

/**
 * Whether a `<v>` of `-?digits.digits` is already the text numberText() writes for it in `format` (General, or a
 * fixed count of decimals): at most 15 digits without a leading zero, so the double read back is written with the
 * same digits; in General without a trailing zero or an exponent's worth of leading ones, and fixed with exactly
 * its decimals and not a negative zero.
 */
const writtenAsNumberText = (bytes: Buffer, length: number, format: NumberFormat): boolean => {
  const start = bytes[0] === 0x2d ? 1 : 0
  let point = start
  while (point < length && bytes[point]! >= 0x30 && bytes[point]! <= 0x39) point++
  const whole = point - start
  if (whole === 0 || point >= length || bytes[point] !== 0x2e || length - start - 1 > EXACT_DIGITS) return false
  if (whole > 1 && bytes[start] === 0x30) return false
  let leadingZeros = -1
  for (let i = point + 1; i < length; i++) {
    const b = bytes[i]!
    if (b < 0x30 || b > 0x39) return false
    if (b !== 0x30 && leadingZeros < 0) leadingZeros = i - point - 1
  }
  const decimals = length - point - 1
  if (decimals === 0) return false
  const zeroWhole = whole === 1 && bytes[start] === 0x30
  if (format.kind === NumberKind.FIXED) {
    return decimals === format.decimals && (start === 0 || !zeroWhole || leadingZeros >= 0)
  }
  if (bytes[length - 1] === 0x30) return false
  return !zeroWhole || leadingZeros <= MAX_LEADING_FRACTION_ZEROS
}

/** Appends the cell's text to `row`: its bytes as they are when they are plain UTF-8, otherwise as textOf() has it. */
const writeText = (cell: CellBytes, escapes: boolean, row: RowBytes): void => {
  const { bytes, length } = cell
  const traits = textTraits(bytes, length)
  if ((!escapes || !(traits & ESCAPES)) && (!(traits & HIGH_BYTES) || isUtf8(bytes.subarray(0, length)))) {
    row.append(bytes, 0, length)
  } else row.appendText(textOf(cell, escapes))
}

const TRUE = Buffer.from('true')
const FALSE = Buffer.from('false')

const numberCell = (value: CellBytes, format: NumberFormat, date1904: boolean, row: RowBytes): void => {
  const { bytes, length } = value
  const integer = plainInteger(bytes, length)
  const asWritten =
    integer !== undefined
      ? format.kind === NumberKind.GENERAL
      : format.kind <= NumberKind.FIXED && writtenAsNumberText(bytes, length, format)
  if (asWritten) {
    row.append(bytes, 0, length)
    return
  }
  const number = integer ?? Number(bytes.toString(hasHighByte(bytes, length) ? 'utf8' : 'latin1', 0, length))
  if (!Number.isFinite(number)) writeText(value, false, row)
  else if (format.kind >= NumberKind.DATE) {
    row.appendText(serialText(number, format.kind, date1904) ?? numberText(number, format))
  } else row.appendText(numberText(number, format))
}

/**
 * Appends to `row` the text the CSV would carry for the cell of `type` and `style` whose `<v>` is `value` and
 * inline string `inline` (nothing for an empty cell): shared strings, plain UTF-8 text and plain integers as the
 * bytes they are; other values through the rules of cells.ts and shared-strings.ts, as strings.
 */
export const writeCell = (
  type: CellType,
  style: number,
  value: CellBytes,
  inline: CellBytes,
  context: CellContext,
  row: RowBytes,
): void => {
  switch (type) {
    case CellType.SHARED: {
      // An empty cell is NULL whatever its type; an index is digits only, never a fraction, sign or exponent.
      if (value.length === 0) return
      const index = digitsValue(value.bytes, 0, value.length)
      if (index < 0 || !context.parts.sharedStrings.appendTo(index, row)) {
        const written = value.bytes.toString('utf8', 0, value.length)
        const quoted =
          written.length <= QUOTED_PREFIX
            ? written
            : `${written.slice(0, QUOTED_PREFIX)}… (${written.length} characters)`
        throw new WorkbookError('XLSX_MALFORMED', {
          tableId: context.tableId,
          reason: `cell ${context.cellName()} of ${context.part} names shared string "${quoted}", which the workbook does not have (it has ${context.parts.sharedStrings.count})`,
        })
      }
      return
    }
    case CellType.INLINE:
      writeText(inline, true, row)
      return
    case CellType.STRING:
      writeText(value, true, row)
      return
    case CellType.BOOLEAN: {
      if (value.length === 0) return
      const { bytes, length } = value
      const yes = (length === 1 && bytes[0] === 0x31) || equals(bytes, 0, length, 'true')
      row.append(yes ? TRUE : FALSE, 0, yes ? 4 : 5)
      return
    }
    case CellType.ERROR:
      if (value.length > 0) {
        const { errorCells } = context
        errorCells.count++
        if (errorCells.values.size < ERROR_VALUES_NAMED) {
          errorCells.values.add(value.bytes.toString('utf8', 0, value.length))
        }
      }
      return
    case CellType.DATE:
      // Record batches take UTF-8 bytes: a decoded character past U+00FF would be cut to its low byte.
      writeText(value, false, row)
      return
    default:
      if (value.length > 0) numberCell(value, context.formats[style] ?? GENERAL_FORMAT, context.parts.date1904, row)
  }
}
