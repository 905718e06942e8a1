/**
 * The orchestrator: check the source once (the token), export every table with bounded concurrency (each table
 * retried as a whole by one retry loop), write the run record.
 * It wires the stages together and does nothing else; the Lambda handler and the local CLI differ only in
 * the dependencies they pass in.
 */
import { randomBytes } from 'node:crypto'
import os from 'node:os'
import path from 'node:path'
import type { TableCatalog } from '../catalog/table-catalog.ts'
import { type ExportConfig, selectedTables, type TableConfig } from '../core/config.ts'
import { ConfigError, DeadlineError, ErrorCode, ExportError, toExportError } from '../core/errors.ts'
import type { RunIdentity } from '../core/lineage.ts'
import { tableThreads } from '../core/parse-threads.ts'
import type { PseudonymizationKey } from '../core/pseudonymization-key.ts'
import { type RunRecord, runRecordKey, type TableOutcome } from '../core/run-record.ts'
import type { WarehouseStore } from '../publish/store.ts'
import { type RetryClock, systemClock, withRetries } from '../source/retry.ts'
import type { TableSource } from '../source/table-source.ts'
import { readLatestOutcome, writeLatestOutcomes } from './run-index.ts'
import { exportTable, type HistoryRewrite, type TableAttempt } from './table-export.ts'
import { acquireTableLease, leaseWaitMs, type TableLease, waitingLine } from './table-lease.ts'
import { attemptsOf, failedOutcome, type TableAttempts } from './table-outcome.ts'
import { RUN_STARTED, type RunTelemetry, type TableProgress } from './telemetry.ts'

export interface RunDependencies {
  /** Where the tables' bytes come from: the service (serviceSource) or the raw archive (archiveSource). */
  readonly source: TableSource
  readonly store: WarehouseStore
  readonly telemetry: RunTelemetry
  /** Folder for the spool of record batches. @default DEFAULT_SPOOL_DIRECTORY */
  readonly spoolDirectory?: string | undefined
  readonly now?: () => Date
  /** What the table retries wait on and draw their jitter from. @default systemClock */
  readonly clock?: RetryClock | undefined
  /** Milliseconds left before the run must stop (Lambda); unlimited when absent. */
  readonly remainingTimeMs?: () => number
  /**
   * Fires when work in flight must stop (the Lambda deadline): downloads, uploads and retries are aborted,
   * unfinished tables fail with DeadlineError, and the run record is still written.
   */
  readonly signal?: AbortSignal | undefined
  /** Catalog to tell about changed table schemas (Glue on AWS). */
  readonly catalog?: TableCatalog | undefined
  /** Threads parsing may use, decided at the edge (core/parse-threads.ts); default: as this process's cores pay for. */
  readonly parseThreads?: number | undefined
  /** The key of `tables[].columns.pseudonymize` (a file or variable locally, a secret on AWS); needed only then. */
  readonly pseudonymizationKey?: PseudonymizationKey | undefined
  /**
   * Reads the key when a table turns out to need it once the run has started (an erasure request recorded while
   * the run waited for the table); the Lambda passes its secret's reader. @default none: such a table fails coded
   */
  readonly readPseudonymizationKey?: (() => Promise<PseudonymizationKey>) | undefined
  /** A table's lease the caller holds across several runs (an erasure walking its dates): not taken again. */
  readonly lease?: TableLease | undefined
}

interface RunOptions {
  /** Export date (partition); UTC today when absent. */
  readonly exportDate?: string | undefined
  /** Narrow the run to these table ids or names. */
  readonly tables?: readonly string[] | undefined
  /** Publish what the upstream change guards would hold: an operator checked the change. */
  readonly acceptChanges?: boolean | undefined
  /** A rewrite of the date's history (path/rewrite.ts): written against its schema, the registry left as it is. */
  readonly history?: HistoryRewrite | undefined
  /** Delete the earlier versions of what each date replaces (path/table-steps.ts purgeVersions). */
  readonly purgeVersions?: boolean | undefined
}

/** The OS temp folder (the Lambda's /tmp). */
export const DEFAULT_SPOOL_DIRECTORY = path.join(os.tmpdir(), 'inventory-export-spool')

const newRunId = (at: Date): string =>
  `${at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}-${randomBytes(4).toString('hex')}`

/** The sections a run reads; the source's own settings went into the TableSource. */
type RunConfig = Pick<ExportConfig, 'tables' | 'export' | 'limits'>

