/** Fault injection, acted out by a real emulator on loopback and observed with fetch. */
import { performance } from 'node:perf_hooks'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'

let emulator: RunningEmulator
let normalCsv: Buffer
beforeAll(async () => {
  emulator = await startInventoryEmulator()
  normalCsv = (await fetchAll('/rest/tables/1003/csv')).body
})
afterAll(() => emulator.close())
beforeEach(() => emulator.faults.clear())

interface Fetched {
  status: number
  headers: Headers
  body: Buffer
  /** Why reading the body failed, if it did. */
  bodyError: unknown
  /** performance.now() and the byte total after each chunk. */
  arrivals: { at: number; total: number }[]
}

async function fetchAll(path: string): Promise<Fetched> {
  const response = await fetch(`${emulator.baseUrl}${path}`, { headers: { token: DEMO_TOKEN } })
  const chunks: Uint8Array[] = []
  const arrivals: Fetched['arrivals'] = []
  let total = 0
  let bodyError: unknown
  try {
    for await (const chunk of response.body ?? []) {
      chunks.push(chunk)
      total += chunk.byteLength
      arrivals.push({ at: performance.now(), total })
    }
  } catch (error) {
    bodyError = error
  }
  return { status: response.status, headers: response.headers, body: Buffer.concat(chunks), bodyError, arrivals }
}

describe('status faults', () => {
  it('answers the scripted status with Retry-After in seconds and a JSON error, then serves normally', async () => {
    emulator.faults.script('1003', [{ kind: 'status', status: 503, retryAfter: '7' }])
    const failed = await fetchAll('/rest/tables/1003/csv')
    expect(failed.status).toBe(503)
    expect(failed.headers.get('retry-after')).toBe('7')
    expect(JSON.parse(failed.body.toString())).toEqual({ error: 'Service Unavailable' })
    expect((await fetchAll('/rest/tables/1003/csv')).body).toEqual(normalCsv)
  })

  it('answers the scripted status with Retry-After as an HTTP date, a custom body and custom headers', async () => {
    const retryAfter = 'Wed, 21 Oct 2026 07:28:00 GMT'
    emulator.faults.script('me', [
      { kind: 'status', status: 429, retryAfter, body: 'slow down', headers: { 'X-RateLimit-Remaining': '0' } },
    ])
    const failed = await fetchAll('/rest/usermanager/me')
    expect(failed.status).toBe(429)
    expect(failed.headers.get('retry-after')).toBe(retryAfter)
    expect(failed.headers.get('x-ratelimit-remaining')).toBe('0')
    expect(failed.body.toString()).toBe('slow down')
  })
})

describe('timing faults', () => {
  it('delays the response headers, then answers normally', async () => {
    emulator.faults.script('1003', [{ kind: 'delay', ms: 200 }])
    const started = performance.now()
    const delayed = await fetchAll('/rest/tables/1003/csv')
    expect(delayed.arrivals[0]!.at - started).toBeGreaterThanOrEqual(195)
    expect(delayed.body).toEqual(normalCsv)
  })

  it('stalls after N bytes for the given time, then finishes the body normally', async () => {
    emulator.faults.script('1003', [{ kind: 'stall', afterBytes: 1000, ms: 250 }])
    const stalled = await fetchAll('/rest/tables/1003/csv')
    expect(stalled.bodyError).toBeUndefined()
    expect(stalled.body).toEqual(normalCsv)
    const beforeGap = stalled.arrivals.findIndex((arrival) => arrival.total >= 1000)
    expect(stalled.arrivals[beforeGap]!.total).toBe(1000)
    expect(stalled.arrivals[beforeGap + 1]!.at - stalled.arrivals[beforeGap]!.at).toBeGreaterThanOrEqual(245)
  })
})

describe('connection faults', () => {
  it('truncates after N bytes while advertising the full Content-Length', async () => {
    emulator.faults.script('1003', [{ kind: 'truncate', afterBytes: 5000, advertiseLength: true }])
    const cut = await fetchAll('/rest/tables/1003/csv')
    expect(cut.status).toBe(200)
    expect(cut.headers.get('content-length')).toBe(String(normalCsv.byteLength))
    expect(cut.body).toEqual(normalCsv.subarray(0, 5000))
    expect(cut.bodyError).toBeInstanceOf(Error)
  })

  it('truncates a chunked body after N bytes without a Content-Length', async () => {
    emulator.faults.script('1003', [{ kind: 'truncate', afterBytes: 70_000 }])
    const cut = await fetchAll('/rest/tables/1003/csv')
    expect(cut.headers.get('content-length')).toBeNull()
    expect(cut.body).toEqual(normalCsv.subarray(0, 70_000))
    expect(cut.bodyError).toBeInstanceOf(Error)
  })

  it('resets the connection before the response headers', async () => {
    emulator.faults.script('1003', [{ kind: 'reset' }])
    await expect(
      fetch(`${emulator.baseUrl}/rest/tables/1003/csv`, { headers: { token: DEMO_TOKEN } }),
    ).rejects.toThrow()
    expect(emulator.requests.at(-1)?.status).toBe(0)
  })

  it('resets the connection in the middle of the body', async () => {
    emulator.faults.script('1003', [{ kind: 'reset', afterBytes: 123 }])
    const cut = await fetchAll('/rest/tables/1003/csv')
    expect(cut.status).toBe(200)
    expect(cut.body).toEqual(normalCsv.subarray(0, 123))
    expect(cut.bodyError).toBeInstanceOf(Error)
  })
})

