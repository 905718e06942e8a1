/**
 * The pseudonymization key: the HMAC key behind `tables[].columns.pseudonymize`. It comes from a file or an
 * environment variable locally and from a secret of its own on AWS; whoever holds it can test a guess (does this
 * e-mail give that pseudonym?), so it is kept in a KeyObject and never printed: logging the object shows
 * `[pseudonymization key]`, and no message names its text.
 */
import { createSecretKey, type KeyObject } from 'node:crypto'
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
