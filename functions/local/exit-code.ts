/** Exit statuses of every local command. */
export const ExitCode = {
  /** Everything succeeded (export: every table; check: everything ready). */
  OK: 0,
  /** Some table failed or is not ready; the others were handled. */
  TABLE_FAILED: 1,
  /** Bad usage or configuration. */
  USAGE: 2,
} as const
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]
