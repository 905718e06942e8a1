/**
 * The fault matrix, the service's faults: HTTP statuses, resets, stalls and trickles, bodies cut short (a service
 * that cannot be reached and a token revoked halfway are in unreachable.test.ts). Every case first exports the
 * same date successfully, then runs again under the fault and checks the exit status, the run record, what the
 * operator reads on stderr, that nothing partial is visible, that the previous good data is byte for byte intact,
 * and that the token (a canary) appears in nothing the run printed or wrote. Malformed bodies are in body.test.ts.
 */
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { query } from '../../support/duckdb.ts'
import {
  ASSET_ROWS,
  ASSETS,
  always,
  assetsTable,
  CUT,
  DATE,
  emulator,
  expectFailureKeepsData,
  type FailingCase,
  type FaultCase,
  MAX_ATTEMPTS,
  PUBLISHED,
  replaceAssets,
  requestsTo,
  rowsIn,
  runUnderFault,
  script,
  useFaultMatrix,
  visibleObjects,
} from '../../support/fault-matrix.ts'

useFaultMatrix()

const failing: readonly FailingCase[] = [
  {
    name: '400 Bad Request',
    arrange: always(ASSETS.id, { kind: 'status', status: 400 }),
    expected: { code: 'HTTP_CLIENT_ERROR', failureClass: 'protocol', status: 400, requests: 1 },
  },
  {
    name: '401 on the download',
    arrange: always(ASSETS.id, { kind: 'status', status: 401 }),
    expected: { code: 'AUTH_REJECTED', failureClass: 'auth', status: 401, requests: 1, message: /token/ },
  },
  {
    name: '403 on the download',
    arrange: always(ASSETS.id, { kind: 'status', status: 403 }),
    expected: { code: 'PERMISSION_DENIED', failureClass: 'auth', status: 403, requests: 1, message: /permission/ },
  },
  {
    name: '404 for a table id the service does not know',
    arrange: () => {
      emulator.removeTable(ASSETS.id)
      return () => emulator.setTable(assetsTable())
    },
    expected: { code: 'TABLE_NOT_FOUND', failureClass: 'not_found', status: 404, requests: 1 },
  },
  {
    name: '404 for a table whose export is disabled',
    arrange: replaceAssets({ ...assetsTable(), exportEnabled: false }),
    expected: { code: 'TABLE_NOT_FOUND', failureClass: 'not_found', status: 404, requests: 1, message: /disabled/ },
  },
  {
    name: '405 Method Not Allowed',
    arrange: always(ASSETS.id, { kind: 'status', status: 405 }),
    expected: { code: 'HTTP_CLIENT_ERROR', failureClass: 'protocol', status: 405, requests: 1 },
  },
  {
    name: '408 Request Timeout every time',
    arrange: always(ASSETS.id, { kind: 'status', status: 408 }),
    expected: { code: 'SERVER_ERROR', failureClass: 'server', status: 408, requests: MAX_ATTEMPTS },
  },
  {
    name: '409 Conflict',
    arrange: always(ASSETS.id, { kind: 'status', status: 409 }),
    expected: { code: 'HTTP_CLIENT_ERROR', failureClass: 'protocol', status: 409, requests: 1 },
  },
  {
    name: '410 Gone',
    arrange: always(ASSETS.id, { kind: 'status', status: 410 }),
    expected: { code: 'TABLE_NOT_FOUND', failureClass: 'not_found', status: 410, requests: 1 },
  },
  {
    name: '302 redirect to a login page',
    arrange: always(ASSETS.id, { kind: 'status', status: 302, headers: { Location: '/login' } }),
    expected: {
      code: 'UNEXPECTED_RESPONSE',
      failureClass: 'protocol',
      status: 302,
      requests: 1,
      message: /redirected/,
    },
  },
  {
    name: '500 that never heals',
    arrange: always(ASSETS.id, { kind: 'status', status: 500 }),
    expected: { code: 'SERVER_ERROR', failureClass: 'server', status: 500, requests: MAX_ATTEMPTS },
  },
  {
    name: '502 that never heals',
    arrange: always(ASSETS.id, { kind: 'status', status: 502 }),
    expected: { code: 'SERVER_ERROR', failureClass: 'server', status: 502, requests: MAX_ATTEMPTS },
  },
  {
    name: '503 that never heals',
    arrange: always(ASSETS.id, { kind: 'status', status: 503, retryAfter: '0' }),
    expected: { code: 'SERVER_ERROR', failureClass: 'server', status: 503, requests: MAX_ATTEMPTS },
  },
  {
    name: '504 that never heals',
    arrange: always(ASSETS.id, { kind: 'status', status: 504 }),
    expected: { code: 'SERVER_ERROR', failureClass: 'server', status: 504, requests: MAX_ATTEMPTS },
  },
  {
    name: '429 with a Retry-After beyond the cap',
    arrange: always(ASSETS.id, { kind: 'status', status: 429, retryAfter: '3600' }),
    expected: { code: 'RATE_LIMITED', failureClass: 'server', status: 429, requests: 1, message: /3600 s/ },
  },
  {
    name: '503 with an HTTP-date Retry-After beyond the cap',
    arrange: () => {
      emulator.faults.always(ASSETS.id, {
        kind: 'status',
        status: 503,
        retryAfter: new Date(Date.now() + 3_600_000).toUTCString(),
      })
      return undefined
    },
    expected: { code: 'SERVER_ERROR', failureClass: 'server', status: 503, requests: 1, message: /Retry-After/ },
  },
  {
    name: 'a reset before the headers, every time',
    arrange: always(ASSETS.id, { kind: 'reset' }),
    expected: { code: 'NETWORK_ERROR', failureClass: 'network', requests: MAX_ATTEMPTS },
  },
  {
    name: 'a reset mid-body, every time',
    arrange: always(ASSETS.id, { kind: 'reset', afterBytes: CUT.midRow }),
    expected: { code: 'BODY_TRUNCATED', failureClass: 'protocol', status: 200, requests: MAX_ATTEMPTS },
  },
  {
    name: 'a stall mid-body longer than the idle timeout, every time',
    arrange: always(ASSETS.id, { kind: 'stall', afterBytes: CUT.midRow, ms: 20_000 }),
    tuning: { retry: { maxAttempts: 2 } },
    expected: { code: 'TIMEOUT', failureClass: 'network', status: 200, requests: 2, message: /stalled/ },
  },
  {
    name: 'a body that trickles a byte at a time, faster than the idle timeout, past the table budget',
    arrange: always(ASSETS.id, { kind: 'trickle', afterBytes: CUT.midRow, everyMs: 200 }),
    tuning: { timeouts: { tableSeconds: 5 } },
    expected: {
      code: 'DEADLINE_EXCEEDED',
      failureClass: 'deadline',
      status: 200,
      requests: 1,
      message: /export\.timeouts\.tableSeconds \(5 s\)/,
    },
  },
  {
    name: 'headers slower than the idle timeout, every time',
    arrange: always(ASSETS.id, { kind: 'delay', ms: 20_000 }),
    tuning: { retry: { maxAttempts: 2 } },
    expected: { code: 'TIMEOUT', failureClass: 'network', requests: 2 },
  },
  ...(
    [
      ['in the header line', CUT.inHeader],
      ['mid-row', CUT.midRow],
      ['inside a quoted field', CUT.inQuotedField],
      ['at a row boundary', CUT.atRowBoundary],
    ] as const
  ).flatMap(([where, afterBytes]) =>
    [true, false].map((advertiseLength) => ({
      name: `a body cut ${where} ${advertiseLength ? 'short of its Content-Length' : 'in a chunked response'}`,
      arrange: always(ASSETS.id, { kind: 'truncate', afterBytes, advertiseLength }),
      expected: {
        code: 'BODY_TRUNCATED',
        failureClass: 'protocol',
        status: 200,
        requests: MAX_ATTEMPTS,
        message: /cut off|ended after/,
      } as const,
    })),
  ),
  {
    name: '202 Accepted (an export still being prepared)',
    arrange: always(ASSETS.id, { kind: 'status', status: 202 }),
    expected: {
      code: 'UNEXPECTED_RESPONSE',
      failureClass: 'protocol',
      status: 202,
      requests: 1,
      message: /instead of 200/,
    },
  },
  {
    name: '204 No Content',
    arrange: always(ASSETS.id, { kind: 'status', status: 204 }),
    expected: {
      code: 'UNEXPECTED_RESPONSE',
      failureClass: 'protocol',
      status: 204,
      requests: 1,
      message: /instead of 200/,
    },
  },
  {
    name: 'a token check answered with 2 MiB',
    arrange: always('me', { kind: 'status', status: 200, body: `{"username":"${'x'.repeat(2 * 1024 * 1024)}"}` }),
    expected: { code: 'BODY_TOO_LARGE', failureClass: 'protocol', status: 200, requests: 0, runLevel: true },
  },
  {
    name: 'a 401 on the token check',
    arrange: always('me', { kind: 'status', status: 401 }),
    expected: { code: 'AUTH_REJECTED', failureClass: 'auth', status: 401, requests: 0, runLevel: true },
  },
  {
    name: 'an HTML page with 200 on the token check',
    arrange: always('me', { kind: 'html200' }),
    expected: { code: 'UNEXPECTED_RESPONSE', failureClass: 'protocol', status: 200, requests: 0, runLevel: true },
  },
]

