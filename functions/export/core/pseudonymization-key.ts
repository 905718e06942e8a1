/**
 * The pseudonymization key: the HMAC key behind `tables[].columns.pseudonymize`. It comes from a file or an
 * environment variable locally and from a secret of its own on AWS; whoever holds it can test a guess (does this
 * e-mail give that pseudonym?), so it is kept in a KeyObject and never printed: logging the object shows
 * `[pseudonymization key]`, and no message names its text.
 */
import { createSecretKey, type KeyObject, timingSafeEqual } from 'node:crypto'
import { inspect } from 'node:util'
import { ConfigError } from './errors.ts'

/** Characters a key must have at least: a short key could be guessed, and every pseudonym with it. */
const MIN_PSEUDONYMIZATION_KEY_LENGTH = 32

const REDACTED = '[pseudonymization key]'

export class PseudonymizationKey {
  /** The HMAC-SHA256 key: the text's UTF-8 bytes. */
  readonly hmacKey: KeyObject

  private constructor(hmacKey: KeyObject) {
    this.hmacKey = hmacKey
  }

  /**
   * The key from its text (surrounding white space, such as a file's last line break, is not part of it). `source`
   * says where it came from, for the ConfigError of a key too short.
   */
  static fromText(text: string, source: string): PseudonymizationKey {
    const trimmed = text.trim()
    if (trimmed.length < MIN_PSEUDONYMIZATION_KEY_LENGTH) {
      throw new ConfigError('pseudonymization key', [
        {
          field: source,
          message:
            trimmed.length === 0
              ? 'holds no key (make one with: openssl rand -hex 32)'
              : `holds a key shorter than ${MIN_PSEUDONYMIZATION_KEY_LENGTH} characters (make one with: openssl rand -hex 32)`,
        },
      ])
    }
    return new PseudonymizationKey(createSecretKey(Buffer.from(trimmed, 'utf8')))
  }

  /** Whether `text`, trimmed as a key's text is, is this key. */
  isText(text: string): boolean {
    const bytes = Buffer.from(text.trim(), 'utf8')
    const own = this.hmacKey.export()
    return bytes.length === own.length && timingSafeEqual(bytes, own)
  }

  toString(): string {
    return REDACTED
  }

  toJSON(): string {
    return REDACTED
  }

  [inspect.custom](): string {
    return REDACTED
  }
}

/**
 * Refuses a token that is the pseudonymization key (one file given for both, one value put in both secrets): the
 * token is sent to the service in every request, so the key would leave with it, before any check could fail.
 */
export const refuseKeyAsToken = (key: PseudonymizationKey | undefined, token: string, tokenSource: string): void => {
  if (key === undefined || !key.isText(token)) return
  throw new ConfigError(
    'pseudonymization key',
    [
      {
        field: tokenSource,
        message:
          'holds the pseudonymization key, not the API token: the key would be sent to the service with every request',
      },
    ],
    'give the token and the key a file (or secret) each: the token from the service (Settings > API Tokens), the key from: openssl rand -hex 32; nothing was sent',
  )
}
