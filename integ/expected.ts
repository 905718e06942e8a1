/**
 * What Athena must answer after the integration test's two runs, computed at synth from the same generators the
 * stand-in serves: row counts per date, and the rows of `devices_changes` by kind. The changes are counted by
 * comparing the rows' cells by key, which is what the view's key and fingerprint comparison amounts to for the
 * demo tables (their cells are either equal as text or differ as values).
 */
import { demoTables } from '../emulator/demo-tables.ts'
import { DemoTableId, type GeneratedTable, type Row } from '../emulator/tables.ts'

/** The two export dates: days 1 and 2 of the demo's changes, so devices are bought, retired and upgraded. */
export const FIRST_DATE = '2026-11-21'
export const SECOND_DATE = '2026-11-22'
/** Small enough that a run takes seconds, large enough that every kind of change happens between the dates. */
export const DEVICE_ROWS = 200

export interface ChangeCounts {
  readonly added: number
  readonly removed: number
  readonly changed: number
}

const table = (date: string, id: string): GeneratedTable => {
  const found = demoTables({ date, rows: { devices: DEVICE_ROWS } }).find((t) => t.id === id)
  if (found === undefined || !('rows' in found)) throw new Error(`demo table ${id} is not generated`)
  return found
}

const rowsById = (date: string): Map<string, string> => {
  const rows = new Map<string, string>()
  for (const row of table(date, DemoTableId.DEVICES).rows()) rows.set(String(row[0]), JSON.stringify(row))
  return rows
}

/** Rows of a demo table on `date`, as the stand-in serves it. */
export const rowCount = (date: string, id: string): number => [...(table(date, id).rows() as Iterable<Row>)].length

/** The `devices_changes` rows of SECOND_DATE against FIRST_DATE, by kind. */
export const deviceChanges = (): ChangeCounts => {
  const before = rowsById(FIRST_DATE)
  const after = rowsById(SECOND_DATE)
  let added = 0
  let changed = 0
  for (const [id, row] of after) {
    const previous = before.get(id)
    if (previous === undefined) added++
    else if (previous !== row) changed++
  }
  const removed = [...before.keys()].filter((id) => !after.has(id)).length
  return { added, removed, changed }
}
