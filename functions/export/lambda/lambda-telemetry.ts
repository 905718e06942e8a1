/**
 * RunTelemetry for the Lambda: JSON log lines through Powertools Logger, CloudWatch metrics in Embedded
 * Metric Format through Powertools Metrics (namespace METRICS_NAMESPACE, dimension `service` on every metric).
 * Per run: run counts and outcome flags (one data point per run, which the alarms count). Per table:
 * volumes, duration and success (dimension `table`). Per failed table: `TableFailures` (dimension `failureClass`).
 */
import type { Logger } from '@aws-lambda-powertools/logger'
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics'
import type { TableConfig } from '../core/config.ts'
import {
  FailureClass,
  METRICS_NAMESPACE,
  MetricDimension,
  MetricName,
  SOURCE_FAILURE_CLASSES,
} from '../core/constants.ts'
import type { ExportError } from '../core/errors.ts'
import type { RunRecord, TableOutcome } from '../core/run-record.ts'
import { describeGuards } from '../guards/guards.ts'
import type { RetryEvent, RunTelemetry, TableProgress } from '../path/telemetry.ts'

/** Progress is logged (at debug level) at most this often per table. */
const PROGRESS_LOG_INTERVAL_MS = 10_000
const REDACTED = '[redacted]'

interface LambdaTelemetryOptions {
  /** The invocation's logger (a child of the container's, with the Lambda context added). */
  readonly logger: Logger
  /** The `service` dimension (POWERTOOLS_SERVICE_NAME). */
  readonly serviceName: string
  /** Values that must never be emitted (the token); replaced wherever they would appear. */
  readonly sensitive?: readonly string[]
}

interface LambdaRunTelemetry extends RunTelemetry {
  /** Run metrics and an error log for an invocation that could not start its run (environment, token). */
  runNotStarted(error: ExportError): void
  /** Publishes metrics still buffered; a no-op when there are none. */
  flush(): void
}

