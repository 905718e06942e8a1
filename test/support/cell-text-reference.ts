/**
 * The cell rules as cell-text.ts had them before cells went to the batch as bytes: each cell's text as a byte
 * string (one character per UTF-8 byte). Kept as the reference writeCell() is checked against
 * (test/unit/xlsx/cell-bytes.test.ts).
 */
import { WorkbookError } from '../../functions/export/core/errors.ts'
import {
  type CellBytes,
  type CellContext,
  CellType,
  digitsValue,
  textOf,
} from '../../functions/export/xlsx/cell-text.ts'
import { numberText, serialText } from '../../functions/export/xlsx/cells.ts'
import { GENERAL_FORMAT, type NumberFormat, NumberKind } from '../../functions/export/xlsx/number-format.ts'

const ERROR_VALUES_NAMED = 5
const QUOTED_PREFIX = 32

const equals = (bytes: Uint8Array, start: number, end: number, text: string): boolean => {
  if (end - start !== text.length) return false
  for (let i = 0; i < text.length; i++) if (bytes[start + i] !== text.charCodeAt(i)) return false
  return true
}

const hasHighByte = (bytes: Uint8Array, end: number): boolean => {
  for (let i = 0; i < end; i++) if (bytes[i]! >= 0x80) return true
  return false
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

const numberCell = (value: CellBytes, format: NumberFormat, date1904: boolean): string => {
  const { bytes, length } = value
  const integer = plainInteger(bytes, length)
  if (integer !== undefined && format.kind === NumberKind.GENERAL) return bytes.toString('latin1', 0, length)
  const number = integer ?? Number(bytes.toString(hasHighByte(bytes, length) ? 'utf8' : 'latin1', 0, length))
  if (!Number.isFinite(number)) return textOf(value, false)
  if (format.kind >= NumberKind.DATE) return serialText(number, format.kind, date1904) ?? numberText(number, format)
  return numberText(number, format)
}

/** The text of the cell of `type` and `style` whose `<v>` is `value` and inline string `inline`. */
export const cellText = (
  type: CellType,
  style: number,
  value: CellBytes,
  inline: CellBytes,
  context: CellContext,
): string => {
  switch (type) {
    case CellType.SHARED: {
      // An empty cell is NULL whatever its type; an index is digits only, never a fraction, sign or exponent.
      if (value.length === 0) return ''
      const index = digitsValue(value.bytes, 0, value.length)
      const text = index >= 0 ? context.parts.sharedStrings.at(index) : undefined
      if (text === undefined) {
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
      return text
    }
    case CellType.INLINE:
      return textOf(inline, true)
    case CellType.STRING:
      return textOf(value, true)
    case CellType.BOOLEAN: {
      if (value.length === 0) return ''
      const { bytes, length } = value
      return (length === 1 && bytes[0] === 0x31) || equals(bytes, 0, length, 'true') ? 'true' : 'false'
    }
    case CellType.ERROR:
      if (value.length > 0) {
        const { errorCells } = context
        errorCells.count++
        if (errorCells.values.size < ERROR_VALUES_NAMED) {
          errorCells.values.add(value.bytes.toString('utf8', 0, value.length))
        }
      }
      return ''
    case CellType.DATE:
      // Record batches take byte strings: a character past U+00FF would be cut to its low byte.
      return textOf(value, false)
    default:
      if (value.length === 0) return ''
      return numberCell(value, context.formats[style] ?? GENERAL_FORMAT, context.parts.date1904)
  }
}
