/**
 * Coded errors across a thread's boundary. Structured cloning keeps an Error's message but not its class or
 * fields, so the worker thread describes the error and the calling thread rebuilds the same coded error: malformed
 * CSV fails the table as DATA, with its line, exactly as it does when the stage runs on the calling thread.
 */
import {
  DataError,
  type ExportError,
  InternalError,
  ProtocolError,
  PublishError,
  StorageFullError,
  WorkbookError,
} from './errors.ts'

export interface ErrorDescription {
  readonly name: string
  readonly message: string
  readonly stack: string | undefined
  /** The coded error's own fields (code, failure class, table id, hint, line...). */
  readonly fields: Record<string, unknown>
}

const CODED = { DataError, InternalError, ProtocolError, PublishError, StorageFullError, WorkbookError } as const

export const describeError = (error: unknown): ErrorDescription => {
  if (error instanceof Error) {
    return { name: error.name, message: error.message, stack: error.stack, fields: { ...error } }
  }
  return { name: 'Error', message: String(error), stack: undefined, fields: {} }
}

/** The coded error described; anything else becomes an InternalError naming the original message. */
export const reviveError = (description: ErrorDescription, tableId: string): ExportError => {
  const coded = CODED[description.name as keyof typeof CODED]
  // A full spool disk on the worker is the same storage failure as on the calling thread.
  if (coded === undefined && description.fields.code === 'ENOSPC') {
    return new StorageFullError({ tableId, path: description.fields.path as string | undefined })
  }
  if (coded === undefined) {
    return new InternalError({ tableId, reason: `a worker thread failed: ${description.message}` })
  }
  const error = Object.create(coded.prototype) as ExportError
  Object.assign(error, description.fields)
  Object.defineProperty(error, 'message', { value: description.message, writable: true, configurable: true })
  Object.defineProperty(error, 'stack', { value: description.stack, writable: true, configurable: true })
  return error
}
