/**
 * History operations as Lambda events, fanned out by a state machine (infra/constructs/history-operations.ts): the
 * plan lists a table's export dates in batches, and each batch runs the operation on its dates, one date at a
 * time, starting no date it could not finish in the invocation's time, and the finish runs once after every batch
 * (a rewrite moves the registry then, never a batch: batches run at once). Each operation is one entry of
 * OPERATIONS, with the shape every history operation of path/ has (`eraseRows`, `rewriteHistory`: the table, the
 * dates, `onDate`), so a rerun of a batch skips what an earlier one finished and a failed date is left as it was.
 */
import { randomBytes } from 'node:crypto'
import type { TableCatalog } from '../catalog/table-catalog.ts'
import type { ExportConfig, TableConfig } from '../core/config.ts'
import {
  ConfigError,
  HistoryBatchFailedError,
  HistoryBatchIncompleteError,
  HistoryRewriteUnfinishedError,
} from '../core/errors.ts'
import type { PseudonymizationKey } from '../core/pseudonymization-key.ts'
import type { RunRecord } from '../core/run-record.ts'
import { keyCheck } from '../normalize/personal-data.ts'
import { type DigestCondition, eraseRows } from '../path/erase.ts'
import { rewriteHistory } from '../path/rewrite.ts'
import { releaseTableLease, withHistoryLease } from '../path/table-lease.ts'
import type { RunTelemetry } from '../path/telemetry.ts'
import type { WarehouseStore } from '../publish/store.ts'
import { storedDates } from '../schema/retention.ts'
import {
  DEFAULT_BATCH_DATES,
  type HistoryInvocation,
  type HistoryOperation,
  type HistoryRequest,
} from './history-event.ts'

/** The plan's answer must fit Step Functions' 256 KiB state payloads, beside the execution's input. */
const MAX_PLAN_CHARACTERS = 200_000

export interface HistoryDeps {
  readonly store: WarehouseStore
  readonly telemetry: RunTelemetry
  readonly spoolDirectory: string
  readonly pseudonymizationKey: PseudonymizationKey
  readonly catalog?: TableCatalog | undefined
  /** Milliseconds left in this invocation (the Lambda context's). */
  readonly remainingTimeMs: () => number
  /** Start no further date with less than this left (`export.deadlineMarginSeconds`). */
  readonly marginMs: number
}

/** What an operation did to one date. */
interface DateOutcome {
  readonly exportDate: string
  readonly rows: number
  readonly record?: RunRecord
}

/** One history operation: how it runs on some dates of a table (with no dates it checks, and records, the request). */
interface OperationSpec {
  readonly run: (
    config: ExportConfig,
    table: TableConfig,
    request: HistoryRequest,
    deps: HistoryDeps,
    options: { dryRun?: boolean; dates: readonly string[] },
  ) => Promise<{ readonly dates: readonly DateOutcome[]; readonly failed?: DateOutcome | undefined }>
  /** What the finish does once every batch ran: whether the operation is complete. @default nothing: it is */
  readonly finish?: (
    config: ExportConfig,
    table: TableConfig,
    deps: HistoryDeps,
  ) => Promise<{ readonly finished: boolean; readonly warnings: readonly string[] }>
}

/** The table of operations: a history event names one of these. */
const OPERATIONS: Record<HistoryOperation, OperationSpec> = {
  erase: {
    run: (config, table, request, deps, options) =>
      eraseRows(config, table, request.where as readonly DigestCondition[], deps, {
        ...options,
        keepVersions: request.keepVersions === true,
      }),
  },
  rewrite: {
    // A batch never moves the registry: the batches run at once, and it moves only when every date is in line.
    run: (config, table, request, deps, options) =>
      rewriteHistory(config, table, deps, { ...options, finish: false, keepVersions: request.keepVersions === true }),
    // No date is rewritten here: every stored date is checked to be in line, then the registry and Glue move.
    finish: (config, table, deps) => rewriteHistory(config, table, deps, { dates: [], finish: true }),
  },
}

/** The finish's answer: whether the operation is complete (a rewrite's registry has moved). */
export interface HistoryFinish {
  readonly operation: HistoryOperation
  readonly table: string
  readonly finished: boolean
}

/** The plan's answer: the state machine's Map runs one batch per entry of `batches`. */
export interface HistoryPlan {
  readonly operation: HistoryOperation
  readonly table: string
  readonly dates: number
  readonly batches: readonly (readonly string[])[]
  /** The owner of the table's lease, taken by the plan, shared by the batches and given up by the finish. */
  readonly lease: string
}

/** A batch's answer: what each of its dates had (counts only; the conditions never leave the event). */
export interface HistoryBatch {
  readonly operation: HistoryOperation
  readonly table: string
  readonly rows: number
  readonly dates: readonly { readonly exportDate: string; readonly rows: number }[]
}

const configuredTable = (config: ExportConfig, wanted: string): TableConfig => {
  const table = config.tables.find((t) => t.name === wanted || t.id === wanted)
  if (table !== undefined) return table
  throw new ConfigError('history event', [
    {
      field: 'history.table',
      message: `is not a configured table (configured: ${config.tables.map((t) => t.name).join(', ')})`,
    },
  ])
}

/** Refuses digests made with another key: they would match nothing, and the request would end as done. */
const checkKey = (key: PseudonymizationKey, request: HistoryRequest): void => {
  if (keyCheck(key) === request.keyCheck) return
  throw new ConfigError(
    'history event',
    [{ field: 'history.keyCheck', message: 'was made with another pseudonymization key than the deployed one' }],
    "print the event again with the key of the stack's PseudonymizationSecretArn (npm run erase -- ... --aws-event --pseudonymization-key-file FILE); nothing was changed",
  )
}

