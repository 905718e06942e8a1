/**
 * The token, looked for in what the service answers. An error page, a proxy's debug page or a misconfigured
 * service can echo the request it got, token header included; quoted in a message, kept in the run record or
 * read as a table, the token would land in the terminal, the warehouse and the catalog. Only the client holds the
 * token: this keeps it in a closure and hands out a way to hide it in a text and to find it in a body.
 */

/** What the token is replaced with in upstream text. */
export const REDACTED_TOKEN = '[token]'
/**
 * Shorter tokens are not looked for: a few characters occur in tables by chance, and hiding them would mangle
 * text. The service's tokens are far longer.
 */
const MIN_TOKEN_LENGTH = 8

export interface TokenEcho {
  /** `text` with every occurrence of the token replaced by REDACTED_TOKEN. */
  readonly redact: (text: string) => string
  /**
   * A scanner for one body: whether the chunk it is given holds the token (as UTF-8 or UTF-16), across the
   * boundary with the chunk before it too.
   */
  readonly scanner: () => (chunk: Buffer) => boolean
}

export const tokenEcho = (token: string): TokenEcho => {
  if (token.length < MIN_TOKEN_LENGTH) return { redact: (text) => text, scanner: () => () => false }
  const utf16 = Buffer.from(token, 'utf16le')
  const needles = [Buffer.from(token, 'utf8'), utf16, Buffer.from(utf16).swap16()]
  const overlap = Math.max(...needles.map((n) => n.length)) - 1
  return {
    redact: (text) => text.replaceAll(token, REDACTED_TOKEN),
    scanner: () => {
      let tail: Buffer = Buffer.alloc(0)
      return (chunk) => {
        // Only the few bytes around the boundary are copied; the chunk itself is searched in place.
        const seam = Buffer.concat([tail, chunk.subarray(0, overlap)])
        const found = needles.some((needle) => chunk.includes(needle) || seam.includes(needle))
        tail = Buffer.from(chunk.length >= overlap ? chunk.subarray(chunk.length - overlap) : seam.subarray(-overlap))
        return found
      }
    },
  }
}
