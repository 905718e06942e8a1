/**
 * Reading the exporter's own state objects (the schema registry, the run index) through a schema: a document of
 * the wrong shape fails as STATE_CORRUPT naming the object, instead of being used as if it were right and written
 * back as garbage (`"exportDates": "2026-03-01"` spread into single characters). Messages quote nothing of the
 * object itself, so a line break or a secret in it never reaches a log.
 */
import type * as z from 'zod'
import { formatPath } from '../core/config.ts'
import { StateCorruptError } from '../core/errors.ts'

/** Issues named in the message; one is usually enough to find the fault. */
const ISSUES_SHOWN = 3

/** The object parsed and checked against `schema`, or a StateCorruptError naming `key` under `root`. */
export const parseStateObject = <T>(
  schema: z.ZodType<T>,
  body: Buffer,
  where: { readonly root: string; readonly key: string },
): T => {
  let json: unknown
  try {
    json = JSON.parse(body.toString('utf8'))
  } catch (cause) {
    // JSON.parse's message quotes the text around the fault: it could carry a line break or anything else.
    throw new StateCorruptError({
      where: where.root,
      key: where.key,
      reason: `it is not valid JSON (${body.length} bytes; cut short or overwritten)`,
      cause,
    })
  }
  const result = schema.safeParse(json)
  if (result.success) return result.data
  const issues = result.error.issues
  const shown = issues.slice(0, ISSUES_SHOWN).map((issue) => `${formatPath(issue.path)}: ${issue.message}`)
  const more = issues.length > ISSUES_SHOWN ? ` (and ${issues.length - ISSUES_SHOWN} more)` : ''
  throw new StateCorruptError({
    where: where.root,
    key: where.key,
    reason: `it does not have the shape the exporter writes: ${shown.join('; ')}${more}`,
  })
}
