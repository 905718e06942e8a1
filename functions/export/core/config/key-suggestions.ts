/**
 * Unknown configuration keys: a misspelt key would otherwise be dropped and quietly change behaviour, so each
 * one is reported at its own path with the closest key the schema knows there ("did you mean ...?").
 */
import * as z from 'zod'
import { closestKey } from '../closest-key.ts'

export { closestKey }

/** The schema inside a wrapper that does not change which keys an object accepts (optional, default, ...). */
const unwrapped = (schema: z.ZodType): z.ZodType | undefined => {
  if (
    schema instanceof z.ZodOptional ||
    schema instanceof z.ZodNullable ||
    schema instanceof z.ZodDefault ||
    schema instanceof z.ZodPrefault ||
    schema instanceof z.ZodReadonly ||
    schema instanceof z.ZodNonOptional ||
    schema instanceof z.ZodCatch
  ) {
    return schema.unwrap() as z.ZodType
  }
  // A transform's keys are those of the object it reads.
  if (schema instanceof z.ZodPipe) return schema.in as z.ZodType
  return undefined
}

/** The keys an object schema at `path` accepts, looking through optional, default, array and pipe wrappers. */
export const knownKeysAt = (schema: z.ZodType, path: readonly PropertyKey[]): string[] => {
  let current: z.ZodType | undefined = schema
  const remaining = [...path]
  while (current !== undefined) {
    const inner = unwrapped(current)
    if (inner !== undefined) current = inner
    else if (remaining.length === 0) return current instanceof z.ZodObject ? Object.keys(current.shape) : []
    else if (current instanceof z.ZodArray) {
      remaining.shift()
      current = current.element as z.ZodType
    } else if (current instanceof z.ZodObject)
      current = current.shape[String(remaining.shift())] as z.ZodType | undefined
    else return []
  }
  return []
}

/** The message for one unknown key, with its likely intended spelling. */
export const unknownKeyMessage = (key: string, known: readonly string[]): string => {
  const suggestion = closestKey(key, known)
  return suggestion === undefined
    ? `is not a known key (known here: ${known.join(', ')})`
    : `is not a known key; did you mean "${suggestion}"?`
}
