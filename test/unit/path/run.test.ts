/**
 * The run's one retry loop per table, on an injected clock: what is retried, how long it waits (never for real),
 * the total budget, and attempts counted once. The source is in memory; the HTTP side is in the fault matrix.
 */
import os from 'node:os'
import { describe, expect, it } from 'vitest'
import type { TableConfig } from '../../../functions/export/core/config.ts'
import { parseConfigWithoutSource } from '../../../functions/export/core/config.ts'
import { ProtocolError, ServerError } from '../../../functions/export/core/errors.ts'
import { runExport } from '../../../functions/export/path/run.ts'
import type { RetryEvent } from '../../../functions/export/path/telemetry.ts'
import { FolderWarehouseStore } from '../../../functions/export/publish/fs.ts'
import type { RetryClock } from '../../../functions/export/source/retry.ts'
import type { TableBytes, TableSource } from '../../../functions/export/source/table-source.ts'
import { tempDir } from '../../support/cli.ts'
import { MemorySource } from '../../support/memory-source.ts'
import { silentTelemetry } from '../../support/telemetry.ts'

const CSV = 'Asset ID,Hostname\n1,alpha\n2,beta\n'

/** A clock that never waits: `sleep` moves `now` forward and is recorded. */
const fakeClock = (random = 0.5) => {
  let now = 0
  const sleeps: number[] = []
  const clock: RetryClock = {
    now: () => now,
    sleep: async (ms) => {
      sleeps.push(ms)
      now += ms
    },
    random: () => random,
  }
  return { clock, sleeps }
}

/** Fails the first opens as scripted (before the bytes, or with a body that breaks off), then serves the CSV. */
const flakySource = (script: readonly ('before' | 'mid-body')[]): TableSource & { opens: number } => {
  const memory = new MemorySource([{ id: '1', bytes: CSV }])
  const source = {
    mode: memory.mode,
    warnings: [],
    opens: 0,
    check: () => memory.check(),
    open: async (table: TableConfig, request: Parameters<TableSource['open']>[1]): Promise<TableBytes> => {
      const failure = script[source.opens++]
      if (failure === 'before') {
        throw new ServerError({
          tableId: table.id,
          status: 503,
          what: 'GET /rest/tables/1/csv',
          attempts: request.attempt,
        })
      }
      const bytes = await memory.open(table)
      if (failure !== 'mid-body') return bytes
      async function* cut() {
        yield Buffer.from('Asset ID,Host')
        throw new ProtocolError('BODY_TRUNCATED', { tableId: table.id, status: 200, reason: 'cut off after 13 bytes' })
      }
      return { ...bytes, body: cut(), received: () => 13 }
    },
  }
  return source
}

const run = async (source: TableSource, clock: RetryClock, retry: Record<string, number> = {}) => {
  const retries: RetryEvent[] = []
  const config = parseConfigWithoutSource({
    tables: [{ id: '1', name: 'assets' }],
    export: { retry: { maxAttempts: 3, baseDelayMs: 1000, maxDelayMs: 8000, ...retry } },
  })
  const record = await runExport(
    config,
    {
      source,
      store: new FolderWarehouseStore(await tempDir()),
      telemetry: { ...silentTelemetry, retried: (event) => retries.push(event) },
      spoolDirectory: os.tmpdir(),
      clock,
    },
    { exportDate: '2026-03-14' },
  )
  return { outcome: record.tables[0]!, retries }
}

describe('the run retrying a table', () => {
  it('retries a 503 and a body cut off mid-way as whole attempts, waiting only on the injected clock', async () => {
    const { clock, sleeps } = fakeClock(0.5)
    const source = flakySource(['before', 'mid-body'])
    const { outcome, retries } = await run(source, clock)
    expect(outcome).toMatchObject({ status: 'succeeded', attempts: 3, httpStatus: 200, rows: 2 })
    expect(source.opens).toBe(3)
    // Full jitter at random() = 0.5: half of 1000 ms, then half of 2000 ms.
    expect(sleeps).toEqual([500, 1000])
    expect(retries.map((r) => [r.table, r.attempt, r.delayMs, r.error.code])).toEqual([
      ['assets', 1, 500, 'SERVER_ERROR'],
      ['assets', 2, 1000, 'BODY_TRUNCATED'],
    ])
  })

  it('gives up when the next wait would pass export.retry.totalBudgetSeconds, counting the attempts made', async () => {
    const { clock, sleeps } = fakeClock(0.99)
    const source = flakySource(['before', 'before', 'before'])
    const { outcome } = await run(source, clock, { maxAttempts: 5, baseDelayMs: 4000, totalBudgetSeconds: 5 })
    // 3960 ms fits the 5 s budget; the next wait (7920 ms) would not.
    expect(sleeps).toEqual([3960])
    expect(outcome).toMatchObject({ status: 'failed', attempts: 2, error: { code: 'SERVER_ERROR', status: 503 } })
    expect(outcome.error?.message).toContain('after 2 attempts')
  })

  it('stops at export.retry.maxAttempts and records the last failure with the bytes it received', async () => {
    const { clock, sleeps } = fakeClock(0)
    const source = flakySource(['mid-body', 'mid-body', 'mid-body'])
    const { outcome } = await run(source, clock)
    expect(sleeps).toEqual([0, 0])
    expect(outcome).toMatchObject({
      status: 'failed',
      attempts: 3,
      httpStatus: 200,
      bytesReceived: 13,
      error: { code: 'BODY_TRUNCATED' },
    })
  })

  it('does not retry a failure before the bytes that cannot heal', async () => {
    const { clock, sleeps } = fakeClock()
    const source = new MemorySource([])
    const { outcome } = await run(source, clock)
    expect(sleeps).toEqual([])
    expect(outcome).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'TABLE_NOT_FOUND' } })
    expect(source.opened).toEqual(['1'])
  })
})
