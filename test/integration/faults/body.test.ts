/**
 * The fault matrix, malformed bodies: a 200 whose body is not the table (a CSV that ends inside a quoted field,
 * an HTML login page, a JSON error, nothing at all, a body with neither Content-Length nor chunked framing).
 * Each fails the table as a coded protocol or data failure on the first request, keeps the previous good data
 * byte for byte, and leaks the token (a canary) nowhere; the same checks as the service's faults in source.test.ts.
 */
import { describe, it } from 'vitest'
import {
  ASSETS,
  ASSETS_CSV,
  always,
  assetsTable,
  CUT,
  expectFailureKeepsData,
  type FailingCase,
  replaceAssets,
  useFaultMatrix,
} from '../../support/fault-matrix.ts'

useFaultMatrix()

const LOGIN_PAGE_AS_CSV = '<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>Sign in</body></html>\n'

const failing: readonly FailingCase[] = [
  {
    name: 'a complete response whose CSV ends inside a quoted field',
    arrange: replaceAssets(assetsTable(ASSETS_CSV.slice(0, CUT.inQuotedField))),
    expected: { code: 'CSV_MALFORMED', failureClass: 'data', requests: 1, message: /quote/ },
  },
  {
    name: 'an HTML login page with 200',
    arrange: always(ASSETS.id, { kind: 'html200' }),
    expected: { code: 'NOT_CSV', failureClass: 'protocol', status: 200, requests: 1, message: /text\/html/ },
  },
  {
    name: 'an HTML page with 200 labelled text/csv',
    arrange: replaceAssets(assetsTable(LOGIN_PAGE_AS_CSV)),
    expected: { code: 'NOT_CSV', failureClass: 'protocol', status: 200, requests: 1, message: /HTML/ },
  },
  {
    name: 'a JSON error object with 200',
    arrange: always(ASSETS.id, { kind: 'json200' }),
    expected: { code: 'NOT_CSV', failureClass: 'protocol', status: 200, requests: 1, message: /json/i },
  },
  {
    name: 'a JSON error document with 200 labelled text/csv',
    arrange: replaceAssets(assetsTable('{"error":"Export failed","code":"EXPORT_INTERNAL_ERROR"}')),
    expected: { code: 'NOT_CSV', failureClass: 'protocol', status: 200, requests: 1, message: /JSON/ },
  },
  {
    name: 'an empty 200',
    arrange: always(ASSETS.id, { kind: 'empty200' }),
    expected: { code: 'EMPTY_BODY', failureClass: 'data', requests: 1, message: /empty/ },
  },
  ...(
    [
      ['whole', undefined],
      ['cut at a row boundary', CUT.atRowBoundary],
    ] as const
  ).map(([how, afterBytes]) => ({
    name: `a 200 with neither Content-Length nor chunked encoding, ${how}`,
    arrange: always(ASSETS.id, { kind: 'unframed', ...(afterBytes === undefined ? {} : { afterBytes }) }),
    expected: {
      code: 'BODY_UNFRAMED',
      failureClass: 'protocol',
      status: 200,
      requests: 1,
      message: /neither Content-Length nor chunked/,
    } as const,
  })),
]

describe('the runner given a malformed body', () => {
  it.each(failing)('$name: fails the table, keeps the previous data, tells the operator', expectFailureKeepsData)
})
