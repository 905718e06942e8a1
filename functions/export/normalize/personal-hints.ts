/**
 * What looks personal in a table, for `npm run check`: a column whose header names a person, or whose sampled
 * values mostly look like e-mail addresses or phone numbers. A hint for whoever writes `tables[].columns`, not a
 * guarantee: it sees the first rows only, and a column of free text can hold anything.
 */

export interface PersonalDataHint {
  /** The exported column name. */
  readonly name: string
  /** Why it looks personal, in words. */
  readonly reason: string
}

/** Words of a column name that name a person or a way to reach one. */
const PERSON_WORDS = new Set([
  'name',
  'owner',
  'user',
  'username',
  'employee',
  'email',
  'mail',
  'phone',
  'mobile',
  'address',
  'birth',
  'birthday',
  'birthdate',
])

/** Words that name a person only on their own: `full_name`, `home_address`, but not `host_name`, `ip_address`. */
const AMBIGUOUS_WORDS = new Set(['name', 'address', 'mail'])
/** Words that make a name or address a thing's: a host, an IP or MAC address, a piece of software. */
const THING_WORDS = new Set([
  'app',
  'application',
  'company',
  'computer',
  'department',
  'device',
  'domain',
  'file',
  'group',
  'host',
  'ip',
  'ipv4',
  'ipv6',
  'location',
  'mac',
  'manufacturer',
  'model',
  'network',
  'os',
  'package',
  'printer',
  'product',
  'server',
  'service',
  'site',
  'software',
  'table',
  'vendor',
])

/** The header word that names a person, if any. */
const personWord = (name: string): string | undefined => {
  const words = name.split('_')
  const thing = words.some((w) => THING_WORDS.has(w))
  const word = words.find((w) => PERSON_WORDS.has(w) && !(thing && AMBIGUOUS_WORDS.has(w)))
  return word ?? (name.includes('e_mail') ? 'e-mail' : undefined)
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
/** A leading + or a 0, or separators between digit groups; at least 7 digits; never a date. */
const PHONE = /^(\+|00|0|\()[\d\s()./-]{6,}$|^\d{2,5}[\s/-]\d[\d\s/-]{4,}$/
const DATE_LIKE = /^\d{4}-\d{2}-\d{2}/
const digitCount = (value: string): number => value.replace(/\D/g, '').length

/** Share of non-empty values that must look alike before the column is named. */
const MAJORITY = 0.5

const mostly = (values: readonly string[], test: (value: string) => boolean): boolean =>
  values.length > 0 && values.filter(test).length / values.length >= MAJORITY

/** The hints for the columns not already dropped or pseudonymized; `rows[r][c]` is the text of column c. */
export const personalDataHints = (
  columns: readonly { readonly name: string }[],
  rows: readonly (readonly string[])[],
  controlled: readonly string[],
): PersonalDataHint[] =>
  columns.flatMap(({ name }, index) => {
    if (controlled.includes(name)) return []
    const values = rows.map((row) => row[index]?.trim() ?? '').filter((v) => v !== '')
    if (mostly(values, (v) => EMAIL.test(v))) return [{ name, reason: 'its values look like e-mail addresses' }]
    const isPhone = (v: string) => PHONE.test(v) && !DATE_LIKE.test(v) && digitCount(v) >= 7 && digitCount(v) <= 15
    if (mostly(values, isPhone)) return [{ name, reason: 'its values look like phone numbers' }]
    const word = personWord(name)
    return word === undefined ? [] : [{ name, reason: `its header names a person ("${word}")` }]
  })