export const runExport = async (
  config: RunConfig,
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
  const tables = selectedTables(config.tables, options.tables)
  requireKeyWhenPseudonymizing(config.tables, tables, deps.pseudonymizationKey)
  const signal = deps.signal ?? new AbortController().signal
  const { source, telemetry } = deps
  for (const warning of source.warnings) telemetry.warn(warning)
  telemetry.info(RUN_STARTED, {
    runId: run.runId,
    exportDate: run.exportDate,
    mode: source.mode,
    tables: tables.map((t) => t.name),
  })

  let tokenOwner: string | undefined
  let outcomes: TableOutcome[]
  // Each table's lease is given up once the run's record says what happened to it.
  const leases: TableLease[] = []
  try {
    const checked = await source.check({
      signal,
      onRetry: (notice) => telemetry.retried({ ...notice, tableId: undefined }),
    })
    tokenOwner = checked.tokenOwner
    const { acceptChanges, history, purgeVersions } = options
    const context = { config, deps, run, signal, acceptChanges, history, purgeVersions }
    outcomes = await mapWithConcurrency(tables, config.export.concurrency, async (table) => {
      const { outcome, lease } = await exportOneTable(table, context)
      if (lease) leases.push(lease)
      return outcome
    })
  } catch (error) {
    // The token check failed: one request told us every table would fail the same way.
    const failure = signal.aborted ? stoppedByDeadline(undefined) : toExportError(error)
    telemetry.error('token check failed; no table was exported', { error: failure.toJSON() })
    const noRequest = { mode: source.mode, attempts: 0, bytesReceived: 0 }
    outcomes = tables.map((table) => failedOutcome(table, failure, noRequest, 0))
    for (const outcome of outcomes) telemetry.tableFinished(outcome)
  }

  const record: RunRecord = {
    runId: run.runId,
    exportDate: run.exportDate,
    startedAt: startedAt.toISOString(),
    finishedAt: now().toISOString(),
    status: outcomes.every((o) => o.status === 'succeeded') ? 'succeeded' : 'failed',
    mode: source.mode,
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
    await Promise.all(leases.map((lease) => lease.release()))
    // The run counts in the metrics even when its record could not be written.
    deps.telemetry.runFinished(record)
  }
  return record
}

/** A table that pseudonymizes cannot run without the key: a configuration error before anything is downloaded. */
export const requireKeyWhenPseudonymizing = (
  all: readonly TableConfig[],
  selected: readonly TableConfig[],
  key: PseudonymizationKey | undefined,
): void => {
  if (key !== undefined) return
  const problems = selected
    .filter((table) => table.columns.pseudonymize.length > 0)
    .map((table) => ({
      field: `tables[${all.indexOf(table)}].columns.pseudonymize`,
      message:
        "needs the pseudonymization key: --pseudonymization-key-file FILE or INVENTORY_PSEUDONYMIZATION_KEY locally, the stack's pseudonymization secret on AWS",
    }))
  if (problems.length > 0) throw new ConfigError('configuration', problems)
}

interface TableRunContext {
  readonly config: RunConfig
  readonly deps: RunDependencies
  readonly run: RunIdentity
  readonly signal: AbortSignal
  readonly acceptChanges: boolean | undefined
  readonly history: HistoryRewrite | undefined
  readonly purgeVersions: boolean | undefined
}

/**
 * Exports one table within its own time budget, under the table's lease (path/table-lease.ts), which it returns
 * for the run to give up after its record; the outcome, succeeded or failed, goes to telemetry too.
 */
