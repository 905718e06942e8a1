/**
 * Parsing a configuration: unknown input (a parsed JSON file, CLI flags) into a readonly typed object, or one
 * ConfigError whose problems name each offending field.
 */
import type * as z from 'zod'
import { ConfigError, type ConfigProblem } from '../errors.ts'
import { knownKeysAt, unknownKeyMessage } from './key-suggestions.ts'
import {
  type ConfigWithoutSource,
  type ExportConfig,
  ExportConfigSchema,
  type ParsedExportConfig,
  SourcelessConfigObject,
  withDerivedNames,
} from './schema.ts'
import { defaultTableName } from './table-schema.ts'

/** Validates unknown input (a parsed JSON file, CLI flags) into the typed configuration. */
export const parseExportConfig = (input: unknown, origin = 'configuration'): ExportConfig => {
  const result = ExportConfigSchema.safeParse(input)
  if (!result.success) {
    throw new ConfigError(origin, configProblems(ExportConfigSchema, result.error.issues))
  }
  const parsed: ParsedExportConfig = result.data
  return deepFreeze({
    ...parsed,
    tables: parsed.tables.map((table) => ({ ...table, name: table.name ?? defaultTableName(table.id) })),
  })
}

/** Validates a configuration that may leave out `source` (see SourcelessConfigObject), e.g. `npm run reprocess`'s. */
export const parseConfigWithoutSource = (input: unknown, origin = 'configuration'): ConfigWithoutSource => {
  const result = SourcelessConfigObject.safeParse(input)
  if (!result.success) throw new ConfigError(origin, configProblems(SourcelessConfigObject, result.error.issues))
  const parsed = withDerivedNames(result.data)
  return deepFreeze({
    ...parsed,
    tables: parsed.tables.map((table) => ({ ...table, name: table.name ?? defaultTableName(table.id) })),
  })
}

/** One problem per issue; an unknown key is named at its own path, with the closest known key. */
export const configProblems = (schema: z.ZodType, issues: readonly z.core.$ZodIssue[]): ConfigProblem[] =>
  issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({
          field: formatPath([...issue.path, key]),
          message: unknownKeyMessage(key, knownKeysAt(schema, issue.path)),
        }))
      : [{ field: formatPath(issue.path), message: issue.message }],
  )

export const formatPath = (path: readonly PropertyKey[]): string =>
  path.reduce<string>(
    (out, key) => (typeof key === 'number' ? `${out}[${key}]` : out ? `${out}.${String(key)}` : String(key)),
    '',
  ) || '(root)'

export const deepFreeze = <T>(value: T): T => {
  if (value && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}
