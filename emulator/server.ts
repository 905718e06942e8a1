/** startInventoryEmulator: a real HTTP server on loopback that behaves like the inventory service's export API. */
import { createServer } from 'node:http'
import { createServer as createTlsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { Wait } from './body-writer.ts'
import { demoTables } from './demo-tables.ts'
import { type EmulatorState, handleRequest } from './dispatch.ts'
import { EmulatorError, EmulatorErrorCode } from './errors.ts'
import { FaultQueue, type FaultScript } from './faults.ts'
import type { RecordedRequest } from './reply.ts'
import type { SavedTable } from './tables.ts'
import { type UpstreamChangeScript, UpstreamChanges } from './upstream-changes.ts'
import { DEMO_USERS, type EmulatorUser } from './users.ts'

export type { RecordedRequest } from './reply.ts'

export interface EmulatorOptions {
  /** @default '127.0.0.1' */
  readonly host?: string
  /** 0 picks a free port. @default 0 */
  readonly port?: number
  /** @default demoTables() */
  readonly tables?: readonly SavedTable[]
  /** @default DEMO_USERS */
  readonly users?: readonly EmulatorUser[]
  /** Serve https with this key and certificate (PEM), e.g. one of a private CA. @default plain http */
  readonly tls?: { readonly key: string; readonly cert: string }
  /** The day the emulator acts out, for upstream changes (YYYY-MM-DD). @default today (UTC) */
  readonly date?: string
  /** How delay, stall and trickle faults wait; tests inject a clock to assert waits instead of timing them. @default a timer */
  readonly wait?: Wait
}

export interface RunningEmulator {
  /** e.g. 'http://127.0.0.1:43121', without a trailing slash. */
  readonly baseUrl: string
  readonly port: number
  readonly faults: FaultScript
  /** Tables that shrink or lose columns from a given day on. */
  readonly upstream: UpstreamChangeScript
  /** Every request, in arrival order. */
  readonly requests: RecordedRequest[]
  /** Adds or replaces a table (by id). */
  setTable(table: SavedTable): void
  removeTable(id: string): void
  /** From now on that token gets 401. */
  revokeToken(token: string): void
  /** Closes the server and destroys open sockets, including responses still streaming. */
  close(): Promise<void>
}

const urlHost = (host: string): string => {
  if (host === '0.0.0.0') return '127.0.0.1'
  if (host === '::') return '[::1]'
  return host.includes(':') ? `[${host}]` : host
}

const usersByToken = (users: readonly EmulatorUser[]): Map<string, EmulatorUser> => {
  const byToken = new Map<string, EmulatorUser>()
  for (const user of users) {
    if (byToken.has(user.token)) {
      throw new EmulatorError(
        EmulatorErrorCode.OPTIONS_INVALID,
        `users ${user.username} and ${byToken.get(user.token)?.username} share a token`,
      )
    }
    byToken.set(user.token, user)
  }
  return byToken
}

export const startInventoryEmulator = async (options: EmulatorOptions = {}): Promise<RunningEmulator> => {
  const { host = '127.0.0.1', port = 0, tables = demoTables(), users = DEMO_USERS } = options
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new EmulatorError(EmulatorErrorCode.OPTIONS_INVALID, `port must be an integer from 0 to 65535, got ${port}`)
  }
  let baseUrl = ''
  const faults = new FaultQueue()
  const upstream = new UpstreamChanges(options.date)
  const state: EmulatorState = {
    baseUrl: () => baseUrl,
    tables: new Map(tables.map((table) => [table.id, table])),
    usersByToken: usersByToken(users),
    revokedTokens: new Set(),
    faults,
    upstream,
    requests: [],
    wait: options.wait,
  }
  const listener = (req: Parameters<typeof handleRequest>[1], res: Parameters<typeof handleRequest>[2]) =>
    void handleRequest(state, req, res)
  const server = options.tls
    ? createTlsServer({ key: options.tls.key, cert: options.tls.cert }, listener)
    : createServer(listener)
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new EmulatorError(
          EmulatorErrorCode.LISTEN_FAILED,
          `cannot listen on ${urlHost(host)}:${port} (${error.code ?? error.message})${error.code === 'EADDRINUSE' ? ': the port is in use; choose another --port, or 0 for a free one' : ''}`,
        ),
      ),
    )
    server.listen(port, host, () => {
      server.removeAllListeners('error')
      resolve()
    })
  })
  const address = server.address() as AddressInfo
  baseUrl = `${options.tls ? 'https' : 'http'}://${urlHost(host)}:${address.port}`

  return {
    baseUrl,
    port: address.port,
    faults,
    upstream,
    requests: state.requests,
    setTable: (table) => void state.tables.set(table.id, table),
    removeTable: (id) => void state.tables.delete(id),
    revokeToken: (token) => void state.revokedTokens.add(token),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)))
        server.closeAllConnections()
      }),
  }
}
