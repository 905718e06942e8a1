/**
 * Glue's and Athena's documented rules for a table or view definition (`TableInput`), checked before anything is
 * sent, by the tests' Glue stand-in and by the local catalog of `npm run query`. A definition Glue would reject
 * (or that Athena could not query) fails here with every problem named, never first in AWS.
 *
 * Sources: Glue API reference (TableInput, Column, StorageDescriptor, SerDeInfo: lengths and the "single-line
 * string" pattern), Athena "Names for tables, databases, and columns", "Data types in Athena" (Hive DDL names),
 * "Supported types for partition projection" and "Specify custom S3 storage locations".
 */
import type { Column, TableInput } from '@aws-sdk/client-glue'
import { decodePrestoView, VIEW_TYPES } from './presto-view.ts'

/** Glue's single-line string pattern: no control character but tab, no lone surrogate, no U+FFFE/U+FFFF. */
const SINGLE_LINE = /^[\u0020-\uD7FF\uE000-\uFFFD\t\u{10000}-\u{10FFFF}]*$/u
/** Athena: lowercase letters, digits and underscore only (Glue lowercases names; other characters need quoting). */
const ATHENA_NAME = /^[a-z0-9_]+$/
const NAME_MAX = 255
const COMMENT_MAX = 255
const TYPE_MAX = 131_072
const PARAMETER_KEY_MAX = 255
const PARAMETER_VALUE_MAX = 512_000
const LOCATION_MAX = 2056
const FORMAT_MAX = 128
/** Glue's limit on a view's `ViewOriginalText` and `ViewExpandedText`, in characters. */
const VIEW_TEXT_MAX = 409_600

/** Hive DDL spellings of the types Athena reads: the primitive ones, and the changes view's array<string>. */
const HIVE_TYPE =
  /^(boolean|tinyint|smallint|int|integer|bigint|float|double|string|binary|date|timestamp|decimal(\(\d{1,2}(,\d{1,2})?\))?|(var)?char\(\d+\)|array<string>)$/

const PROJECTION_TYPES = ['enum', 'integer', 'date', 'injected']
const INTERVAL_UNITS = ['YEARS', 'MONTHS', 'WEEKS', 'DAYS', 'HOURS', 'MINUTES', 'SECONDS', 'MILLISECONDS']
/** A date projection range end: a date in the format, or NOW with an optional offset such as NOW-3YEARS. */
const NOW_BOUND = /^NOW(\s*[+-]\s*\d+\s*(YEAR|MONTH|WEEK|DAY|HOUR|MINUTE|SECOND|MILLISECOND)S?)?$/i

type Problems = string[]

const checkText = (problems: Problems, what: string, value: string | undefined, min: number, max: number) => {
  if (value === undefined) {
    if (min > 0) problems.push(`${what} is required`)
    return
  }
  if (value.length < min || value.length > max) problems.push(`${what} must be ${min} to ${max} characters long`)
  if (!SINGLE_LINE.test(value)) problems.push(`${what} ${JSON.stringify(value)} has a character Glue's pattern rejects`)
}

const checkColumn = (problems: Problems, where: string, column: Column, isView: boolean) => {
  const what = `${where} ${JSON.stringify(column.Name ?? '')}`
  checkText(problems, `${what}: the name`, column.Name, 1, NAME_MAX)
  if (column.Name !== undefined && !ATHENA_NAME.test(column.Name)) {
    problems.push(`${what}: Athena names are lowercase letters, digits and "_"`)
  }
  checkText(problems, `${what}: the comment`, column.Comment, 0, COMMENT_MAX)
  checkText(problems, `${what}: the type`, column.Type, 1, TYPE_MAX)
  if (column.Type !== undefined && !HIVE_TYPE.test(column.Type)) {
    problems.push(
      `${what}: "${column.Type}" is not a Hive type name${isView ? '' : ' (Athena DDL spells types as Hive does)'}`,
    )
  }
}

const checkParameters = (problems: Problems, parameters: Record<string, string> | undefined) => {
  for (const [key, value] of Object.entries(parameters ?? {})) {
    checkText(problems, `parameter key ${JSON.stringify(key)}`, key, 1, PARAMETER_KEY_MAX)
    if (value.length > PARAMETER_VALUE_MAX) problems.push(`parameter ${key} is longer than ${PARAMETER_VALUE_MAX}`)
  }
}

/** A `yyyy-MM-dd` date that exists. */
const isIsoDate = (text: string): boolean => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false
  const date = new Date(`${text}T00:00:00Z`)
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(text)
}