const exportOneTable = async (
  table: TableConfig,
  context: TableRunContext,
): Promise<{ outcome: TableOutcome; lease?: TableLease | undefined }> => {
  const { config, deps } = context
  const clock = deps.clock ?? systemClock
  const started = clock.now()
  deps.telemetry.tableStarted(table)
  const budget = tableBudget(table, config.export.timeouts.tableSeconds, context.signal)
  const failed = (error: ExportError) => {
    const outcome = failedOutcome(table, error, { mode: deps.source.mode, attempts: 0, bytesReceived: 0 }, 0)
    deps.telemetry.tableFinished(outcome)
    return outcome
  }
  try {
    const held = deps.lease?.table === table.name ? deps.lease : undefined
    const margin = config.export.deadlineMarginSeconds * 1000
    const lease =
      held ??
      (await acquireTableLease(deps.store, table, {
        owner: context.run.runId,
        operation: deps.source.mode,
        waitMs: leaseWaitMs(config.export.timeouts.busyWaitSeconds, deps.remainingTimeMs, margin),
        clock,
        signal: budget.signal,
        onWait: (holder) => deps.telemetry.warn(waitingLine(table.name, holder), { table: table.name }),
      }).catch((error: unknown) =>
        toExportError(stoppedBy(context.signal, budget.signal, table.id) ?? error, table.id),
      ))
    if (lease instanceof ExportError) return { outcome: failed(lease) }
    // Read before anything is exported: an entry of the wrong shape fails the table (STATE_CORRUPT) rather than
    // losing its lastSuccess to the entry this run writes.
    const corrupt = await readLatestOutcome(deps.store, table.name).then(
      () => undefined,
      (error: unknown) => toExportError(error, table.id),
    )
    const mine = held === undefined ? lease : undefined
    if (corrupt !== undefined) return { outcome: failed(corrupt), lease: mine }
    // A lease lost while the table runs stops it as the budget does: nothing more of it is committed.
    const signal = AbortSignal.any([budget.signal, lease.signal])
    const outcome = await exportWithRetries(table, context, signal, clock)
    const durationMs = clock.now() - started
    // The path made the table's outcome; the run adds only what it alone knows: the attempts and their time.
    const finished: TableOutcome =
      outcome.attempt.ok === true
        ? { ...outcome.attempt.outcome, ...attemptsOf(outcome), durationMs }
        : failedOutcome(table, outcome.attempt.error, { ...outcome, ...outcome.attempt }, durationMs)
    deps.telemetry.tableFinished(finished)
    return { outcome: finished, lease: mine }
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

interface RetriedAttempt extends TableAttempts {
  readonly attempt: TableAttempt
}

/**
 * The table's one retry loop: a whole attempt (open the bytes, land them) is tried again while the error may heal,
 * within export.retry's attempts and total budget, waiting on the injected clock. A failure before the bytes
 * opened (5xx, 429, network) is retried when it is retryable; one after them only when the body broke off.
 */
const exportWithRetries = async (
  table: TableConfig,
  context: TableRunContext,
  signal: AbortSignal,
  clock: RetryClock,
): Promise<RetriedAttempt> => {
  const { config, deps } = context
  const mode = deps.source.mode
  let attempts = 0
  let last: TableAttempt | undefined
  const attemptOnce = async (attempt: number) => {
    const margin = config.export.deadlineMarginSeconds * 1000
    if (deps.remainingTimeMs && deps.remainingTimeMs() < margin) {
      throw new DeadlineError({ tableId: table.id, reason: 'not started: the run is about to reach its time limit' })
    }
    attempts = attempt
    last = await exportTable(table, deps.source, {
      store: deps.store,
      run: context.run,
      spoolDirectory: deps.spoolDirectory ?? DEFAULT_SPOOL_DIRECTORY,
      signal,
      catalog: deps.catalog,
      guards: config.export.guards,
      acceptChanges: context.acceptChanges,
      history: context.history,
      purgeVersions: context.purgeVersions,
      limits: config.limits,
      parseThreads: tableThreads(config.export.workerThreads, deps.parseThreads),
      pseudonymizationKey: deps.pseudonymizationKey,
      readPseudonymizationKey: deps.readPseudonymizationKey,
      onProgress: (progress: TableProgress) => deps.telemetry.tableProgress(table, progress),
      attempt,
    })
    if (last.ok) return last
    throw stoppedBy(context.signal, signal, table.id) ?? last.error
  }
  try {
    const attempt = await withRetries(attemptOnce, config.export.retry, {
      clock,
      signal,
      shouldRetry: (error) =>
        !(error instanceof DeadlineError) &&
        (last?.ok === false && last.opened ? isMidBodyFailure(error) : error.retryable),
      onRetry: (notice) => deps.telemetry.retried({ ...notice, tableId: table.id, table: table.name }),
    })
    return { mode, attempts, attempt }
  } catch (error) {
    // An aborted download or upload surfaces as a network or publish error; the cause is the deadline.
    const failure = stoppedBy(context.signal, signal, table.id) ?? toExportError(error, table.id)
    const received = last?.ok === false ? last : { opened: false, bytesReceived: 0 }
    return { mode, attempts, attempt: { ...received, ok: false, error: failure } }
  }
}

/** The run's deadline, then the table's budget: what stopped the table, when either did. */
const stoppedBy = (runSignal: AbortSignal, tableSignal: AbortSignal, tableId: string): ExportError | undefined =>
  runSignal.aborted
    ? stoppedByDeadline(tableId)
    : tableSignal.aborted
      ? toExportError(tableSignal.reason, tableId)
      : undefined

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

/** Runs `work` over `items`, at most `limit` at a time, keeping the input order in the result. */
const mapWithConcurrency = async <T, R>(
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
