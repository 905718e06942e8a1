/**
 * The stand-in the integration test deploys behind a function URL (integ/stand-in/handler.ts): it answers as the
 * service does, 401 without the accepted token, the demo tables' CSV with it, and they change with its day.
 */
import { parse } from 'csv-parse/sync'
import { describe, expect, it } from 'vitest'
import { DemoTableId } from '../../emulator/tables.ts'
import { DEVICE_ROWS, FIRST_DATE, rowCount, SECOND_DATE } from '../../integ/expected.ts'
import { answer, type FunctionUrlRequest } from '../../integ/stand-in/handler.ts'

const TOKEN = 'accepted0token'
const request = (path: string, token?: string): FunctionUrlRequest => ({
  rawPath: path,
  headers: token === undefined ? {} : { token },
  requestContext: { http: { method: 'GET' } },
})
const options = (day: string) => ({ acceptedToken: async () => TOKEN, day, deviceRows: DEVICE_ROWS })

describe('the stand-in behind a function URL', () => {
  it.each([
    ['no token header', undefined],
    ['another token', 'integ0test0rejects0this0exporter0token0'],
  ])('answers 401 to a request with %s', async (_what, token) => {
    const response = await answer(request(`/rest/tables/${DemoTableId.DEVICES}/csv`, token), options(FIRST_DATE))

    expect(response.statusCode).toBe(401)
    expect(response.body).not.toContain('Device ID')
  })

  it('serves a demo table as CSV, header first, one record per row the test expects', async () => {
    const response = await answer(request(`/rest/tables/${DemoTableId.DEVICES}/csv`, TOKEN), options(FIRST_DATE))
    const records = parse(response.body) as string[][]

    expect(response.statusCode).toBe(200)
    expect(response.headers['Content-Type']).toBe('text/csv; charset=utf-8')
    expect(records[0]?.slice(0, 2)).toEqual(['Device ID', 'Hostname'])
    expect(records).toHaveLength(rowCount(FIRST_DATE, DemoTableId.DEVICES) + 1)
  })

  it('serves the devices as they are on its day, so the second run sees the demo’s changes', async () => {
    const first = await answer(request(`/rest/tables/${DemoTableId.DEVICES}/csv`, TOKEN), options(FIRST_DATE))
    const second = await answer(request(`/rest/tables/${DemoTableId.DEVICES}/csv`, TOKEN), options(SECOND_DATE))

    expect(second.body).not.toBe(first.body)
  })

  it('answers 404 for a table it does not have and for other paths', async () => {
    expect((await answer(request('/rest/tables/9999/csv', TOKEN), options(FIRST_DATE))).statusCode).toBe(404)
    expect((await answer(request('/rest/usermanager/me', TOKEN), options(FIRST_DATE))).statusCode).toBe(404)
  })
})
