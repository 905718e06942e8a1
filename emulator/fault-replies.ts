/** Faults that replace the whole response, or hold it back, before the request is even authenticated. */
import { STATUS_CODES } from 'node:http'
import { pause } from './body-writer.ts'
import type { Fault } from './faults.ts'
import { bytesBody, type Exchange, JSON_CONTENT_TYPE, reply } from './reply.ts'

const LOGIN_PAGE = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Sign in · IT Asset Inventory</title></head>
<body>
<form method="post" action="/login">
<h1>Your session has expired</h1>
<label>User name <input name="username"></label>
<label>Password <input name="password" type="password"></label>
<button type="submit">Sign in</button>
</form>
</body>
</html>
`

const JSON_ERROR_OBJECT = { error: 'Export failed', code: 'EXPORT_INTERNAL_ERROR', details: 'Please try again later.' }

/** Statuses that must not carry a body. */
const BODILESS = new Set([204, 205, 304])

const replyStatusFault = (exchange: Exchange, fault: Extract<Fault, { kind: 'status' }>): Promise<void> => {
  const headers: Record<string, string> = {
    'Content-Type': fault.body === undefined ? JSON_CONTENT_TYPE : 'text/plain; charset=utf-8',
    ...(fault.retryAfter === undefined ? {} : { 'Retry-After': fault.retryAfter }),
  }
  // Scripted headers win, whatever their spelling.
  for (const [name, value] of Object.entries(fault.headers ?? {})) {
    for (const existing of Object.keys(headers)) {
      if (existing.toLowerCase() === name.toLowerCase()) delete headers[existing]
    }
    headers[name] = value
  }
  const text = fault.body ?? JSON.stringify({ error: STATUS_CODES[fault.status] ?? `HTTP ${fault.status}` })
  const bytes = BODILESS.has(fault.status) ? new Uint8Array() : Buffer.from(text)
  return reply(exchange, fault.status, headers, bytesBody(bytes))
}

/**
 * Acts out a fault that stands in front of the normal handling. Returns true when the request has been
 * answered (or its socket destroyed), false when normal handling should go on (after a delay, or for
 * faults that act on the body).
 */
export const actOutLeadingFault = async (exchange: Exchange, fault: Fault | undefined): Promise<boolean> => {
  switch (fault?.kind) {
    case undefined:
      return false
    case 'delay':
      await pause(exchange.res, fault.ms, exchange.wait)
      return exchange.res.destroyed
    case 'reset':
      if (fault.afterBytes !== undefined) return false
      exchange.res.destroy()
      return true
    case 'status':
      await replyStatusFault(exchange, fault)
      return true
    case 'html200':
      await reply(exchange, 200, { 'Content-Type': 'text/html; charset=utf-8' }, bytesBody(Buffer.from(LOGIN_PAGE)))
      return true
    case 'json200':
      await reply(
        exchange,
        200,
        { 'Content-Type': JSON_CONTENT_TYPE },
        bytesBody(Buffer.from(JSON.stringify(JSON_ERROR_OBJECT))),
      )
      return true
    case 'empty200':
      await reply(exchange, 200, { 'Content-Type': 'text/csv; charset=utf-8' }, bytesBody(new Uint8Array()))
      return true
    default:
      return false
  }
}
