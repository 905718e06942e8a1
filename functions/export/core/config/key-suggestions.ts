/**
 * Unknown configuration keys: a misspelt key would otherwise be dropped and quietly change behaviour, so each
 * one is reported at its own path with the closest key the schema knows there ("did you mean ...?").
 */
import * as z from 'zod'

/** Edit distance (insertions, deletions, substitutions) between two keys. */
export const editDistance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase() ? 0 : 1
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost)
    }
    previous = current
  }
  return previous[b.length]!
}

/** The known key closest to `key`, when it is close enough to be a typo of it. */
export const closestKey = (key: string, known: readonly string[]): string | undefined => {
  let best: { key: string; distance: number } | undefined
  for (const candidate of known) {
    const distance = editDistance(key, candidate)
    if (best === undefined || distance < best.distance) best = { key: candidate, distance }
  }
  return best !== undefined && best.distance <= Math.max(2, Math.floor(best.key.length / 3)) ? best.key : undefined
}

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
