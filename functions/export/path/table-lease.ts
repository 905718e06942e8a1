/**
 * One writer per table at a time: a small lease object per table (`_leases/<table>.json`), taken with a conditional
 * write (only if absent, or only if still at the version read), held by an owner (a run, an erasure, a fanned-out
 * request's batches together), renewed while the work runs and given up at its end. A lease that is not renewed
 * lapses after its time to live, so a killed run holds the table for at most that long. Every operation that writes
 * a table's dates takes it once per table (path/run.ts), so an export, a reprocess, an erasure and a rewrite never
 * write one table at once, whatever layout the table's commit step writes. A lease lost while work runs (another
 * writer took it after it lapsed) fires the lease's signal, which aborts the table's uploads before they commit.
 */
import { randomBytes } from 'node:crypto'
import os from 'node:os'
import * as z from 'zod'
import type { TableConfig } from '../core/config.ts'
import { LEASES_FOLDER, type RunMode } from '../core/constants.ts'
import { TableBusyError, WriteConflictError } from '../core/errors.ts'
import type { WarehouseStore } from '../publish/store.ts'
import { processIsAlive } from '../scratch/live-process.ts'
import { type RetryClock, systemClock } from '../source/retry.ts'
import type { RunTelemetry } from './telemetry.ts'

/** How long a lease holds without renewal: a killed run's table is free again after this. */
export const LEASE_TTL_MS = 120_000
/** Renewed this often while the work runs: three renewals can fail before the lease lapses. */
const RENEW_FRACTION = 4
/** How often a waiting run looks again. */
const POLL_MS = 1000

export const leaseKey = (table: string): string => `${LEASES_FOLDER}/${table}.json`

const LeaseDocument = z.looseObject({
  table: z.string(),
  owner: z.string().min(1),
  operation: z.string(),
  acquiredAt: z.string(),
  expiresAt: z.string(),
  released: z.boolean().optional(),
  host: z.string().optional(),
  pid: z.int().optional(),
})
type LeaseDocument = z.infer<typeof LeaseDocument>

/** A lease object as written, or undefined when it cannot be read: it then holds nothing (it is taken over). */
const readLease = (body: Buffer): LeaseDocument | undefined => {
  try {
    const parsed = LeaseDocument.safeParse(JSON.parse(body.toString('utf8')))
    return parsed.success ? parsed.data : undefined
  } catch {
    return undefined
  }
}

/** Whether the lease still holds: not given up, not lapsed, and not of a process of this host that has died. */
const holds = (lease: LeaseDocument | undefined, now: number): lease is LeaseDocument =>
  lease !== undefined &&
  lease.released !== true &&
  Date.parse(lease.expiresAt) > now &&
  !(lease.host === os.hostname() && lease.pid !== undefined && !processIsAlive(lease.pid))

export interface LeaseRequest {
  /** Who holds it: a run id, or the id a fanned-out request's plan made for all its batches. */
  readonly owner: string
  /** What the holder does, for the message of whoever waits for it. */
  readonly operation: RunMode | 'convert'
  /** How long to wait while another owner holds the table; then TABLE_BUSY. */
  readonly waitMs: number
  readonly clock?: RetryClock | undefined
  /** Stops the wait (the run's deadline). */
  readonly signal?: AbortSignal | undefined
  /** @default LEASE_TTL_MS */
  readonly ttlMs?: number | undefined
  /** Told once when the wait for another owner begins (a line for the operator). */
  readonly onWait?: ((holder: { readonly operation: string; readonly expiresAt: string }) => void) | undefined
}

/** A held lease. */
export interface TableLease {
  readonly table: string
  readonly owner: string
  /** Fires, with a TableBusyError, when the lease is lost: the work must stop before it commits anything. */
  readonly signal: AbortSignal
  /** Stops renewing and gives the table up. Never throws: a lease that could not be given up lapses. */
  release(): Promise<void>
  /** Stops renewing and leaves the lease as it is: to the owner's next holder (a fan-out's next batch), or to lapse. */
  detach(): void
}

/**
 * Takes `table`'s lease for `request.owner`: at once when nobody holds it, it lapsed, or the owner already holds it
 * (another batch of the same request); else waits up to `waitMs`, then fails with TableBusyError.
 */
