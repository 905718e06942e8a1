/**
 * Which configured tables a run asks for (`--only` on the command line, `tables` in the Lambda's event): one
 * check for both, so a name the configuration lacks is refused the same way everywhere, before anything runs.
 */
import type { TableConfig } from './table-schema.ts'

/** A requested table that is not configured, with its position in the request. */
export interface UnconfiguredTable {
  readonly index: number
  readonly wanted: string
}

/** The requested ids or names that match no configured table's id or name, in request order. */
export const unconfiguredTables = (
  tables: readonly Pick<TableConfig, 'id' | 'name'>[],
  wanted: readonly string[],
): UnconfiguredTable[] => {
  const known = new Set(tables.flatMap((table) => [table.id, table.name]))
  return wanted.flatMap((name, index) => (known.has(name) ? [] : [{ index, wanted: name }]))
}

/** The configured tables a run asks for, by id or name; every table when it names none. */
export const selectedTables = <T extends Pick<TableConfig, 'id' | 'name'>>(
  tables: readonly T[],
  wanted: readonly string[] | undefined,
): readonly T[] =>
  wanted === undefined || wanted.length === 0
    ? tables
    : tables.filter((t) => wanted.includes(t.id) || wanted.includes(t.name))
