/**
 * The table source port: where a table's bytes (its CSV or workbook) come from. The service source downloads them
 * (it owns the inventory client and the token); the archive source reads what an earlier export kept under `_raw/`
 * (reprocess). Everything after `open` is the same path whichever source the run was given.
 */
import type { TableConfig } from '../core/config.ts'
import type { RunMode } from '../core/constants.ts'
import type { ErasureRecord } from '../core/run-record.ts'
import type { RetryNotice } from './retry.ts'

/** The bytes of one table's export, as they arrive. */
export interface TableBytes {
  /** HTTP status of the answer; absent when the bytes did not come over HTTP (the archive). */
  readonly httpStatus?: number | undefined
  /** The table's bytes as the file has them: a compressed transfer is already decoded. */
  readonly body: AsyncIterable<Buffer>
  /** The charset the source declares the text to be in (HTTP's Content-Type, or what the archiving run read). */
  readonly charset?: string | undefined
  /** Bytes of `body` delivered so far (decoded), also once reading it failed. */
  readonly received: () => number
  /** Frees the source (a socket, a file) when the path stops early. */
  readonly cancel: () => void
  /** Whether to keep these bytes in the raw archive (never when they come from it). */
  readonly archive: boolean
  /** The run and time the rows were first exported at, when the bytes are a published date's own (history). */
  readonly lineage?: { readonly runId: string; readonly exportedAt: Date } | undefined
  /**
   * Columns whose values already are pseudonyms (a date's own Parquet, read back): not pseudonymized again, and
   * recorded as pseudonyms in the footer of what is written from them.
   */
  readonly pseudonyms?: readonly string[] | undefined
  /** What the source left out (an erasure request), once the body has been read. */
  readonly erasure?: (() => ErasureRecord) | undefined
  /** Lines reported with the table's outcome (an archive no run record vouches for). */
  readonly warnings?: readonly string[]
}

interface OpenRequest {
  /** The export date (the `dt=` partition) being written. */
  readonly exportDate: string
  /** Which attempt at this table this is (1-based); named in errors such as "after 3 attempts". */
  readonly attempt: number
  readonly signal?: AbortSignal | undefined
}

interface CheckRequest {
  readonly signal?: AbortSignal | undefined
  /** Called before the source retries its own check (the token check). */
  readonly onRetry?: ((notice: RetryNotice) => void) | undefined
}

/** What the source's one check before any table found. */
interface SourceCheck {
  /** Username of the token's owner, when the source has a token. */
  readonly tokenOwner?: string | undefined
  /** The token owner's record as the service returned it (`check` shows its name and e-mail). */
  readonly user?: Readonly<Record<string, unknown>> | undefined
}

export interface TableSource {
  /** What the run record calls a run that reads this source. */
  readonly mode: RunMode
  /** Lines to log once at the start of a run (e.g. plain http carrying the token). */
  readonly warnings: readonly string[]
  /** Checked once before any table: a failure here fails every table the same way. */
  check(request: CheckRequest): Promise<SourceCheck>
  /** One attempt at the table's bytes; the run retries what is worth retrying. */
  open(table: TableConfig, request: OpenRequest): Promise<TableBytes>
}
