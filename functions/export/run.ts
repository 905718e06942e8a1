/**
 * The orchestrator: check the token once, export every table with bounded concurrency, write the run record.
 * It wires the stages together and does nothing else; the Lambda handler and the local CLI differ only in
 * the dependencies they pass in.
 */
import { randomBytes } from 'node:crypto'
import os from 'node:os'
import path from 'node:path'
import type { ExportConfig, TableConfig } from './config.ts'
import { DataError, DeadlineError, ErrorCode, type ExportError, GuardHoldError, toExportError } from './errors.ts'
import { InventoryClient } from './inventory/client.ts'
import { backoffDelay, systemClock } from './inventory/retry.ts'
import type { WarehouseStore } from './publish/store.ts'
import { reprocessTable } from './reprocess.ts'
import { writeLatestOutcomes } from './run-index.ts'
import { type RunRecord, runRecordKey, type TableOutcome } from './run-record.ts'
import {
  exportTable,
  type RunIdentity,
  type TableCatalog,
  type TableExportProbe,
  type TableProgress,
} from './table-export.ts'
import type { RetryEvent, RunTelemetry } from './telemetry.ts'

export interface RunDependencies {
  readonly store: WarehouseStore
  readonly token: string
  readonly telemetry: RunTelemetry
  /** Folder for the spool of record batches. @default DEFAULT_SPOOL_DIRECTORY */
  readonly spoolDirectory?: string | undefined
  /** PEM text of extra CA certificates, already read from `source.caCertificatesFile`. */
  readonly extraCaCertificates?: string | undefined
  readonly now?: () => Date
  /** Milliseconds left before the run must stop (Lambda); unlimited when absent. */
  readonly remainingTimeMs?: () => number
  /**
   * Fires when work in flight must stop (the Lambda deadline): downloads, uploads and retries are aborted,
   * unfinished tables fail with DeadlineError, and the run record is still written.
   */
  readonly signal?: AbortSignal | undefined
  /** Catalog to tell about changed table schemas (Glue on AWS). */
  readonly catalog?: TableCatalog | undefined
  /** The Lambda function's memory in MB, which decides its vCPUs (how many threads parsing gets). */
  readonly lambdaMemoryMb?: number | undefined
}

export interface RunOptions {
  /** Export date (partition); UTC today when absent. */
  readonly exportDate?: string | undefined
  /** Narrow the run to these table ids or names. */
  readonly tables?: readonly string[] | undefined
  /** Rebuild the date's Parquet from the raw archive instead of calling the service. */
  readonly fromRawArchive?: boolean | undefined
  /** Publish what the upstream change guards would hold: an operator checked the change. */
  readonly acceptChanges?: boolean | undefined
}

/** The OS temp folder (the Lambda's /tmp). */
export const DEFAULT_SPOOL_DIRECTORY = path.join(os.tmpdir(), 'inventory-export-spool')

export const newRunId = (at: Date): string =>
  `${at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}-${randomBytes(4).toString('hex')}`

export const runExport = async (
  config: ExportConfig,
  deps: RunDependencies,
  options: RunOptions = {},
): Promise<RunRecord> => {
  const now = deps.now ?? (() => new Date())
  const startedAt = now()
  const run: RunIdentity = {
    runId: newRunId(startedAt),
    exportDate: options.exportDate ?? startedAt.toISOString().slice(0, 10),
    exportedAt: startedAt,
  }
  const tables = selectTables(config.tables, options.tables)
  const retries = new RetryCounter(deps.telemetry, tables)
  const signal = deps.signal ?? new AbortController().signal
  const client = options.fromRawArchive
    ? undefined
    : new InventoryClient({
        baseUrl: config.source.baseUrl,
        token: deps.token,
        tuning: config.export,
        extraCaCertificates: deps.extraCaCertificates,
        onRetry: (notice) => retries.retried(notice),
      })
  const baseUrl = new URL(config.source.baseUrl)
  if (config.source.allowInsecureHttp && baseUrl.protocol === 'http:') {
    deps.telemetry.warn(
      `plain http to ${baseUrl.host} (source.allowInsecureHttp): the token crosses the network unencrypted`,
    )
  }
  deps.telemetry.info('export run started', {
    runId: run.runId,
    exportDate: run.exportDate,
    tables: tables.map((t) => t.name),
  })

  let tokenOwner: string | undefined
  let outcomes: TableOutcome[]
  try {
    const user = await client?.getCurrentUser(signal)
    tokenOwner = typeof user?.username === 'string' ? user.username : undefined
    outcomes = await mapWithConcurrency(tables, config.export.concurrency, (table) =>
      exportOneTable(table, { config, deps, client, run, signal, retries, acceptChanges: options.acceptChanges }),
    )
  } catch (error) {
    // The token check failed: one request told us every table would fail the same way.
    const failure = signal.aborted ? stoppedByDeadline(undefined) : toExportError(error)
    deps.telemetry.error('token check failed; no table was exported', { error: failure.toJSON() })
    outcomes = tables.map((table) => failedOutcome(table, failure, { bytesReceived: 0, attempts: 0 }, 0))
    for (const outcome of outcomes) deps.telemetry.tableFinished(outcome)
  }

  const record: RunRecord = {
    runId: run.runId,
    exportDate: run.exportDate,
    startedAt: startedAt.toISOString(),
    finishedAt: now().toISOString(),
    status: outcomes.every((o) => o.status === 'succeeded') ? 'succeeded' : 'failed',
    ...(tokenOwner === undefined ? {} : { tokenOwner }),
    tables: outcomes,
  }
  try {
    await deps.store.putObject(
      runRecordKey(run.exportDate, run.runId),
      `${JSON.stringify(record, null, 2)}\n`,
      'application/json',
    )
    await writeLatestOutcomes(deps.store, record)
  } finally {
    // The run counts in the metrics even when its record could not be written.
    deps.telemetry.runFinished(record)
  }
  return record
}

