/**
 * The base of every coded error: a machine-readable `code`, the failure class used in metrics, the subject (table
 * id, HTTP status) and a hint saying what to do. Messages are built from configuration and response metadata only,
 * never from the token; quotePrefix bounds what they quote of an untrusted value, and every message is made
 * printable here, so upstream text quoted anywhere in it is shown escaped wherever the error is printed.
 */
import type { FailureClass } from '../constants.ts'
import { printable, printableJson } from '../printable.ts'
import type { ErrorCode } from './codes.ts'

export interface ExportErrorDetails {
  readonly tableId?: string | undefined
  readonly status?: number | undefined
  readonly retryable?: boolean
  readonly hint?: string
  readonly cause?: unknown
}

/** Base class of every coded error. */
export class ExportError extends Error {
  readonly code: ErrorCode
  readonly failureClass: FailureClass
  readonly tableId: string | undefined
  readonly status: number | undefined
  /** Whether trying the same request again may succeed. */
  readonly retryable: boolean
  /** What the operator should do next. */
  readonly hint: string | undefined

  /** `message` is one line, or our own lines (a list of problems): each is escaped, then they are joined. */
  constructor(
    code: ErrorCode,
    failureClass: FailureClass,
    message: string | readonly string[],
    details: ExportErrorDetails = {},
  ) {
    const lines = typeof message === 'string' ? [message] : message
    super(lines.map(printable).join('\n'), details.cause === undefined ? undefined : { cause: details.cause })
    this.name = new.target.name
    this.code = code
    this.failureClass = failureClass
    this.tableId = details.tableId
    this.status = details.status
    this.retryable = details.retryable ?? false
    this.hint = details.hint
  }

  /** A plain object for logs and run records. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      failureClass: this.failureClass,
      message: this.message,
      ...(this.tableId === undefined ? {} : { tableId: this.tableId }),
      ...(this.status === undefined ? {} : { status: this.status }),
      retryable: this.retryable,
      ...(this.hint === undefined ? {} : { hint: this.hint }),
    }
  }
}

/** Characters of an untrusted value that a message quotes. */
export const QUOTED_PREFIX_LENGTH = 40

/**
 * An untrusted value for a message: JSON-quoted (so a line break in it cannot split the message), and only its
 * first characters when it is long, with its length, so a 10 MB value never becomes a 10 MB message.
 */
export const quotePrefix = (value: string, max: number = QUOTED_PREFIX_LENGTH): string =>
  value.length <= max
    ? printableJson(value)
    : `${printableJson(value.slice(0, max))}... (${value.length.toLocaleString('en-US')} characters)`

/** "table 1001: ", the subject that starts the message of a table's failure. */
export const tableSubject = (tableId: string | undefined): string => (tableId === undefined ? '' : `table ${tableId}: `)
