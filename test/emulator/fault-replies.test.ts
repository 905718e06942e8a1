/** Fault injection, acted out by a real emulator on loopback and observed with fetch. */
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
}

async function fetchAll(path: string): Promise<Fetched> {
  const response = await fetch(`${emulator.baseUrl}${path}`, { headers: { token: DEMO_TOKEN } })
  const chunks: Uint8Array[] = []
  let bodyError: unknown
  try {
    for await (const chunk of response.body ?? []) {
      chunks.push(chunk)
    }
  } catch (error) {
    bodyError = error
  }
  return { status: response.status, headers: response.headers, body: Buffer.concat(chunks), bodyError }
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

/** The emulator's clock for timing faults: each wait is recorded and lasts until the test releases it. */
const gatedClock = () => {
  const waits: { ms: number; release: () => void }[] = []
  let requested: (() => void) | undefined
  const wait = (ms: number) =>
    new Promise<void>((release) => {
      waits.push({ ms, release })
      requested?.()
    })
  /** Resolves once the emulator has asked to wait `count` times in all. */
  const waitsRequested = (count: number) =>
    new Promise<void>((resolve) => {
      requested = () => waits.length >= count && resolve()
      requested()
    })
  return { wait, waits, waitsRequested }
}

describe('timing faults', () => {
  const clock = gatedClock()
  let timed: RunningEmulator
  beforeAll(async () => {
    timed = await startInventoryEmulator({ wait: clock.wait })
  })
  afterAll(() => timed.close())

  it('delays the response headers, then answers normally', async () => {
    timed.faults.script('1003', [{ kind: 'delay', ms: 200 }])
    let headersArrived = false
    const pending = fetch(`${timed.baseUrl}/rest/tables/1003/csv`, { headers: { token: DEMO_TOKEN } }).then(
      async (response) => {
        headersArrived = true
        return Buffer.from(await response.arrayBuffer())
      },
    )
    await clock.waitsRequested(1)
    expect(clock.waits.map((w) => w.ms)).toEqual([200])
    expect(headersArrived).toBe(false)
    clock.waits[0]!.release()
    expect(await pending).toEqual(normalCsv)
  })

  it('stalls after N bytes for the given time, then finishes the body normally', async () => {
    timed.faults.script('1003', [{ kind: 'stall', afterBytes: 1000, ms: 250 }])
    const response = await fetch(`${timed.baseUrl}/rest/tables/1003/csv`, { headers: { token: DEMO_TOKEN } })
    const reader = response.body!.getReader()
    const head: Uint8Array[] = []
    let received = 0
    while (received < 1000) {
      const { value } = await reader.read()
      head.push(value!)
      received += value!.byteLength
    }
    await clock.waitsRequested(2)
    // The emulator is waiting out the stall: exactly the first 1000 bytes have been sent.
    expect(clock.waits[1]!.ms).toBe(250)
    expect(received).toBe(1000)
    clock.waits[1]!.release()
    const rest: Uint8Array[] = []
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest.push(chunk.value)
    expect(Buffer.concat([...head, ...rest])).toEqual(normalCsv)
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
