/**
 * The per-table resources (schedule, staleness alarm, named queries) in nested stacks, so the number of tables is
 * not bounded by CloudFormation's 500 resources per stack. A table's nested stack follows from its name alone (a
 * hash into a fixed number of stacks), so adding, removing or reordering tables never moves another table's
 * resources, which would delete and re-create its schedule and alarm.
 */
import { createHash } from 'node:crypto'
import { NestedStack } from 'aws-cdk-lib'
import type { Construct } from 'constructs'
import type { AnalystQuery } from './analyst-queries.ts'
import type { TablePlan } from './table-plan.ts'

/**
 * How many nested stacks the tables are spread over. Fixed: changing it moves most tables. With at most 6
 * resources a table (schedule, alarm, 3 named queries and "what changed"), 32 stacks hold about 2,000 tables
 * before the fullest one, by chance, passes 500; a stack holds only the tables that hash to it, and an empty
 * one is not created.
 */
export const TABLE_STACK_COUNT = 32

/** The nested stack a table's resources live in, from its name only: 0 to TABLE_STACK_COUNT - 1. */
export const tableStackNumber = (tableName: string): number =>
  createHash('sha256').update(tableName).digest().readUInt32BE(0) % TABLE_STACK_COUNT

/** The construct id of nested stack `n` (its logical id in the parent starts with it). */
export const tableStackId = (n: number): string => `Tables${String(n).padStart(2, '0')}`

/** The tables by nested stack number, only the numbers some table hashes to, in ascending order. */
export const tablesByStack = <T extends { readonly name: string }>(tables: readonly T[]): Map<number, T[]> => {
  const groups = new Map<number, T[]>()
  for (const table of tables) {
    const n = tableStackNumber(table.name)
    groups.set(n, [...(groups.get(n) ?? []), table])
  }
  return new Map([...groups].sort(([a], [b]) => a - b))
}

/** What a nested stack of tables creates, each in it; the owners (exporter, alarms, warehouse) do the wiring. */
export interface TableStackProps {
  readonly tables: readonly TablePlan[]
  /** The named queries of these tables. */
  readonly queries: readonly AnalystQuery[]
  readonly addSchedules: (scope: Construct, tables: readonly TablePlan[]) => unknown
  readonly addStaleTableAlarms: (scope: Construct, tables: readonly TablePlan[]) => unknown
  readonly addNamedQueries: (scope: Construct, queries: readonly AnalystQuery[]) => unknown
}

/** One nested stack of tables: their schedules, staleness alarms and named queries. */
export class TableStack extends NestedStack {
  readonly tables: readonly TablePlan[]

  constructor(scope: Construct, id: string, props: TableStackProps) {
    super(scope, id, {
      description: `Inventory export: schedules, staleness alarms and named queries of ${props.tables.length} tables`,
    })
    this.tables = props.tables
    props.addSchedules(this, props.tables)
    props.addStaleTableAlarms(this, props.tables)
    props.addNamedQueries(this, props.queries)
  }
}