/** The table's export dates in batches of `batchSize`, once the request is checked against the table. */
export const planHistory = async (
  config: ExportConfig,
  request: HistoryRequest,
  deps: HistoryDeps,
): Promise<HistoryPlan> => {
  const table = configuredTable(config, request.table)
  checkKey(deps.pseudonymizationKey, request)
  // The request is checked against the table (its registry, the conditions' columns) on no date, and an erasure is
  // recorded then, so every export from now on leaves its rows out; both and the listing of the dates under the
  // lease the batches go on holding, so no export adds a date meanwhile.
  const lease = `${request.operation}-${randomBytes(8).toString('hex')}`
  const leased = leaseOf(deps, lease)
  const dates = await withHistoryLease(deps.store, table, config.export, leased, request.operation, async () => {
    await OPERATIONS[request.operation].run(config, table, request, leased, { dates: [] })
    return storedDates(deps.store, table.name)
  })
  const size = request.batchSize ?? DEFAULT_BATCH_DATES
  const batches: string[][] = []
  for (let i = 0; i < dates.length; i += size) batches.push(dates.slice(i, i + size))
  const plan = { operation: request.operation, table: table.name, dates: dates.length, batches, lease }
  // Step Functions passes at most 256 KiB between states: the plan, with room for the request beside it.
  if (JSON.stringify(plan).length > MAX_PLAN_CHARACTERS) {
    throw new ConfigError('history event', [
      {
        field: 'history.batchSize',
        message: `makes ${batches.length} batches of the table's ${dates.length} dates, more than a state's input holds; give a larger batchSize`,
      },
    ])
  }
  return plan
}

/** Runs the operation on the batch's dates in order, one at a time, while the invocation has time for another. */
export const runHistoryBatch = async (
  config: ExportConfig,
  request: HistoryRequest,
  wanted: readonly string[],
  deps: HistoryDeps,
  lease?: string,
): Promise<HistoryBatch> => {
  const table = configuredTable(config, request.table)
  checkKey(deps.pseudonymizationKey, request)
  const operation = OPERATIONS[request.operation]
  const done: { exportDate: string; rows: number }[] = []
  // The longest date so far is the estimate of the next: from the Lambda's own clock, as the deadline reads it.
  let longestMs = 0
  for (const [i, exportDate] of wanted.entries()) {
    const before = deps.remainingTimeMs()
    if (i > 0 && before < deps.marginMs + longestMs) {
      throw new HistoryBatchIncompleteError({ tableId: table.id, done: i, left: wanted.slice(i) })
    }
    const result = await operation.run(config, table, request, leaseOf(deps, lease), { dates: [exportDate] })
    if (result.failed !== undefined) {
      const error = result.failed.record?.tables.find((t) => t.error !== undefined)?.error
      throw new HistoryBatchFailedError({ tableId: table.id, exportDate, error })
    }
    const rows = result.dates.reduce((sum, d) => sum + d.rows, 0)
    done.push({ exportDate, rows })
    deps.telemetry.info(`history ${request.operation}: ${table.name} dt=${exportDate}: ${rows} rows`, {
      table: table.name,
      exportDate,
      rows,
      columns: (request.where ?? []).map((c) => c.column),
    })
    longestMs = Math.max(longestMs, before - deps.remainingTimeMs())
  }
  return {
    operation: request.operation,
    table: table.name,
    rows: done.reduce((sum, d) => sum + d.rows, 0),
    dates: done,
  }
}

/**
 * Once every batch ran: the operation's finish (a rewrite checks every date is in line, then moves the registry and
 * the catalog). A date not in line leaves everything as it was and fails coded, naming the rerun.
 */
export const finishHistory = async (
  config: ExportConfig,
  request: HistoryRequest,
  deps: HistoryDeps,
  lease?: string,
): Promise<HistoryFinish> => {
  const table = configuredTable(config, request.table)
  checkKey(deps.pseudonymizationKey, request)
  const result = await OPERATIONS[request.operation].finish?.(config, table, leaseOf(deps, lease))
  // Whatever the finish found: the request's batches are over, and the table is free for the next writer.
  if (lease !== undefined) await releaseTableLease(deps.store, table, lease)
  for (const warning of result?.warnings ?? []) deps.telemetry.warn(`${table.name}: ${warning}`, { table: table.name })
  if (result?.finished === false) throw new HistoryRewriteUnfinishedError({ tableId: table.id, tableName: table.name })
  deps.telemetry.info(`history ${request.operation}: ${table.name}: finished`, { table: table.name })
  return { operation: request.operation, table: table.name, finished: true }
}

/** A history event's answer: the plan, the batch or the finish it asks for. */
export const runHistoryInvocation = (
  config: ExportConfig,
  { request, dates, finish, lease }: HistoryInvocation,
  deps: HistoryDeps,
): Promise<HistoryPlan | HistoryBatch | HistoryFinish> => {
  if (finish === true) return finishHistory(config, request, deps, lease)
  return dates === undefined ? planHistory(config, request, deps) : runHistoryBatch(config, request, dates, deps, lease)
}

/** The deps of an operation run under the request's shared lease (or, without one, a lease of its own per date). */
const leaseOf = (deps: HistoryDeps, lease: string | undefined): HistoryDeps & { leaseOwner?: string } =>
  lease === undefined ? deps : { ...deps, leaseOwner: lease }
