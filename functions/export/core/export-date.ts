/**
 * The one rule for an export date (the `dt=` partition), shared by the CLI's `--date` and the Lambda event's
 * `exportDate`: a real calendar date within a sane window, so a typo such as 2062 or 1926 cannot create a partition
 * that every "latest" view and retention rule then has to live with.
 */
import { EXPORT_DATE_PATTERN } from './constants.ts'

const EARLIEST_EXPORT_DATE = '2000-01-01'
const DAY_MS = 24 * 60 * 60 * 1000

/** The latest accepted date: today in UTC plus one day, for a run started just before midnight elsewhere. */
const latestExportDate = (now: Date): string => new Date(now.getTime() + DAY_MS).toISOString().slice(0, 10)

/** Why `text` is not an acceptable export date, or undefined when it is. */
export const exportDateProblem = (text: string, now: Date = new Date()): string | undefined => {
  const date = new Date(`${text}T00:00:00Z`)
  if (!EXPORT_DATE_PATTERN.test(text) || Number.isNaN(date.getTime()) || !date.toISOString().startsWith(text)) {
    return 'must be a calendar date as YYYY-MM-DD'
  }
  const latest = latestExportDate(now)
  // ISO dates of equal length compare as strings in date order.
  if (text < EARLIEST_EXPORT_DATE || text > latest) {
    return `must be between ${EARLIEST_EXPORT_DATE} and ${latest} (today in UTC plus one day)`
  }
  return undefined
}
