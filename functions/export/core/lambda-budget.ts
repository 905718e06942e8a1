/**
 * What a Lambda invocation's time must leave for work. The function starts no table once less than
 * `export.deadlineMarginSeconds` remains, so a timeout at or under the margin fails every invocation at once with
 * DEADLINE_EXCEEDED; the configuration refuses it (at synth, at CLI start and in the Lambda) instead.
 */

/** Seconds an invocation must have for its tables beyond the margin: less downloads nothing but a small table. */
export const MIN_WORK_SECONDS = 60

/** The Lambda timeout the deployment section sets, when it sets one as a number (the stack checks its type). */
const configuredTimeout = (deployment: Readonly<Record<string, unknown>>): number | undefined => {
  const lambda = deployment.lambda
  if (typeof lambda !== 'object' || lambda === null) return undefined
  const timeout = (lambda as Record<string, unknown>).timeoutSeconds
  return typeof timeout === 'number' ? timeout : undefined
}

/** Why `deployment.lambda.timeoutSeconds` can never export with this margin, or undefined when it can. */
export const lambdaTimeoutProblem = (
  deployment: Readonly<Record<string, unknown>>,
  deadlineMarginSeconds: number,
): string | undefined => {
  const timeout = configuredTimeout(deployment)
  const needed = deadlineMarginSeconds + MIN_WORK_SECONDS
  if (timeout === undefined || timeout >= needed) return undefined
  return `is ${timeout} s, which leaves ${Math.max(0, timeout - deadlineMarginSeconds)} s for tables after export.deadlineMarginSeconds (${deadlineMarginSeconds} s); every invocation would stop before its first table. Set it to at least ${needed} (the margin plus ${MIN_WORK_SECONDS} s of work) or lower the margin`
}