describe('wrong-content faults', () => {
  it('answers 200 with an HTML login page instead of the CSV', async () => {
    emulator.faults.script('1003', [{ kind: 'html200' }])
    const page = await fetchAll('/rest/tables/1003/csv')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(page.body.toString()).toMatch(/^<!DOCTYPE html>[\s\S]*<form/)
  })

  it('answers 200 with a JSON error object instead of the CSV', async () => {
    emulator.faults.script('1003', [{ kind: 'json200' }])
    const json = await fetchAll('/rest/tables/1003/csv')
    expect(json.status).toBe(200)
    expect(json.headers.get('content-type')).toMatch(/^application\/json/)
    expect(JSON.parse(json.body.toString())).toMatchObject({ error: expect.any(String) })
  })

  it('answers 200 text/csv with an empty body', async () => {
    emulator.faults.script('1003', [{ kind: 'empty200' }])
    const empty = await fetchAll('/rest/tables/1003/csv')
    expect(empty.status).toBe(200)
    expect(empty.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    expect(empty.headers.get('content-length')).toBe('0')
    expect(empty.body.byteLength).toBe(0)
  })
})

describe('fault scripts', () => {
  it('consumes a scripted sequence in order, one fault per request, then serves normally', async () => {
    emulator.faults.script('1003', [
      { kind: 'status', status: 503 },
      { kind: 'status', status: 500 },
      { kind: 'html200' },
    ])
    const answers = []
    for (let i = 0; i < 4; i++) {
      const { status, headers } = await fetchAll('/rest/tables/1003/csv')
      answers.push(`${status} ${headers.get('content-type')}`)
    }
    expect(answers).toEqual([
      '503 application/json; charset=utf-8',
      '500 application/json; charset=utf-8',
      '200 text/html; charset=utf-8',
      '200 text/csv; charset=utf-8',
    ])
  })

  it('applies an always fault to every request to its target until cleared', async () => {
    emulator.faults.always('me', { kind: 'status', status: 502 })
    expect((await fetchAll('/rest/usermanager/me')).status).toBe(502)
    expect((await fetchAll('/rest/usermanager/me')).status).toBe(502)
    expect((await fetchAll('/rest/tables/1003/csv')).status).toBe(200)
    emulator.faults.clear()
    expect((await fetchAll('/rest/usermanager/me')).status).toBe(200)
  })

  it('applies a fault scripted for * to whichever request comes next', async () => {
    emulator.faults.script('*', [{ kind: 'status', status: 504 }])
    expect((await fetchAll('/rest/usermanager/me')).status).toBe(504)
    expect((await fetchAll('/rest/tables/1003/csv')).status).toBe(200)
  })
})

describe('closing', () => {
  it('closes promptly while a response is stalled', async () => {
    const other = await startInventoryEmulator()
    other.faults.always('1003', { kind: 'stall', afterBytes: 10, ms: 600_000 })
    const response = await fetch(`${other.baseUrl}/rest/tables/1003/csv`, { headers: { token: DEMO_TOKEN } })
    const reader = response.body!.getReader()
    expect((await reader.read()).value?.byteLength).toBe(10)
    await other.close()
    await expect(reader.read()).rejects.toThrow()
  })
})

describe('the request log', () => {
  it('records method, path, token header and status of every request', async () => {
    const before = emulator.requests.length
    await fetchAll('/rest/tables/1003/csv?page=1')
    await fetch(`${emulator.baseUrl}/rest/usermanager/me`)
    expect(emulator.requests.slice(before)).toEqual([
      { method: 'GET', path: '/rest/tables/1003/csv?page=1', token: DEMO_TOKEN, status: 200, at: expect.any(Date) },
      { method: 'GET', path: '/rest/usermanager/me', token: undefined, status: 401, at: expect.any(Date) },
    ])
  })
})
