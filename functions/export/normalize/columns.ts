/**
 * Column naming: header text -> Athena-safe lowercase ASCII snake_case, unique and never empty.
 * The rule is documented in docs/analysts.md ("Column names"); change both together.
 */
import { MAX_COLUMN_NAME_LENGTH } from '../core/constants.ts'

/** Letters that Unicode decomposition does not reduce to ASCII. */
const TRANSLITERATIONS: Readonly<Record<string, string>> = {
  ß: 'ss',
  ẞ: 'ss',
  æ: 'ae',
  Æ: 'ae',
  œ: 'oe',
  Œ: 'oe',
  ø: 'o',
  Ø: 'o',
  đ: 'd',
  Đ: 'd',
  ð: 'd',
  Ð: 'd',
  þ: 'th',
  Þ: 'th',
  ł: 'l',
  Ł: 'l',
  ı: 'i',
}
const NEEDS_TRANSLITERATION = new RegExp(`[${Object.keys(TRANSLITERATIONS).join('')}]`, 'g')

/** One header cell's name without uniqueness: may be empty. */
export const snakeCase = (header: string): string =>
  header
    .replace(NEEDS_TRANSLITERATION, (letter) => TRANSLITERATIONS[letter] ?? '')
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')

export interface NamedColumn {
  /** Athena column name. */
  readonly name: string
  /** Header text as the service sent it. */
  readonly header: string
}

/** A header's name before uniqueness: snake_case, `column_<position>` when nothing is left, `col_` before a digit. */
export const baseName = (header: string, index: number): string => {
  let base = snakeCase(header)
  if (base === '') base = `column_${index + 1}`
  else if (/^\d/.test(base)) base = `col_${base}`
  return base.slice(0, MAX_COLUMN_NAME_LENGTH).replace(/_+$/, '')
}

/** Whether `name` is `base` or `base` (cut to fit) with a `_<n>` suffix: a name nameColumns could give the header. */
export const derivedFrom = (name: string, base: string): boolean => {
  if (name === base) return true
  const stem = name.replace(/_\d+$/, '')
  return stem !== name && stem !== '' && base.startsWith(stem)
}

/**
 * Names every header: its base name, at most 255 characters, and `_2`, `_3`... on repeats in order of
 * appearance. `claimed` fixes the names of some positions (the ones a registry knows by their header,
 * column-identity.ts); the others take the first free names around them.
 */
export const nameColumns = (
  headers: readonly string[],
  reserved: readonly string[] = [],
  claimed: ReadonlyMap<number, string> = new Map(),
): NamedColumn[] => {
  const taken = new Set([...reserved, ...claimed.values()])
  // The next suffix to try per base name: every smaller one is taken already, so repeats cost O(1) each.
  const nextSuffix = new Map<string, number>()
  return headers.map((header, index) => {
    const fixed = claimed.get(index)
    if (fixed !== undefined) return { name: fixed, header }
    const base = baseName(header, index)
    let name = base
    let n = nextSuffix.get(base) ?? 2
    for (; taken.has(name); n++) {
      const suffix = `_${n}`
      name = `${base.slice(0, MAX_COLUMN_NAME_LENGTH - suffix.length).replace(/_+$/, '')}${suffix}`
    }
    nextSuffix.set(base, n)
    taken.add(name)
    return { name, header }
  })
}
