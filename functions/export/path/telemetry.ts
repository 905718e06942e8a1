/**
 * What a run reports while it works. The Lambda sends it to Powertools (JSON logs, EMF metrics); the local
 * runner to the terminal; tests capture it. Fields carry configuration and outcomes only, never the token.
 */
import type { TableConfig } from '../core/config.ts'
import type { ExportError } from '../core/errors.ts'
import type { RunRecord, TableOutcome } from '../core/run-record.ts'

/** The line a run starts with; a history command, which runs once per date, says what it does in its own words. */
export const RUN_STARTED = 'export run started'

/** How far a table's path has got: bytes received and rows read so far. */
export interface TableProgress {
  readonly bytes: number
  readonly rows: number
}

export interface RetryEvent {
  readonly tableId: string | undefined
  /** The table's name in the warehouse, when the retry belongs to a configured table. */
  readonly table?: string | undefined
  readonly attempt: number
  readonly delayMs: number
  readonly error: ExportError
}

export interface RunTelemetry {
  info(message: string, fields?: Record<string, unknown>): void
  warn(message: string, fields?: Record<string, unknown>): void
  error(message: string, fields?: Record<string, unknown>): void
  tableStarted(table: TableConfig): void
  tableProgress(table: TableConfig, progress: TableProgress): void
  tableFinished(outcome: TableOutcome): void
  retried(event: RetryEvent): void
  runFinished(record: RunRecord): void
}