describe('the runner under a fault that persists', () => {
  it.each(failing)('$name: fails the table, keeps the previous data, tells the operator', expectFailureKeepsData)
})

const healing: readonly (FaultCase & { readonly attempts: number; readonly retryNotice: RegExp })[] = [
  {
    name: '500 that heals on the second attempt',
    arrange: script(ASSETS.id, { kind: 'status', status: 500 }),
    attempts: 2,
    retryNotice: /attempt 1 failed \(SERVER_ERROR HTTP 500\), retrying in 0\.0 s/,
  },
  {
    name: '429 with Retry-After in seconds',
    arrange: script(ASSETS.id, { kind: 'status', status: 429, retryAfter: '1' }),
    attempts: 2,
    retryNotice: /attempt 1 failed \(RATE_LIMITED HTTP 429\), retrying in 1\.0 s/,
  },
  {
    name: '503 with Retry-After as an HTTP date',
    arrange: () => {
      emulator.faults.script(ASSETS.id, [
        { kind: 'status', status: 503, retryAfter: new Date(Date.now() + 1500).toUTCString() },
      ])
      return undefined
    },
    attempts: 2,
    retryNotice: /attempt 1 failed \(SERVER_ERROR HTTP 503\), retrying in [0-2]\.\d s/,
  },
  {
    name: '408 once',
    arrange: script(ASSETS.id, { kind: 'status', status: 408 }),
    attempts: 2,
    retryNotice: /attempt 1 failed \(SERVER_ERROR HTTP 408\)/,
  },
  {
    name: 'a reset before the headers, once',
    arrange: script(ASSETS.id, { kind: 'reset' }),
    attempts: 2,
    retryNotice: /attempt 1 failed \(NETWORK_ERROR\)/,
  },
  {
    name: 'a reset mid-body, once',
    arrange: script(ASSETS.id, { kind: 'reset', afterBytes: CUT.midRow }),
    attempts: 2,
    retryNotice: /attempt 1 failed \(BODY_TRUNCATED HTTP 200\)/,
  },
  {
    name: 'a stall mid-body, once',
    arrange: script(ASSETS.id, { kind: 'stall', afterBytes: CUT.midRow, ms: 20_000 }),
    attempts: 2,
    retryNotice: /attempt 1 failed \(TIMEOUT\)/,
  },
  {
    name: 'a body cut inside a quoted field, once',
    arrange: script(ASSETS.id, { kind: 'truncate', afterBytes: CUT.inQuotedField, advertiseLength: true }),
    attempts: 2,
    retryNotice: /attempt 1 failed \(BODY_TRUNCATED HTTP 200\)/,
  },
  {
    name: 'a reset in the middle of the token check answer, once',
    arrange: script('me', { kind: 'reset', afterBytes: 10 }),
    attempts: 1,
    retryNotice: /^token check: attempt 1 failed \(BODY_TRUNCATED HTTP 200\)/m,
  },
]

