/**
 * Two runs' views of one table's registry, merged: what a conditional write that lost to another run retries with.
 * Pure; `registry.ts` reads and writes the document.
 */
import { type ExportBaseline, maxDate, minDate, type TableSchema } from './table-schema.ts'

/**
 * The registry as it stands plus this export's view: columns are only ever appended, so the union keeps both
 * runs' new columns; a column both know keeps the registered type (published first) and the widest dates.
 * The one exception is `removed`: columns the configuration drops as personal data leave the registry (and so the
 * catalog), since a column kept for history would keep serving the values earlier exports landed.
 */
export const mergeSchemas = (
  stored: TableSchema | undefined,
  mine: TableSchema,
  removed: readonly string[] = [],
): TableSchema => {
  const registered = stored && withoutColumns(stored, removed)
  if (registered === undefined) return withoutEmptyDrops(mine)
  // `exportDates` (an older registry's list of dates) is dropped: the dates relation holds them now.
  const {
    key: _registeredKey,
    pseudonymized: _registeredPseudonyms,
    dropped: _registeredDrops,
    exportDates: _legacyDates,
    tableFormat: _registeredFormat,
    ...base
  } = registered
  const columns = [...registered.columns]
  const position = new Map(columns.map((c, i) => [c.name, i]))
  for (const column of mine.columns) {
    const at = position.get(column.name)
    if (at === undefined) {
      position.set(column.name, columns.length)
      columns.push(column)
      continue
    }
    const known = columns[at]!
    const newer = column.lastSeen >= known.lastSeen
    columns[at] = {
      ...known,
      ...(newer && column.header !== undefined ? { header: column.header } : {}),
      firstSeen: minDate(known.firstSeen, column.firstSeen),
      lastSeen: maxDate(known.lastSeen, column.lastSeen),
    }
  }
  return {
    ...base,
    sourceTableId: mine.sourceTableId,
    firstExportDate: minDate(registered.firstExportDate, mine.firstExportDate),
    lastExportDate: maxDate(registered.lastExportDate, mine.lastExportDate),
    columns,
    ...latestOf(registered.latestExport, mine.latestExport),
    ...(mine.key === undefined ? {} : { key: mine.key }),
    // The export's own layout: it refuses a table whose registry says the other one, and a conversion moves it.
    ...(mine.tableFormat === undefined ? {} : { tableFormat: mine.tableFormat }),
    // As the key: the newest export's settings, so a column taken out of pseudonymize and put back is rewritten.
    ...((mine.pseudonymized ?? registered.pseudonymized) === undefined
      ? {}
      : { pseudonymized: mine.pseudonymized ?? registered.pseudonymized }),
    ...withoutEmptyDrops({ dropped: mine.dropped ?? registered.dropped }),
  }
}

/** A registry lists `dropped` only when a column is dropped (an empty list is what "none" means). */
export const withoutEmptyDrops = <T extends { readonly dropped?: readonly string[] | undefined }>(schema: T): T => {
  if (schema.dropped === undefined || schema.dropped.length > 0) return schema
  const { dropped: _none, ...rest } = schema
  return rest as T
}

/** The guards compare with the newest published export, whichever run registered it (a backfill never wins). */
const latestOf = (registered?: ExportBaseline, mine?: ExportBaseline): { latestExport?: ExportBaseline } => {
  if (mine === undefined) return registered === undefined ? {} : { latestExport: registered }
  return { latestExport: registered !== undefined && registered.exportDate > mine.exportDate ? registered : mine }
}

/** The schema without the named columns, in its columns and its latest export's. */
export const withoutColumns = (schema: TableSchema, names: readonly string[]): TableSchema => {
  if (names.length === 0) return schema
  // A dropped column's `__text` companion holds its values too.
  const keep = (column: { readonly name: string; readonly textOf?: string | undefined }) =>
    !names.includes(column.name) && (column.textOf === undefined || !names.includes(column.textOf))
  const { latestExport } = schema
  return {
    ...schema,
    columns: schema.columns.filter(keep),
    ...(latestExport ? { latestExport: { ...latestExport, columns: latestExport.columns.filter(keep) } } : {}),
  }
}
