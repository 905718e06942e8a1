/**
 * The guard step of a table's path: the baseline an export is compared with, and the comparison, which holds the
 * table (throws GuardHoldError) before anything is published, or lets it through with what fired.
 */
import type { GuardsConfig, TableConfig } from '../core/config.ts'
import { GuardHoldError } from '../core/errors.ts'
import type { RunIdentity } from '../core/lineage.ts'
import type { GuardFinding } from '../core/run-record.ts'
import {
  checkGuards,
  type GuardBaseline,
  guardSettings,
  heldFirst,
  identityFindings,
  nextBaseline,
  shapeFindings,
} from '../guards/guards.ts'
import { readPublishedExport } from '../parquet/published-export.ts'
import type { WarehouseStore } from '../publish/store.ts'
import type { TableLayout } from '../publish/table-layout.ts'
import type { WritePlan } from '../schema/plan.ts'
import type { TableSchema } from '../schema/table-schema.ts'
import type { NamedTable } from './name-and-type.ts'

/** What the guard step reads of the table's context. */
interface GuardContext {
  readonly store: WarehouseStore
  readonly layout: TableLayout
  readonly run: RunIdentity
  readonly guards?: GuardsConfig | undefined
  readonly acceptChanges?: boolean | undefined
}

interface GuardedTable {
  /** Guards that fired and let the table through (warned or accepted). */
  readonly findings: readonly GuardFinding[]
  /** This export's schema, with its baseline for the next export's guards. */
  readonly schema: TableSchema
}

/**
 * Baseline: what the guards compare this export with. For the latest date (or a later one) the registry's latest
 * export; for an earlier date the object it would replace, read from that object's footer (one ranged read, and
 * exact: the rows and columns that date published, where the registry keeps only the latest and the dates
 * relation only the order of dates); none for an earlier date without an object, which is a true backfill.
 */
export const guardBaseline = async (
  table: TableConfig,
  previous: TableSchema | undefined,
  context: GuardContext,
): Promise<GuardBaseline | undefined> => {
  const latest = previous?.latestExport
  const { exportDate } = context.run
  const guarded = context.guards !== undefined && guardSettings(context.guards, table.guards) !== undefined
  if (!guarded || latest === undefined || exportDate >= latest.exportDate) return latest
  const key = await context.layout.dataKey(exportDate)
  const published = key === undefined ? undefined : await readPublishedExport(context.store, key)
  if (published === undefined) return undefined
  const { rows, columns } = published
  // As for the registry's baseline: a column dropped now is not compared with.
  const dropped = new Set(table.columns.drop)
  return {
    exportDate,
    rows,
    ...(columns === undefined ? {} : { columns: columns.filter((c) => !dropped.has(c.name)) }),
  }
}

/** Guard: the export against its baseline; a hold fails the table before anything is published. */
export const guard = (
  table: TableConfig,
  named: NamedTable,
  baseline: GuardBaseline | undefined,
  previous: TableSchema | undefined,
  { plan, rows }: { readonly plan: WritePlan; readonly rows: number },
  context: GuardContext,
): GuardedTable => {
  const snapshot = {
    exportDate: context.run.exportDate,
    runId: context.run.runId,
    rows,
    columns: named.columns.map(({ name, header }) => ({ name, header })),
  }
  const settings = context.guards && guardSettings(context.guards, table.guards)
  const accept = context.acceptChanges ?? false
  // The identity guard holds whatever the settings say: a wrong match would publish one column's values as another's.
  const findings = heldFirst([
    ...shapeFindings(snapshot, previous, accept),
    ...identityFindings(named.ambiguousHeaders, previous, accept),
    ...checkGuards(baseline, snapshot, settings, accept),
  ])
  if (findings.some((g) => g.action === 'held')) {
    throw new GuardHoldError({ tableId: table.id, tableName: table.name, rows, findings })
  }
  return { findings, schema: { ...plan.schema, latestExport: nextBaseline(previous?.latestExport, snapshot) } }
}