export const acquireTableLease = async (
  store: WarehouseStore,
  table: Pick<TableConfig, 'id' | 'name'>,
  request: LeaseRequest,
): Promise<TableLease> => {
  const clock = request.clock ?? systemClock
  const ttlMs = request.ttlMs ?? LEASE_TTL_MS
  const key = leaseKey(table.name)
  const started = clock.now()
  let told = false
  for (;;) {
    request.signal?.throwIfAborted()
    const current = await store.getObjectVersion(key)
    const lease = current && readLease(current.body)
    const now = clock.now()
    if (holds(lease, now) && lease.owner !== request.owner) {
      const waited = now - started
      if (waited >= request.waitMs) {
        throw new TableBusyError({
          tableId: table.id,
          table: table.name,
          holder: lease,
          waitedSeconds: Math.round(waited / 1000),
        })
      }
      if (!told) request.onWait?.(lease)
      told = true
      await clock.sleep(Math.min(POLL_MS, request.waitMs - waited), request.signal)
      continue
    }
    const acquiredAt = holds(lease, now) ? lease.acquiredAt : new Date(now).toISOString()
    const mine = leaseDocument(table.name, request, acquiredAt, now + ttlMs)
    try {
      await store.putObjectIfVersion(key, mine, 'application/json', current?.version)
    } catch (error) {
      // Another run wrote it between the read and the write: read it again and decide again.
      if (error instanceof WriteConflictError) continue
      throw error
    }
    return holdLease(store, table, request, { clock, ttlMs, acquiredAt, expiresAt: now + ttlMs })
  }
}

/** Runs `work` under the table's lease, given up when it ends (or, `shared`, left to the owner's next holder). */
export const withTableLease = async <T>(
  store: WarehouseStore,
  table: Pick<TableConfig, 'id' | 'name'>,
  request: LeaseRequest & { readonly shared?: boolean | undefined },
  work: (lease: TableLease) => Promise<T>,
): Promise<T> => {
  const lease = await acquireTableLease(store, table, request)
  try {
    return await work(lease)
  } finally {
    if (request.shared === true) lease.detach()
    else await lease.release()
  }
}

/** The lease's text: who holds it, for what, since and until when (a nonce keeps every write a new version). */
const leaseDocument = (
  table: string,
  { owner, operation }: Pick<LeaseRequest, 'owner' | 'operation'>,
  acquiredAt: string,
  expiresAt: number,
  released = false,
): string =>
  `${JSON.stringify({
    version: 1,
    table,
    owner,
    operation,
    acquiredAt,
    expiresAt: new Date(expiresAt).toISOString(),
    ...(released ? { released: true } : {}),
    // Who holds it: a run of this host that died is taken over at once, a lapsed lease of any host after ttlMs.
    host: os.hostname(),
    pid: process.pid,
    nonce: randomBytes(8).toString('hex'),
  })}\n`

/** The renewals of a held lease, until it is released, detached or lost. */
const holdLease = (
  store: WarehouseStore,
  table: Pick<TableConfig, 'id' | 'name'>,
  request: LeaseRequest,
  held: { clock: RetryClock; ttlMs: number; acquiredAt: string; expiresAt: number },
): TableLease => {
  const { clock, ttlMs, acquiredAt } = held
  const key = leaseKey(table.name)
  const controller = new AbortController()
  let expiresAt = held.expiresAt
  let timer: NodeJS.Timeout | undefined
  let stopped = false
  let renewing: Promise<void> = Promise.resolve()

  const lose = (holder: { operation: string; expiresAt: string }) => {
    if (controller.signal.aborted) return
    controller.abort(
      new TableBusyError({
        tableId: table.id,
        table: table.name,
        holder,
        waitedSeconds: 0,
        hint: `this ${request.operation}'s lease on ${table.name} lapsed before it could be renewed and another writer took the table: nothing more of it was committed; run it again once the other one has finished`,
      }),
    )
  }

  const renew = async (): Promise<void> => {
    const now = clock.now()
    try {
      const current = await store.getObjectVersion(key)
      const lease = current && readLease(current.body)
      if (lease === undefined || lease.owner !== request.owner || lease.released === true) {
        return lose(lease ?? { operation: 'writer', expiresAt: new Date(now).toISOString() })
      }
      await store.putObjectIfVersion(
        key,
        leaseDocument(table.name, request, acquiredAt, now + ttlMs),
        'application/json',
        current!.version,
      )
      expiresAt = now + ttlMs
    } catch {
      // A store that did not answer (or a batch of the same owner renewing at once) is tried again at the next
      // renewal; the lease is lost only once it has lapsed by this holder's own clock.
      if (clock.now() >= expiresAt) lose({ operation: 'writer', expiresAt: new Date(expiresAt).toISOString() })
    }
  }

  const schedule = () => {
    timer = setTimeout(() => {
      renewing = renew().finally(() => {
        if (!stopped && !controller.signal.aborted) schedule()
      })
    }, ttlMs / RENEW_FRACTION)
    // A forgotten lease never keeps the process alive; its lapse frees the table.
    timer.unref()
  }
  schedule()

  const stop = () => {
    stopped = true
    clearTimeout(timer)
  }

  return {
    table: table.name,
    owner: request.owner,
    signal: controller.signal,
    detach: stop,
    release: async () => {
      stop()
      await renewing
      if (controller.signal.aborted) return
      try {
        const current = await store.getObjectVersion(key)
        const lease = current && readLease(current.body)
        if (lease?.owner !== request.owner) return
        const now = clock.now()
        await store.putObjectIfVersion(
          key,
          leaseDocument(table.name, request, acquiredAt, now, true),
          'application/json',
          current!.version,
        )
      } catch {
        // Not in the way of the work's own outcome: a lease that could not be given up lapses after ttlMs.
      }
    },
  }
}

