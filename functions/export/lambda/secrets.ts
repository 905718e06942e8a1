/**
 * The API token and the pseudonymization key from Secrets Manager, each from a secret of its own, through
 * Powertools Parameters: fetched on first use, then served from memory for a short maximum age, so a replaced token is picked up within minutes without a call per run.
 * The secret is the plain token, or JSON `{"token": "...", "baseUrl": "..."}`. Its value is never logged and
 * never put in an error message. What the value must hold is token.ts's.
 */

import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets'
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager'
import { ConfigError, PseudonymizationKeyUnavailableError, TokenUnavailableError } from '../core/errors.ts'
import { PseudonymizationKey } from '../core/pseudonymization-key.ts'
import { parseTokenSecret, type TokenSecret } from '../source/token.ts'

/** How long a fetched secret is reused before Secrets Manager is asked again. */
const TOKEN_CACHE_SECONDS = 300

/** One secret's value through Powertools, cached per container for `maxAgeSeconds`; failures coded by `unavailable`. */
class CachedSecret {
  readonly #provider: SecretsProvider
  readonly #secretId: string
  readonly #maxAgeSeconds: number
  readonly #unavailable: (reason: string, cause?: unknown) => Error

  constructor(
    client: SecretsManagerClient,
    secretId: string,
    maxAgeSeconds: number,
    unavailable: (reason: string, cause?: unknown) => Error,
  ) {
    this.#provider = new SecretsProvider({ awsSdkV3Client: client })
    this.#secretId = secretId
    this.#maxAgeSeconds = maxAgeSeconds
    this.#unavailable = unavailable
  }

  /** How messages name the secret (never its value). */
  get source(): string {
    return `secret ${this.#secretId}`
  }

  async value(): Promise<string | Uint8Array> {
    let value: string | Uint8Array | undefined
    try {
      value = await this.#provider.get(this.#secretId, { maxAge: this.#maxAgeSeconds })
    } catch (error) {
      throw this.#unavailable(`${this.source}: ${whyUnreadable(error)}`, (error as Error).cause ?? error)
    }
    if (value === undefined) throw this.#unavailable(`${this.source}: it has no value yet`)
    return value
  }
}

/** Reads the token's secret, cached per container for `maxAgeSeconds`. */
export class TokenSecretReader {
  readonly #secret: CachedSecret

  constructor(client: SecretsManagerClient, secretId: string, maxAgeSeconds = TOKEN_CACHE_SECONDS) {
    this.#secret = new CachedSecret(
      client,
      secretId,
      maxAgeSeconds,
      (reason, cause) => new TokenUnavailableError(reason, cause),
    )
  }

  async read(): Promise<TokenSecret> {
    return parseTokenSecret(await this.#secret.value(), this.#secret.source)
  }
}

/**
 * Reads the pseudonymization key's secret, cached per container like the token. The value is turned into a
 * PseudonymizationKey at once, which never shows its text; no error message quotes it.
 */
export class PseudonymizationKeyReader {
  readonly #secret: CachedSecret

  constructor(client: SecretsManagerClient, secretId: string, maxAgeSeconds = TOKEN_CACHE_SECONDS) {
    this.#secret = new CachedSecret(
      client,
      secretId,
      maxAgeSeconds,
      (reason, cause) => new PseudonymizationKeyUnavailableError(reason, cause),
    )
  }

  async read(): Promise<PseudonymizationKey> {
    const value = await this.#secret.value()
    const text = typeof value === 'string' ? value : Buffer.from(value).toString('utf8')
    try {
      return PseudonymizationKey.fromText(text, this.#secret.source)
    } catch (error) {
      const problem = error instanceof ConfigError ? error.problems[0]?.message : undefined
      throw new PseudonymizationKeyUnavailableError(`${this.#secret.source}: it ${problem ?? 'is not a usable key'}`)
    }
  }
}

const whyUnreadable = (error: unknown): string => {
  const name = ((error as Error).cause as Error | undefined)?.name ?? (error as Error).name
  if (name === 'ResourceNotFoundException') return 'it does not exist or has no value yet'
  if (name === 'AccessDeniedException') return 'the function may not read it (AccessDeniedException)'
  if (name === 'DecryptionFailure') return 'its KMS key cannot decrypt it (DecryptionFailure)'
  return `Secrets Manager failed (${name})`
}