const checkDateProjection = (problems: Problems, key: string, parameters: Record<string, string>) => {
  const prefix = `projection.${key}`
  const format = parameters[`${prefix}.format`]
  const range = parameters[`${prefix}.range`]
  if (format === undefined) problems.push(`${prefix}.format is required for a date projection`)
  if (range === undefined) {
    problems.push(`${prefix}.range is required for a date projection`)
    return
  }
  const bounds = range.split(',').map((b) => b.trim())
  if (bounds.length !== 2) {
    problems.push(`${prefix}.range "${range}" must be two values separated by a comma`)
    return
  }
  for (const bound of bounds) {
    const fits = NOW_BOUND.test(bound) || (format === 'yyyy-MM-dd' ? isIsoDate(bound) : format !== undefined)
    if (!fits) problems.push(`${prefix}.range: "${bound}" is neither NOW nor a date in the format ${format}`)
  }
  if (format === 'yyyy-MM-dd' && bounds.every(isIsoDate) && bounds[0]! > bounds[1]!) {
    problems.push(`${prefix}.range starts after it ends`)
  }
  const interval = parameters[`${prefix}.interval`]
  if (interval !== undefined && !/^\s*[1-9]\d*\s*$/.test(interval)) {
    problems.push(`${prefix}.interval "${interval}" must be a positive integer`)
  }
  const unit = parameters[`${prefix}.interval.unit`]
  if (unit !== undefined && !INTERVAL_UNITS.includes(unit.trim().toUpperCase())) {
    problems.push(`${prefix}.interval.unit "${unit}" must be one of ${INTERVAL_UNITS.join(', ')}`)
  }
}

const checkProjection = (problems: Problems, input: TableInput) => {
  const parameters = input.Parameters ?? {}
  if (parameters['projection.enabled']?.trim().toLowerCase() !== 'true') return
  const keys = (input.PartitionKeys ?? []).map((k) => k.Name ?? '')
  if (keys.length === 0) problems.push('projection.enabled is set on a table without partition keys')
  for (const key of keys) {
    const type = parameters[`projection.${key}.type`]?.trim().toLowerCase()
    if (type === undefined) problems.push(`partition key ${key} has no projection.${key}.type`)
    else if (!PROJECTION_TYPES.includes(type))
      problems.push(`projection.${key}.type "${type}" is not a projection type`)
    else if (type === 'date') checkDateProjection(problems, key, parameters)
  }
  for (const name of Object.keys(parameters)) {
    const column = /^projection\.(.+)\.type$/.exec(name)?.[1]
    if (column !== undefined && !keys.includes(column)) problems.push(`${name} names no partition key`)
  }
  const template = parameters['storage.location.template']
  if (template !== undefined) {
    for (const key of keys) {
      if (!template.includes(`\${${key}}`)) {
        problems.push(`storage.location.template has no \${${key}}: it must place every partition key`)
      }
    }
  }
}

/** The main query of `WITH a AS (...), b AS (...) SELECT ...`: what follows the last parenthesis of the WITH list. */
const withoutWithClause = (sql: string): string => {
  if (!/^\s*WITH\s/i.test(sql)) return sql
  let depth = 0
  let quote: string | undefined
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!
    if (quote !== undefined) {
      if (c === quote) quote = undefined
    } else if (c === '"' || c === "'") quote = c
    else if (c === '(') depth++
    else if (c === ')') depth--
    else if (depth === 0 && /^\s*SELECT\s/i.test(sql.slice(i)) && /\)\s*$/.test(sql.slice(0, i))) return sql.slice(i)
  }
  return sql
}