export const createLambdaTelemetry = (options: LambdaTelemetryOptions): LambdaRunTelemetry => {
  const { logger, serviceName } = options
  const scrub = scrubber(options.sensitive ?? [])
  // One instance for the invocation: a table's metrics are one document under the table dimension, which
  // publishing clears again; a one-off metric under another dimension goes through singleMetric().
  const run = new Metrics({ namespace: METRICS_NAMESPACE, serviceName })
  const lastProgress = new Map<string, number>()
  let retries = 0

  const log = (level: 'debug' | 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) =>
    logger[level](scrub(message), scrub(fields ?? {}))

  const publishRun = (record: {
    succeeded: boolean
    auth: boolean
    server: boolean
    bySourceOnly: boolean
    /** Tables an upstream change guard held. */
    held?: number
    startedAt?: string
    durationMs?: number
  }) => {
    // Stamped with the run's start, like the Lambda's own metrics, so both fall in the same alarm period.
    if (record.startedAt !== undefined) run.setTimestamp(Date.parse(record.startedAt))
    run.addMetric(MetricName.RUNS, MetricUnit.Count, 1)
    run.addMetric(MetricName.SUCCESSFUL_RUNS, MetricUnit.Count, record.succeeded ? 1 : 0)
    run.addMetric(MetricName.RUNS_WITH_AUTH_FAILURES, MetricUnit.Count, record.auth ? 1 : 0)
    run.addMetric(MetricName.RUNS_WITH_SERVER_FAILURES, MetricUnit.Count, record.server ? 1 : 0)
    run.addMetric(MetricName.RUNS_FAILED_BY_SOURCE, MetricUnit.Count, record.bySourceOnly ? 1 : 0)
    run.addMetric(MetricName.RETRIES, MetricUnit.Count, retries)
    run.addMetric(MetricName.GUARD_HELD, MetricUnit.Count, record.held ?? 0)
    if (record.durationMs !== undefined)
      run.addMetric(MetricName.RUN_DURATION, MetricUnit.Milliseconds, record.durationMs)
    run.publishStoredMetrics()
  }

  return {
    info: (message, fields) => {
      if (typeof fields?.runId === 'string') logger.appendKeys({ runId: fields.runId })
      log('info', message, fields)
    },
    warn: (message, fields) => log('warn', message, fields),
    error: (message, fields) => log('error', message, fields),
    tableStarted: (table: TableConfig) => log('info', 'table export started', { table: table.name, tableId: table.id }),
    tableProgress: (table: TableConfig, progress: TableProgress) => {
      const now = Date.now()
      if (now - (lastProgress.get(table.name) ?? 0) < PROGRESS_LOG_INTERVAL_MS) return
      lastProgress.set(table.name, now)
      log('debug', 'table export progress', { table: table.name, bytesReceived: progress.bytes, rows: progress.rows })
    },
    tableFinished: (outcome: TableOutcome) => {
      const bytesWritten = outcome.objects.reduce((sum, object) => sum + object.bytes, 0)
      const perTable = run.addDimension(MetricDimension.TABLE, outcome.name)
      if (outcome.rows !== undefined) perTable.addMetric(MetricName.ROWS, MetricUnit.Count, outcome.rows)
      perTable.addMetric(MetricName.BYTES_RECEIVED, MetricUnit.Bytes, outcome.bytesReceived)
      perTable.addMetric(MetricName.BYTES_WRITTEN, MetricUnit.Bytes, bytesWritten)
      perTable.addMetric(MetricName.TABLE_DURATION, MetricUnit.Milliseconds, outcome.durationMs)
      const guards = outcome.guards ?? []
      perTable.addMetric(MetricName.GUARD_HELD, MetricUnit.Count, guards.some((g) => g.action === 'held') ? 1 : 0)
      perTable.addMetric(MetricName.GUARD_WARNED, MetricUnit.Count, guards.filter((g) => g.action === 'warned').length)
      // 1 or 0 per table run: each table's staleness alarm counts these in the table's own periods.
      perTable.addMetric(MetricName.TABLES_SUCCEEDED, MetricUnit.Count, outcome.status === 'succeeded' ? 1 : 0)
      perTable.publishStoredMetrics()
      const fields = {
        table: outcome.name,
        tableId: outcome.tableId,
        status: outcome.status,
        rows: outcome.rows,
        bytesReceived: outcome.bytesReceived,
        bytesWritten,
        attempts: outcome.attempts,
        durationMs: outcome.durationMs,
        ...(outcome.objects[0] ? { location: outcome.objects[0].location } : {}),
        ...(outcome.warnings ? { warnings: outcome.warnings } : {}),
        // One line that says every guard that fired; the list itself is in the run record.
        ...(guards.length > 0 ? { guards: describeGuards(guards) } : {}),
        ...(outcome.expiredDates ? { expiredDates: outcome.expiredDates } : {}),
      }
      if (outcome.status === 'succeeded') {
        log('info', 'table exported', fields)
        return
      }
      const failureClass = outcome.error?.failureClass ?? FailureClass.INTERNAL
      const failures = run.singleMetric()
      failures.addDimension(MetricDimension.FAILURE_CLASS, failureClass)
      failures.addMetric(MetricName.TABLE_FAILURES, MetricUnit.Count, 1)
      log('error', 'table export failed', { ...fields, error: outcome.error })
    },
    retried: (event: RetryEvent) => {
      retries++
      log('warn', 'retrying after a transient failure', {
        table: event.table,
        tableId: event.tableId,
        attempt: event.attempt,
        delayMs: event.delayMs,
        error: event.error.toJSON(),
      })
    },
    runFinished: (record: RunRecord) => {
      const failed = record.tables.filter((table) => table.status === 'failed')
      const failedWith = (failureClass: FailureClass) => failed.some((t) => t.error?.failureClass === failureClass)
      run.addMetric(MetricName.TABLES_SUCCEEDED, MetricUnit.Count, record.tables.length - failed.length)
      run.addMetric(MetricName.TABLES_FAILED, MetricUnit.Count, failed.length)
      const durationMs = Date.parse(record.finishedAt) - Date.parse(record.startedAt)
      publishRun({
        succeeded: record.status === 'succeeded',
        auth: failedWith(FailureClass.AUTH),
        server: failedWith(FailureClass.SERVER) || failedWith(FailureClass.NETWORK),
        bySourceOnly:
          failed.length > 0 &&
          failed.every((t) => SOURCE_FAILURE_CLASSES.includes(t.error?.failureClass ?? FailureClass.INTERNAL)),
        held: failed.filter((t) => t.error?.failureClass === FailureClass.GUARD).length,
        startedAt: record.startedAt,
        durationMs,
      })
      log(record.status === 'succeeded' ? 'info' : 'error', 'export run finished', {
        exportDate: record.exportDate,
        status: record.status,
        tablesSucceeded: record.tables.length - failed.length,
        tablesFailed: failed.map((t) => t.name),
        durationMs,
      })
    },
    runNotStarted: (error: ExportError) => {
      const auth = error.failureClass === FailureClass.AUTH
      publishRun({ succeeded: false, auth, server: false, bySourceOnly: auth })
      log('error', 'export run could not start', { error: error.toJSON() })
    },
    flush: () => {
      if (run.hasStoredMetrics()) run.publishStoredMetrics()
    },
  }
}

/** Replaces every sensitive value inside strings of `value` (deeply); identity when there is none. */
const scrubber = (sensitive: readonly string[]) => {
  const secrets = sensitive.filter((s) => s.length > 0)
  const redact = (text: string) => secrets.reduce((out, secret) => out.replaceAll(secret, REDACTED), text)
  return <T>(value: T): T => {
    if (secrets.length === 0) return value
    if (typeof value === 'string') return redact(value) as T
    return JSON.parse(JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? redact(v) : v))) as T
  }
}
