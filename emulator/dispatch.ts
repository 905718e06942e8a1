/** Answers one request: record it, act out its fault, authenticate, then serve the route. */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { authenticate, mayRead } from './auth.ts'
import type { Wait } from './body-writer.ts'
import { replyExport } from './export-reply.ts'
import { actOutLeadingFault } from './fault-replies.ts'
import type { FaultQueue } from './faults.ts'
import { openApiDocument } from './openapi.ts'
import { type Exchange, type RecordedRequest, replyError, replyJson } from './reply.ts'
import { faultTargetOf, type Route, routeOf } from './routes.ts'
import type { SavedTable } from './tables.ts'
import type { UpstreamChanges } from './upstream-changes.ts'
import type { EmulatorUser } from './users.ts'

/** What the running emulator knows; tests change it through RunningEmulator. */
export interface EmulatorState {
  readonly baseUrl: () => string
  readonly tables: Map<string, SavedTable>
  readonly usersByToken: ReadonlyMap<string, EmulatorUser>
  readonly revokedTokens: Set<string>
  readonly faults: FaultQueue
  readonly upstream: UpstreamChanges
  readonly requests: RecordedRequest[]
  /** How delay, stall and trickle faults wait (EmulatorOptions.wait). */
  readonly wait?: Wait | undefined
}

const DEFAULT_ROLES = ['api'] as const

const serve = async (state: EmulatorState, exchange: Exchange, route: Route): Promise<void> => {
  if (exchange.req.method !== 'GET') return replyError(exchange, 405, 'method not allowed', { Allow: 'GET' })
  if (route.kind === 'apidoc') return replyJson(exchange, 200, openApiDocument(state.baseUrl()))
  const auth = authenticate(exchange.record.token, state.usersByToken, state.revokedTokens)
  if (!auth.ok) return replyError(exchange, 401, auth.reason)
  const { user } = auth
  switch (route.kind) {
    case 'me':
      return replyJson(exchange, 200, {
        id: user.id,
        username: user.username,
        displayName: user.displayName,
        email: user.email,
        roles: user.roles ?? DEFAULT_ROLES,
      })
    case 'export': {
      const table = state.tables.get(route.tableId)
      if (table === undefined) return replyError(exchange, 404, `table ${route.tableId} not found`)
      if (table.exportEnabled === false) return replyError(exchange, 404, `export is disabled for table ${table.id}`)
      if (!mayRead(user, table.id)) {
        return replyError(exchange, 403, `user ${user.username} may not read table ${table.id}`)
      }
      return replyExport(exchange, state.upstream.apply(table), route.format)
    }
    case 'unknown':
      return replyError(exchange, 404, 'not found')
  }
}

const headerValue = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value.join(', ') : value

export const handleRequest = async (state: EmulatorState, req: IncomingMessage, res: ServerResponse): Promise<void> => {
  const target = req.url ?? '/'
  const record: RecordedRequest = {
    method: req.method ?? 'GET',
    path: target,
    token: headerValue(req.headers.token),
    status: 0,
    at: new Date(),
  }
  state.requests.push(record)
  const route = routeOf(target)
  const exchange: Exchange = { req, res, record, fault: state.faults.take(faultTargetOf(route)), wait: state.wait }
  try {
    if (await actOutLeadingFault(exchange, exchange.fault)) return
    await serve(state, exchange, route)
  } catch (error) {
    // A broken table generator: answer 500 if nothing was sent yet, else cut the response off.
    if (res.headersSent || res.destroyed) res.destroy()
    else await replyError({ ...exchange, fault: undefined }, 500, `emulator failure: ${(error as Error).message}`)
  }
}