/** The names a SELECT list returns: `"a"`, `t."a"`, `x AS "a"`; undefined when it cannot be read (e.g. `*`). */
export const selectedNames = (sql: string): string[] | undefined => {
  const list = /^\s*SELECT\s+(.*?)\s+FROM\s/is.exec(withoutWithClause(sql))?.[1]
  if (list === undefined) return undefined
  const items: string[] = []
  let depth = 0
  let quote: string | undefined
  let start = 0
  for (let i = 0; i < list.length; i++) {
    const c = list[i]!
    if (quote !== undefined) {
      if (c === quote) quote = undefined
    } else if (c === '"' || c === "'") quote = c
    else if (c === '(') depth++
    else if (c === ')') depth--
    else if (c === ',' && depth === 0) {
      items.push(list.slice(start, i))
      start = i + 1
    }
  }
  items.push(list.slice(start))
  const names: string[] = []
  for (const item of items) {
    const name = /(?:^|\s|\.)("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_]*)\s*$/.exec(item.trim())?.[1]
    if (name === undefined) return undefined
    names.push(name.startsWith('"') ? name.slice(1, -1).replace(/""/g, '"') : name.toLowerCase())
  }
  return names
}

const checkView = (problems: Problems, input: TableInput) => {
  if (input.Parameters?.presto_view !== 'true') problems.push('a view needs the parameter presto_view = "true"')
  if ((input.PartitionKeys ?? []).length > 0) problems.push('a view has no partition keys')
  if ((input.ViewOriginalText?.length ?? 0) > VIEW_TEXT_MAX) problems.push(`ViewOriginalText exceeds ${VIEW_TEXT_MAX}`)
  if ((input.ViewExpandedText?.length ?? 0) > VIEW_TEXT_MAX) problems.push(`ViewExpandedText exceeds ${VIEW_TEXT_MAX}`)
  const view = decodePrestoView(input.ViewOriginalText)
  if (view === undefined) {
    problems.push('ViewOriginalText is not "/* Presto View: <base64 JSON> */"')
    return
  }
  if (!view.originalSql || !view.catalog || !view.schema || !Array.isArray(view.columns)) {
    problems.push('the embedded view lacks originalSql, catalog, schema or columns')
    return
  }
  // Trino's view codec: an invoker view has no owner, a definer view needs one (its own or the table's).
  if (typeof view.runAsInvoker !== 'boolean') problems.push('the embedded view lacks runAsInvoker')
  else if (view.runAsInvoker && view.owner !== undefined) problems.push('an invoker view (runAsInvoker) has no owner')
  else if (!view.runAsInvoker && !view.owner && !input.Owner) problems.push('a definer view needs an owner')
  const embedded = view.columns.map((c) => c.name)
  const described = (input.StorageDescriptor?.Columns ?? []).map((c) => c.Name)
  const selected = selectedNames(view.originalSql)
  if (selected === undefined) problems.push('the view SQL must name every column it returns (no *)')
  else if (JSON.stringify(selected) !== JSON.stringify(embedded)) {
    problems.push(`the embedded columns (${embedded.join(', ')}) are not the SQL's (${selected.join(', ')})`)
  }
  if (JSON.stringify(described) !== JSON.stringify(embedded)) {
    problems.push(`the storage descriptor's columns (${described.join(', ')}) are not the embedded ones`)
  }
  input.StorageDescriptor?.Columns?.forEach((column, i) => {
    const wanted = VIEW_TYPES[column.Type as keyof typeof VIEW_TYPES]
    const embeddedType = view.columns[i]?.type
    if (wanted !== undefined && embeddedType !== undefined && wanted !== embeddedType) {
      problems.push(`view column ${column.Name}: embedded type ${embeddedType} does not match ${column.Type}`)
    }
  })
}

/**
 * The size limits a view breaks, each named with its size: a view that grows with its table's columns passes them
 * on a wide table, and is then left out of the catalog (with a warning) rather than failing the table.
 */
export const viewLimitProblems = (input: TableInput): string[] =>
  [
    ['ViewOriginalText', input.ViewOriginalText],
    ['ViewExpandedText', input.ViewExpandedText],
  ].flatMap(([what, text]) =>
    (text?.length ?? 0) > VIEW_TEXT_MAX
      ? [
          `its ${what} would be ${text!.length.toLocaleString('en-US')} characters, over Glue's limit of ${VIEW_TEXT_MAX.toLocaleString('en-US')}`,
        ]
      : [],
  )

/** Every reason Glue (or Athena reading it) would reject `input`; empty when it is fine. */
export const glueTableInputProblems = (input: TableInput): string[] => {
  const problems: Problems = []
  checkText(problems, 'the table name', input.Name, 1, NAME_MAX)
  if (input.Name !== undefined && !ATHENA_NAME.test(input.Name)) {
    problems.push(`table name "${input.Name}": Athena names are lowercase letters, digits and "_"`)
  }
  const isView = input.TableType === 'VIRTUAL_VIEW'
  if (!isView && input.TableType !== 'EXTERNAL_TABLE')
    problems.push(`TableType "${input.TableType}" is not written here`)
  checkParameters(problems, input.Parameters)
  const columns = input.StorageDescriptor?.Columns ?? []
  const keys = input.PartitionKeys ?? []
  if (columns.length === 0) problems.push('a table needs at least one column')
  for (const column of columns) checkColumn(problems, 'column', column, isView)
  for (const key of keys) checkColumn(problems, 'partition key', key, false)
  const seen = new Set<string>()
  for (const { Name } of [...columns, ...keys]) {
    const name = (Name ?? '').toLowerCase()
    if (seen.has(name)) problems.push(`the name "${name}" is used twice among columns and partition keys`)
    seen.add(name)
  }
  const descriptor = input.StorageDescriptor
  if ((descriptor?.Location?.length ?? 0) > LOCATION_MAX) problems.push(`the location exceeds ${LOCATION_MAX}`)
  for (const format of [descriptor?.InputFormat, descriptor?.OutputFormat]) {
    if ((format?.length ?? 0) > FORMAT_MAX) problems.push(`a storage format name exceeds ${FORMAT_MAX}`)
  }
  if (isView) checkView(problems, input)
  else {
    if (!descriptor?.Location) problems.push('a table needs a location')
    checkText(problems, 'the SerDe', descriptor?.SerdeInfo?.SerializationLibrary, 1, NAME_MAX)
    checkProjection(problems, input)
  }
  return problems
}
