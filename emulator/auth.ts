/** Token checks: who is calling, and may they read a table. */
import type { EmulatorUser } from './users.ts'

export type Authentication = { ok: true; user: EmulatorUser } | { ok: false; reason: string }

/** The service answers 401 for every token problem; the reason only goes into the error body. */
export const authenticate = (
  token: string | undefined,
  usersByToken: ReadonlyMap<string, EmulatorUser>,
  revokedTokens: ReadonlySet<string>,
): Authentication => {
  if (token === undefined || token === '') return { ok: false, reason: 'missing token header' }
  const user = usersByToken.get(token)
  if (user === undefined) return { ok: false, reason: 'invalid token' }
  if (user.status === 'revoked' || revokedTokens.has(token)) return { ok: false, reason: 'token revoked' }
  if (user.status === 'expired') return { ok: false, reason: 'token expired' }
  return { ok: true, user }
}

export const mayRead = (user: EmulatorUser, tableId: string): boolean =>
  user.tables === 'all' || user.tables.includes(tableId)
