/** Maps a request target to what the emulator serves. */

export const ExportFormat = { CSV: 'csv', XLSX: 'xlsx' } as const
export type ExportFormat = (typeof ExportFormat)[keyof typeof ExportFormat]

export type Route =
  | { kind: 'apidoc' }
  | { kind: 'me' }
  | { kind: 'export'; tableId: string; format: ExportFormat }
  | { kind: 'unknown' }

const EXPORT_PATH = /^\/rest\/tables\/([^/]+)\/(csv|xlsx)$/

const decodeSegment = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}

/** The route of a request target such as `/rest/tables/1001/csv?x=1` (the query string is ignored). */
export const routeOf = (target: string): Route => {
  const path = target.split('?', 1)[0] ?? ''
  if (path === '/apidoc') return { kind: 'apidoc' }
  if (path === '/rest/usermanager/me') return { kind: 'me' }
  const match = EXPORT_PATH.exec(path)
  const tableId = match?.[1] === undefined ? undefined : decodeSegment(match[1])
  if (match === null || tableId === undefined) return { kind: 'unknown' }
  return { kind: 'export', tableId, format: match[2] === 'xlsx' ? 'xlsx' : 'csv' }
}

/** The fault target a route answers to: 'apidoc', 'me' or the table id; unknown paths only match '*'. */
export const faultTargetOf = (route: Route): string | undefined => {
  switch (route.kind) {
    case 'apidoc':
    case 'me':
      return route.kind
    case 'export':
      return route.tableId
    case 'unknown':
      return undefined
  }
}
