/**
 * What a cell's number format says about its number: a date, a date with a time, a time of day, or a number
 * shown with a fixed count of decimals. Built-in formats go by id (ECMA-376 Part 1, 18.8.30), custom ones by their
 * code's tokens outside quoted text, escapes and [colour]/[locale] brackets (its first section only).
 */

export const NumberKind = {
  /** General, or a format that does not change what the number is (percent, scientific, fractions). */
  GENERAL: 0,
  /** Shown with a fixed count of decimals (`0.00`, `#,##0.00`). */
  FIXED: 1,
  DATE: 2,
  DATE_TIME: 3,
  TIME: 4,
} as const
export type NumberKind = (typeof NumberKind)[keyof typeof NumberKind]

export interface NumberFormat {
  readonly kind: NumberKind
  /** Decimals of a FIXED format. */
  readonly decimals: number
}

const format = (kind: NumberKind, decimals = 0): NumberFormat => ({ kind, decimals })
export const GENERAL_FORMAT = format(NumberKind.GENERAL)

/** Built-in ids that are not General; the rest of 0-163 are General or locale-specific numbers. */
const BUILT_IN: ReadonlyMap<number, NumberFormat> = new Map([
  ...[2, 4, 7, 8, 39, 40].map((id) => [id, format(NumberKind.FIXED, 2)] as const),
  ...[14, 15, 16, 17, 27, 28, 29, 30, 31, 36, 50, 51, 52, 53, 54, 57, 58].map(
    (id) => [id, format(NumberKind.DATE)] as const,
  ),
  ...[18, 19, 20, 21, 32, 33, 34, 35, 45, 46, 47, 55, 56].map((id) => [id, format(NumberKind.TIME)] as const),
  [22, format(NumberKind.DATE_TIME)],
])

/** The format of a built-in id that no `<numFmt>` redefines. */
export const builtInFormat = (id: number): NumberFormat => BUILT_IN.get(id) ?? GENERAL_FORMAT

/** The first of up to four `;`-separated sections, with quoted text kept whole. */
const firstSection = (code: string): string => {
  let quoted = false
  for (let i = 0; i < code.length; i++) {
    const c = code[i]
    if (c === '"') quoted = !quoted
    else if (c === '\\') i++
    else if (c === ';' && !quoted) return code.slice(0, i)
  }
  return code
}

/** The tokens of a custom format code: literals, padding and fill characters, and non-time brackets removed. */
const formatTokens = (code: string): string =>
  firstSection(code)
    .replace(/"[^"]*"/g, '')
    .replace(/\\./g, '')
    .replace(/[_*]./g, '')
    .replace(/\[(?![hms]+\])[^\]]*\]/gi, '')
    .replace(/general/gi, '')
    .toLowerCase()

/** The format of a custom `formatCode`. */
export const customFormat = (code: string): NumberFormat => {
  const tokens = formatTokens(code)
  // Scientific notation's `E` is no date token; text (`@`) is never a date.
  const dateTokens = tokens.includes('@') ? '' : tokens.replace(/e[+-]/g, '')
  const hasTime = /[hs]|am\/pm|a\/p/.test(dateTokens)
  const hasDate = /[yd]/.test(dateTokens) || (dateTokens.includes('m') && !hasTime)
  if (hasDate && hasTime) return format(NumberKind.DATE_TIME)
  if (hasDate) return format(NumberKind.DATE)
  if (hasTime) return format(NumberKind.TIME)
  // Scientific, percent and fractions show a number other than the stored one.
  if (/e[+-]|[%/@]/.test(tokens)) return GENERAL_FORMAT
  const point = tokens.indexOf('.')
  if (point < 0) return GENERAL_FORMAT
  const decimals = /^[0#?]*/.exec(tokens.slice(point + 1))![0].length
  return decimals > 0 ? format(NumberKind.FIXED, decimals) : GENERAL_FORMAT
}
