/** The view text Athena stores in Glue's `ViewOriginalText`: a comment holding the view's JSON in base64. */

import type { ColumnType } from '../core/constants.ts'

/** Athena (Trino) type names of view columns, which differ from the Hive names of table columns. */
export const VIEW_TYPES: Readonly<Record<ColumnType | 'string' | 'array<string>', string>> = {
  bigint: 'bigint',
  double: 'double',
  boolean: 'boolean',
  date: 'date',
  timestamp: 'timestamp(3)',
  string: 'varchar',
  /** `changed_columns` of the changes view. */
  'array<string>': 'array(varchar)',
}

/**
 * The embedded view definition, field for field what Trino's view codec (`ConnectorViewDefinition`) reads.
 * `runAsInvoker: true` makes the view run with the rights of whoever queries it: an analyst sees through a view
 * exactly what the analyst may read in the table, nothing more. Trino refuses an `owner` together with
 * `runAsInvoker` ("owner cannot be present with runAsInvoker"), so an invoker view carries none; a definer view
 * (`runAsInvoker: false`) without an owner fails with "Run-as identity must be set for a run-as definer view".
 */
export interface PrestoView {
  readonly originalSql: string
  readonly catalog: string
  readonly schema: string
  readonly columns: readonly { readonly name: string; readonly type: string }[]
  readonly owner?: string
  readonly runAsInvoker: boolean
}

/**
 * The Glue `Owner` of the views written here. Trino takes a definer's identity from the table's owner when the
 * embedded view is not an invoker view; ours are, so it only names who wrote the view (Glue console, audits) and
 * keeps a reader that ignores `runAsInvoker` from failing for want of an owner.
 */
export const VIEW_OWNER = 'inventory-export'

const PRESTO_VIEW_TEXT = /^\/\* Presto View: ([A-Za-z0-9+/=]+) \*\/$/

export const encodePrestoView = (view: PrestoView): string =>
  `/* Presto View: ${Buffer.from(JSON.stringify(view)).toString('base64')} */`

/** The embedded view of a `ViewOriginalText`, or undefined when it is not one Athena would read. */
export const decodePrestoView = (text: string | undefined): PrestoView | undefined => {
  const encoded = text === undefined ? undefined : PRESTO_VIEW_TEXT.exec(text)?.[1]
  if (encoded === undefined) return undefined
  try {
    return JSON.parse(Buffer.from(encoded, 'base64').toString('utf8')) as PrestoView
  } catch {
    return undefined
  }
}
