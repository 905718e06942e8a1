/**
 * The start of a table's path as the export runs it, stopped after a number of rows: read (decode and parse, or
 * the workbook reader) -> name -> infer. `npm run check` shows it before anything is deployed, so what it shows
 * is what an export of the same rows would name and type.
 */

import { athenaTableDefinition } from '../catalog/athena.ts'
import { viewsLeftOut } from '../catalog/glue-inputs.ts'
import type { TableConfig } from '../core/config.ts'
import { type ColumnType, LOCAL_GLUE_DATABASE } from '../core/constants.ts'
import type { RecordLimits } from '../csv/record-guard.ts'
import { suggestKey } from '../normalize/key-suggestion.ts'
import { type PersonalDataHint, personalDataHints } from '../normalize/personal-hints.ts'
import { firstRows, rowsAsText } from '../normalize/record-batch.ts'
import { keyColumnIndices } from '../normalize/row-key.ts'
import { nameAndType } from './name-and-type.ts'
import { openTableRead } from './read-table.ts'

export interface TablePreview {
  readonly columns: readonly { readonly name: string; readonly header: string; readonly type: ColumnType }[]
  readonly rowsRead: number
  /** Columns unique together and never empty in the rows read, offered as `tables[].key` when none is set. */
  readonly suggestedKey?: readonly string[]
  /** Views the catalog would leave out once the table has two export dates, each naming the limit it breaks. */
  readonly warnings: readonly string[]
  /** Columns not dropped or pseudonymized that look personal (`possible personal data:` in check). */
  readonly personalData: readonly PersonalDataHint[]
}

export interface PreviewOptions {
  /** Rows read at most; the rest of the body is never asked for. */
  readonly rowLimit: number
  /** Folder for a workbook's spool. */
  readonly spoolDirectory: string
  /** The `limits` section, as the export applies it. */
  readonly limits: RecordLimits
  /** The charset the source declared for the body (source/table-source.ts). */
  readonly charset?: string | undefined
  /** The Glue database the views would name. @default LOCAL_GLUE_DATABASE */
  readonly database?: string | undefined
}

/** Reads the first `rowLimit` rows of `body`; fails as the export would (bad encoding, a forced type, the key). */
export const previewTable = async (
  table: TableConfig,
  body: AsyncIterable<Buffer>,
  { rowLimit, spoolDirectory, limits, charset, database = LOCAL_GLUE_DATABASE }: PreviewOptions,
): Promise<TablePreview> => {
  // On this thread: a preview is too short for a parse thread to pay.
  const read = await openTableRead(table, body, { spoolDirectory, limits, charset, parseThread: 'inline' })
  try {
    // As the export names and controls them: an unknown name fails here too; no key is needed, as no pseudonym is shown.
    const named = nameAndType(table, read.records, undefined, { forPreview: true })
    const names = named.columns.map((c) => c.name)
    const sample: string[][] = []
    let rowsRead = 0
    for await (const batch of named.records.batches) {
      const rows = firstRows(batch, rowLimit - rowsRead)
      named.types.observe(rows)
      sample.push(...rowsAsText(rows))
      rowsRead += rows.rowCount
      if (rowsRead >= rowLimit) break
    }
    const types = named.types.types()
    if (table.key) keyColumnIndices(table.id, table.key, names, [])
    const columns = named.columns.map((c, i) => ({ ...c, type: types[i]! }))
    const suggestedKey = table.key ? undefined : suggestKey(columns, sample)
    return {
      columns,
      rowsRead,
      ...(suggestedKey ? { suggestedKey } : {}),
      warnings: viewWarnings(table, columns, database),
      personalData: personalDataHints(named.columns, sample, table.columns.pseudonymize),
    }
  } finally {
    await read.records.close()
  }
}

/** The views an export of these columns would leave out, judged as on a second export date (both views exist). */
const viewWarnings = (table: TableConfig, columns: TablePreview['columns'], database: string): string[] => {
  const [first, second] = ['2000-01-01', '2000-01-02']
  const schema = {
    version: 1,
    table: table.name,
    sourceTableId: table.id,
    firstExportDate: first,
    lastExportDate: second,
    columns: columns.map(({ name, header, type }) => ({ name, header, type, firstSeen: first, lastSeen: second })),
    ...(table.key ? { key: table.key } : {}),
  } as const
  return viewsLeftOut(athenaTableDefinition(schema, database, `s3://check/${table.name}/`))
}