interface TableRunContext {
  readonly config: ExportConfig
  readonly deps: RunDependencies
  readonly client: InventoryClient | undefined
  readonly run: RunIdentity
  readonly signal: AbortSignal
  readonly retries: RetryCounter
  readonly acceptChanges: boolean | undefined
}

/** Passes retries on to telemetry and counts them per table: a table's attempts are its retries plus one. */
class RetryCounter {
  readonly #telemetry: RunTelemetry
  readonly #byTable = new Map<string, number>()
  readonly #names: ReadonlyMap<string, string>
  constructor(telemetry: RunTelemetry, tables: readonly TableConfig[]) {
    this.#telemetry = telemetry
    this.#names = new Map(tables.map((t) => [t.id, t.name]))
  }
  /** Counts the retry and passes it on with the table's name (the client knows only the id it requested). */
  retried(event: RetryEvent): void {
    if (event.tableId !== undefined) this.#byTable.set(event.tableId, (this.#byTable.get(event.tableId) ?? 0) + 1)
    const table = event.tableId === undefined ? undefined : this.#names.get(event.tableId)
    this.#telemetry.retried(table === undefined ? event : { ...event, table })
  }
  /** Requests made for the table so far, every retry included. */
  attempts(tableId: string): number {
    return 1 + (this.#byTable.get(tableId) ?? 0)
  }
}

/**
 * Exports one table. The client retries a request until a 200's headers arrive; a body that fails after them
 * (cut off, reset, stalled) is retried here as a whole, while the table's requests stay within maxAttempts.
 */
const exportOneTable = async (table: TableConfig, context: TableRunContext): Promise<TableOutcome> => {
  const { config, deps } = context
  const started = Date.now()
  const probe: TableExportProbe = { bytesReceived: 0, attempts: 0 }
  deps.telemetry.tableStarted(table)
  const budget = tableBudget(table, config.export.timeouts.tableSeconds, context.signal)
  try {
    return await exportWithinBudget(table, context, probe, started, budget.signal)
  } finally {
    budget.dispose()
  }
}

/**
 * A wall-clock budget for one table, retries included: the idle timeout alone never ends a body that trickles.
 * The run's own deadline (the Lambda's time left) still stops the table first when it comes first.
 */
const tableBudget = (table: TableConfig, seconds: number, runSignal: AbortSignal) => {
  const controller = new AbortController()
  const timer = setTimeout(
    () =>
      controller.abort(
        new DeadlineError({
          tableId: table.id,
          reason: `stopped: the table took longer than export.timeouts.tableSeconds (${seconds} s); nothing of it was published`,
          hint: 'the previous data is kept; raise export.timeouts.tableSeconds if the table is that large, or check the service (a body that trickles)',
        }),
      ),
    seconds * 1000,
  )
  return { signal: AbortSignal.any([runSignal, controller.signal]), dispose: () => clearTimeout(timer) }
}

const exportWithinBudget = async (
  table: TableConfig,
  context: TableRunContext,
  probe: TableExportProbe,
  started: number,
  signal: AbortSignal,
): Promise<TableOutcome> => {
  const { config, deps, retries } = context
  for (;;) {
    const margin = config.export.deadlineMarginSeconds * 1000
    if (deps.remainingTimeMs && deps.remainingTimeMs() < margin) {
      const failure = new DeadlineError({
        tableId: table.id,
        reason: 'not started: the run is about to reach its time limit',
      })
      return finish(deps, failedOutcome(table, failure, probe, Date.now() - started))
    }
    probe.bytesReceived = 0
    probe.httpStatus = undefined
    try {
      const tableContext = {
        store: deps.store,
        run: context.run,
        spoolDirectory: deps.spoolDirectory ?? DEFAULT_SPOOL_DIRECTORY,
        signal,
        catalog: deps.catalog,
        guards: config.export.guards,
        acceptChanges: context.acceptChanges,
        limits: config.limits,
        lambdaMemoryMb: deps.lambdaMemoryMb,
        onProgress: (progress: TableProgress) => deps.telemetry.tableProgress(table, progress),
      }
      const result = context.client
        ? await exportTable(table, { ...tableContext, client: context.client }, probe)
        : await reprocessTable(table, tableContext, probe)
      return finish(deps, {
        tableId: table.id,
        name: table.name,
        status: 'succeeded',
        httpStatus: result.httpStatus,
        attempts: context.client ? retries.attempts(table.id) : result.attempts,
        bytesReceived: result.bytesReceived,
        sha256: result.sha256,
        format: result.format,
        encoding: result.encoding,
        ...(result.delimiter === undefined ? {} : { delimiter: result.delimiter }),
        ...(result.sheet === undefined ? {} : { sheet: result.sheet }),
        rows: result.rows,
        columns: result.columns,
        objects: result.objects,
        durationMs: Date.now() - started,
        ...(result.warnings.length > 0 ? { warnings: result.warnings } : {}),
        ...(result.keys ? { keys: result.keys } : {}),
        ...(result.guards.length > 0 ? { guards: result.guards } : {}),
      })
    } catch (error) {
      // An aborted download or upload surfaces as a network or publish error; the cause is the deadline.
      const failure = context.signal.aborted
        ? stoppedByDeadline(table.id)
        : signal.aborted
          ? toExportError(signal.reason, table.id)
          : toExportError(error, table.id)
      if (context.client) probe.attempts = retries.attempts(table.id)
      // Only a failure after the headers is retried here; one before them was retried by the client already.
      const afterHeaders = probe.httpStatus !== undefined
      const retryBody = afterHeaders && isMidBodyFailure(failure) && probe.attempts < config.export.retry.maxAttempts
      if (!retryBody) return finish(deps, failedOutcome(table, failure, probe, Date.now() - started))
      const delayMs = backoffDelay(probe.attempts, config.export.retry, Math.random)
      retries.retried({ tableId: table.id, attempt: probe.attempts, delayMs, error: failure })
      await systemClock.sleep(delayMs, signal).catch(() => undefined)
    }
  }
}

const stoppedByDeadline = (tableId: string | undefined): DeadlineError =>
  new DeadlineError({
    tableId,
    reason: 'stopped: the run reached its time limit while this table was in flight; nothing of it was published',
  })

/** A failure after the headers arrived: the request as a whole is worth another try. */
const isMidBodyFailure = (error: ExportError): boolean =>
  error.retryable &&
  (error.code === ErrorCode.BODY_TRUNCATED ||
    error.code === ErrorCode.NETWORK_ERROR ||
    error.code === ErrorCode.TIMEOUT)

const finish = (deps: RunDependencies, outcome: TableOutcome): TableOutcome => {
  deps.telemetry.tableFinished(outcome)
  return outcome
}

const failedOutcome = (
  table: TableConfig,
  error: ExportError,
  probe: TableExportProbe,
  durationMs: number,
): TableOutcome => ({
  tableId: table.id,
  name: table.name,
  status: 'failed',
  format: table.format,
  ...(probe.httpStatus === undefined && error.status === undefined
    ? {}
    : { httpStatus: error.status ?? probe.httpStatus }),
  attempts: probe.attempts,
  bytesReceived: probe.bytesReceived,
  objects: [],
  durationMs,
  ...(error instanceof GuardHoldError ? { rows: error.rows, guards: error.findings } : {}),
  error: {
    code: error.code,
    failureClass: error.failureClass,
    message: error.message,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error instanceof DataError && error.line !== undefined ? { line: error.line } : {}),
    ...(error.hint === undefined ? {} : { hint: error.hint }),
  },
})

const selectTables = (tables: readonly TableConfig[], wanted: readonly string[] | undefined): readonly TableConfig[] =>
  wanted === undefined || wanted.length === 0
    ? tables
    : tables.filter((t) => wanted.includes(t.id) || wanted.includes(t.name))

/** Runs `work` over `items`, at most `limit` at a time, keeping the input order in the result. */
export const mapWithConcurrency = async <T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> => {
  const results = new Array<R>(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await work(items[index]!)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}