/** The wait a run allows another writer: `export.timeouts.busyWaitSeconds`, within the time the run has left. */
export const leaseWaitMs = (
  busyWaitSeconds: number,
  remainingTimeMs: (() => number) | undefined,
  marginMs: number,
): number => {
  const configured = busyWaitSeconds * 1000
  return remainingTimeMs === undefined ? configured : Math.max(0, Math.min(configured, remainingTimeMs() - marginMs))
}

/** How a history operation (path/erase.ts, path/rewrite.ts) holds its table's lease. */
export interface HistoryLeaseClaim {
  /**
   * The owner of a fanned-out request, shared by its batches: joined when held, left to the next batch at the end.
   * @default a lease of the operation's own, given up at its end
   */
  readonly leaseOwner?: string | undefined
  /** Milliseconds the caller has left (a Lambda's): the wait for another writer stays within them. */
  readonly remainingTimeMs?: (() => number) | undefined
}

/** Runs a history operation's `work` on `table` under its lease, as `claim` asks; a wait is told to `telemetry`. */
export const withHistoryLease = <T>(
  store: WarehouseStore,
  table: Pick<TableConfig, 'id' | 'name'>,
  tuning: { readonly timeouts: { readonly busyWaitSeconds: number }; readonly deadlineMarginSeconds: number },
  claim: HistoryLeaseClaim & { readonly telemetry?: Pick<RunTelemetry, 'warn'> | undefined },
  operation: RunMode | 'convert',
  work: (lease: TableLease) => Promise<T>,
): Promise<T> =>
  withTableLease(
    store,
    table,
    {
      owner: claim.leaseOwner ?? `${operation}-${randomBytes(8).toString('hex')}`,
      shared: claim.leaseOwner !== undefined,
      operation,
      waitMs: leaseWaitMs(tuning.timeouts.busyWaitSeconds, claim.remainingTimeMs, tuning.deadlineMarginSeconds * 1000),
      onWait: (holder) => claim.telemetry?.warn(waitingLine(table.name, holder)),
    },
    work,
  )

/** What an operator reads while a run waits for another writer of the table. */
export const waitingLine = (table: string, holder: { readonly operation: string; readonly expiresAt: string }) =>
  `${table}: waiting for another ${holder.operation} of the table to finish (its lease runs to ${holder.expiresAt})`

/** Gives up `owner`'s lease on `table` (a fanned-out request's finish), unless another owner holds it by now. */
export const releaseTableLease = async (
  store: WarehouseStore,
  table: Pick<TableConfig, 'id' | 'name'>,
  owner: string,
): Promise<void> => {
  const current = await store.getObjectVersion(leaseKey(table.name))
  const lease = current && readLease(current.body)
  if (lease?.owner !== owner || lease.released === true) return
  const released = leaseDocument(
    table.name,
    { owner, operation: lease.operation as RunMode },
    lease.acquiredAt,
    0,
    true,
  )
  await store.putObjectIfVersion(leaseKey(table.name), released, 'application/json', current!.version).catch(
    // Taken over meanwhile: it is the new holder's now.
    (error: unknown) => {
      if (!(error instanceof WriteConflictError)) throw error
    },
  )
}
