/**
 * The export's byte-level value definitions (functions/export/normalize/values.ts) applied to text, for tests:
 * the export itself only ever reads bytes, so these live here.
 */
import { bigintAt, booleanAt, dateAt, doubleAt, parsed, timestampAt } from '../../functions/export/normalize/values.ts'

/** Applies a byte-level definition to text. */
const onText = (text: string, at: (bytes: Uint8Array, start: number, end: number) => boolean): boolean => {
  const bytes = Buffer.from(text, 'utf8')
  return at(bytes, 0, bytes.length)
}

export const parseBigint = (text: string): bigint | undefined =>
  onText(text, bigintAt) ? (parsed.isBig ? parsed.big : BigInt(parsed.value)) : undefined

export const parseDouble = (text: string): number | undefined => (onText(text, doubleAt) ? parsed.value : undefined)

export const parseBoolean = (text: string): boolean | undefined =>
  onText(text, booleanAt) ? parsed.value === 1 : undefined

/** Days since 1970-01-01. */
export const parseDate = (text: string): number | undefined => (onText(text, dateAt) ? parsed.value : undefined)

/** Milliseconds since the epoch, UTC; a missing offset means UTC. */
export const parseTimestamp = (text: string): number | undefined =>
  onText(text, timestampAt) ? parsed.value : undefined
