/** A table's failed outcome and its attempts, as the run (path/run.ts) records them. */
import type { TableConfig } from '../core/config.ts'
import { RunMode } from '../core/constants.ts'
import { DataError, ErasedRowsHeldError, type ExportError, GuardHoldError } from '../core/errors.ts'
import type { TableOutcome } from '../core/run-record.ts'

/** What the run knows of a table's tries: how it read the table and how many attempts it made. */
export interface TableAttempts {
  readonly mode: RunMode
  /** Attempts made at the table (requests, for the service). */
  readonly attempts: number
}

/** Attempts are requests to the service; a rebuild from the archive makes none, so it records none. */
export const attemptsOf = ({ mode, attempts }: TableAttempts) => (mode === RunMode.REPROCESS ? {} : { attempts })

/** A failed table's outcome as the run record keeps it: its error, and what was received before it. */
export const failedOutcome = (
  table: TableConfig,
  error: ExportError,
  received: TableAttempts & {
    readonly httpStatus?: number | undefined
    readonly bytesReceived: number
  },
  durationMs: number,
): TableOutcome => ({
  tableId: table.id,
  name: table.name,
  status: 'failed',
  format: table.format,
  ...(received.httpStatus === undefined && error.status === undefined
    ? {}
    : { httpStatus: error.status ?? received.httpStatus }),
  ...attemptsOf(received),
  bytesReceived: received.bytesReceived,
  objects: [],
  durationMs,
  ...(error instanceof GuardHoldError ? { rows: error.rows, guards: error.findings } : {}),
  ...(error instanceof ErasedRowsHeldError ? { erased: error.erased } : {}),
  error: {
    code: error.code,
    failureClass: error.failureClass,
    message: error.message,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error instanceof DataError && error.line !== undefined ? { line: error.line } : {}),
    ...(error.hint === undefined ? {} : { hint: error.hint }),
  },
})
