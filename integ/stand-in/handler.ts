/**
 * The inventory-service stand-in as a Lambda function behind a function URL, for the integration test: it answers
 * `GET /rest/tables/{id}/csv` with the emulator's demo tables as they are on DEMO_DAY, and 401 unless the `token`
 * header equals the stand-in's secret. The secret is read on every request (no cache), so the test can replace the
 * token the service accepts and see the exporter's run fail as it would after a revocation.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager'
import { csvChunks } from '../../emulator/csv.ts'
import { demoTables } from '../../emulator/demo-tables.ts'
import type { GeneratedTable } from '../../emulator/tables.ts'

/** The environment the stack gives the function. */
export const StandInVariable = {
  /** ARN of the secret holding the one token the stand-in accepts. */
  TOKEN_SECRET_ARN: 'TOKEN_SECRET_ARN',
  /** The day (YYYY-MM-DD) the demo tables show; the test moves it forward between runs. */
  DEMO_DAY: 'DEMO_DAY',
  /** Rows of the devices table (the software table follows from it). */
  DEVICE_ROWS: 'DEVICE_ROWS',
} as const

/** The part of a function URL event the stand-in reads (payload format 2.0). */
export interface FunctionUrlRequest {
  readonly rawPath: string
  readonly headers?: Readonly<Record<string, string | undefined>>
  readonly requestContext: { readonly http: { readonly method: string } }
}

export interface FunctionUrlResponse {
  readonly statusCode: number
  readonly headers: Record<string, string>
  readonly body: string
}

export interface StandInOptions {
  /** The token the service accepts right now. */
  readonly acceptedToken: () => Promise<string>
  /** The day the tables show. */
  readonly day: string
  readonly deviceRows: number
}

const TABLE_PATH = /^\/rest\/tables\/([^/]+)\/csv$/

const json = (statusCode: number, body: unknown): FunctionUrlResponse => ({
  statusCode,
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(body),
})

/** Answers one request as the service would (CSV exports only: the test configures csv tables). */
export const answer = async (request: FunctionUrlRequest, options: StandInOptions): Promise<FunctionUrlResponse> => {
  if (request.requestContext.http.method !== 'GET') return json(405, { error: 'method not allowed' })
  const match = TABLE_PATH.exec(request.rawPath)
  if (match === null) return json(404, { error: `no route ${request.rawPath}` })
  // Function URLs lower-case header names; the service answers 401 for a missing or unknown token alike.
  const token = request.headers?.token
  if (token === undefined || token !== (await options.acceptedToken())) return json(401, { error: 'invalid token' })
  const tables = demoTables({ date: options.day, rows: { devices: options.deviceRows } })
  const table = tables.find(
    (candidate): candidate is GeneratedTable => candidate.id === match[1] && 'rows' in candidate,
  )
  if (table === undefined) return json(404, { error: `table ${match[1]} not found` })
  const body = Buffer.concat([...csvChunks(table)]).toString('utf8')
  return {
    statusCode: 200,
    headers: {
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename="${table.id}.csv"`,
    },
    body,
  }
}

const secrets = new SecretsManagerClient({})

/** The deployed entry point. */
export const handler = async (request: FunctionUrlRequest): Promise<FunctionUrlResponse> =>
  answer(request, {
    acceptedToken: async () => {
      const value = await secrets.send(
        new GetSecretValueCommand({ SecretId: process.env[StandInVariable.TOKEN_SECRET_ARN] }),
      )
      return value.SecretString ?? ''
    },
    day: process.env[StandInVariable.DEMO_DAY] ?? '2026-11-20',
    deviceRows: Number(process.env[StandInVariable.DEVICE_ROWS] ?? '200'),
  })
