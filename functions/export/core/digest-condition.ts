/**
 * A condition of an erasure request with its value as keyed digests only: what a Lambda event carries (Step
 * Functions keeps every input in its execution history) and what the warehouse records of a request, so that the
 * value in clear is never stored. `digest` is the pseudonym of the value as given (for a pseudonymized column, its
 * stored pseudonym), and `typed` that of its spelling in each column type where it reads as a value spelt otherwise
 * (`007` as `7`).
 */
import * as z from 'zod'
import { ColumnType } from './constants.ts'

/** The column types whose stored text is the typed value's own spelling, which may differ from the value given. */
export const TYPED_SPELLINGS = [
  ColumnType.BIGINT,
  ColumnType.DOUBLE,
  ColumnType.BOOLEAN,
  ColumnType.DATE,
  ColumnType.TIMESTAMP,
] as const
export type TypedSpelling = (typeof TYPED_SPELLINGS)[number]

export interface DigestCondition {
  readonly column: string
  readonly digest: string
  readonly typed?: Readonly<Partial<Record<TypedSpelling, string>>> | undefined
}

const MAX_COLUMN_NAME = 256

/** 32 lowercase hex digits: a pseudonym, as `npm run erase -- --aws-event` prints it. */
export const DigestSchema = z
  .string({ error: 'must be a digest printed by npm run erase -- --aws-event' })
  .regex(/^[0-9a-f]{32}$/, 'must be 32 lowercase hex digits, as npm run erase -- --aws-event prints it')

export const DigestConditionSchema = z.strictObject({
  column: z.string().min(1, 'must name a data column').max(MAX_COLUMN_NAME),
  digest: DigestSchema,
  typed: z.strictObject(Object.fromEntries(TYPED_SPELLINGS.map((type) => [type, DigestSchema.optional()]))).optional(),
})

/**
 * The digests a stored text of a column of `type` may have for the condition's value; of every spelling when the
 * type is not known (a table whose registry was deleted).
 */
export const conditionDigests = (condition: DigestCondition, type: ColumnType | undefined): string[] => {
  if (type === undefined) return [condition.digest, ...Object.values(condition.typed ?? {})]
  const typed = condition.typed?.[type as TypedSpelling]
  return typed === undefined ? [condition.digest] : [condition.digest, typed]
}
