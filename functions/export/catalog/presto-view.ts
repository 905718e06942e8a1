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

/** The embedded view definition Athena writes into `ViewOriginalText`. */
export interface PrestoView {
  readonly originalSql: string
  readonly catalog: string
  readonly schema: string
  readonly columns: readonly { readonly name: string; readonly type: string }[]
}

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
