/**
 * The API token as the export takes it, from wherever it comes (a secret, a file, an environment variable): a
 * plain token, or a secret's JSON `{"token": "...", "baseUrl": "..."}`. Pure, so the local CLI checks a token
 * without loading the Secrets Manager client. The token is never logged and never put in an error message.
 */
import { type ExportConfig, SourceConfigSchema } from '../core/config.ts'
import { ConfigError, TokenUnavailableError } from '../core/errors.ts'

export interface TokenSecret {
  readonly token: string
  /** Overrides `source.baseUrl` of the configuration when present. */
  readonly baseUrl?: string
}

/** What an HTTP header value may not hold: control characters (tab aside), DEL and anything past Latin-1. */
const ILLEGAL_HEADER_CHARACTER = /[^\t\x20-\x7e\x80-\xff]/

/**
 * The token, unless it cannot be sent as the `token` header: such a token would fail every request the same way,
 * so it is a configuration error at start, not a retried network failure. Only the position is named, never the token.
 */
export const checkTokenCharacters = (token: string, source: string): string => {
  const at = token.search(ILLEGAL_HEADER_CHARACTER)
  if (at >= 0) {
    throw new TokenUnavailableError(
      `${source}: character ${at + 1} of the token cannot be sent in an HTTP header (a line break or control character)`,
    )
  }
  return token
}

/** The token (and optional base URL) from a secret's value; `source` names the secret in errors. */
export const parseTokenSecret = (value: string | Uint8Array, source: string): TokenSecret => {
  const text = (typeof value === 'string' ? value : Buffer.from(value).toString('utf8')).trim()
  if (text === '') throw new TokenUnavailableError(`${source}: it is empty`)
  if (!text.startsWith('{')) return { token: checkTokenCharacters(text, source) }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    // The parser's message quotes the input, which is the secret: leave it out.
    throw new TokenUnavailableError(`${source}: it starts with "{" but is not valid JSON`)
  }
  const { token, baseUrl } = (parsed ?? {}) as { token?: unknown; baseUrl?: unknown }
  if (typeof token !== 'string' || token.trim() === '') {
    throw new TokenUnavailableError(`${source}: its JSON has no non-empty "token" string`)
  }
  if (baseUrl !== undefined && typeof baseUrl !== 'string') {
    throw new TokenUnavailableError(`${source}: its "baseUrl" is not a string`)
  }
  const checked = checkTokenCharacters(token.trim(), source)
  return baseUrl === undefined ? { token: checked } : { token: checked, baseUrl }
}

/** The configuration with the secret's base URL, validated by the same schema as the configuration's own. */
export const applySecretBaseUrl = (config: ExportConfig, secret: TokenSecret): ExportConfig => {
  if (secret.baseUrl === undefined) return config
  const result = SourceConfigSchema.safeParse({ ...config.source, baseUrl: secret.baseUrl })
  if (!result.success) {
    throw new ConfigError(
      'baseUrl in the token secret',
      result.error.issues.map((issue) => ({ field: issue.path.join('.') || 'baseUrl', message: issue.message })),
    )
  }
  return Object.freeze({ ...config, source: Object.freeze(result.data) })
}