describe('the runner under a fault that heals', () => {
  it.each(healing)('$name: retries, exits 0 and replaces the data whole', async (fault) => {
    const { ws, result, assets, record, since } = await runUnderFault(fault)

    expect(result.exitCode, result.stderr).toBe(0)
    expect(assets).toMatchObject({ status: 'succeeded', attempts: fault.attempts, rows: ASSET_ROWS })
    expect(requestsTo(ASSETS.id, since)).toBe(fault.attempts)
    expect(result.stderr).toMatch(fault.retryNotice)
    // A retry of the table's download is told by the table's name, as in the summary.
    if (!fault.retryNotice.source.includes('token check')) {
      expect(result.stderr).toMatch(new RegExp(`^${ASSETS.name}: attempt 1 failed`, 'm'))
    }
    expect(await visibleObjects(ws.out)).toEqual(PUBLISHED)
    expect(await readdir(path.join(ws.out, '_tmp'))).toEqual([])
    expect(await rowsIn(ws, ASSETS.name)).toEqual({ rows: ASSET_ROWS, runs: 1 })
    const [lineage] = await query(
      `SELECT DISTINCT _export_run_id AS run FROM '${path.join(ws.out, ASSETS.name, `dt=${DATE}`, 'data.parquet')}'`,
    )
    expect(lineage!.run).toBe(record.runId)
  })
})
