/**
 * Identifiers that fit: every name the project derives (companions, `previous_<column>`, repeats' `_2`) is cut
 * to Glue's and Athena's 255 characters the same way, deterministically and without collisions.
 */
import { createHash } from 'node:crypto'
import { MAX_COLUMN_NAME_LENGTH } from './constants.ts'

/** Hex digits of the SHA-256 of the whole name that a shortened name carries. */
const HASH_DIGITS = 8

/**
 * `stem` + `suffix`, or, when that passes 255 characters, the stem's first characters, `_`, 8 hex digits of the
 * SHA-256 of the whole stem, and the suffix kept whole. Two stems that share their first characters differ in
 * the hash, so distinct names stay distinct.
 */
export const fitIdentifier = (stem: string, suffix = ''): string => {
  const name = `${stem}${suffix}`
  if (name.length <= MAX_COLUMN_NAME_LENGTH) return name
  const hash = createHash('sha256').update(stem).digest('hex').slice(0, HASH_DIGITS)
  const keep = MAX_COLUMN_NAME_LENGTH - suffix.length - HASH_DIGITS - 1
  return `${stem.slice(0, keep).replace(/_+$/, '')}_${hash}${suffix}`
}
