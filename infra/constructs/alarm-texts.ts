/** What each alarm means and what to do, as shown in the notification and the console. */

export const DEFAULT_RUNBOOK = 'README.md, section "When an alarm fires"'

export interface AlarmTextInput {
  readonly failedRunsToAlarm: number
  readonly evaluationRuns: number
  readonly staleAfterPeriods: number
  readonly schedulePeriodHours: number
  /** @default DEFAULT_RUNBOOK */
  readonly runbook?: string | undefined
}

/** One description per alarm; CloudWatch allows 1024 characters. */
export const alarmDescriptions = (input: AlarmTextInput) => {
  const runbook = `Runbook: ${input.runbook ?? DEFAULT_RUNBOOK}.`
  const staleHours = input.staleAfterPeriods * input.schedulePeriodHours
  return {
    persistentSourceFailures: [
      `In at least ${input.failedRunsToAlarm} of the last ${input.evaluationRuns} runs a table failed with HTTP 401/403 (token rejected or lacking permission)`,
      'or 5xx/429 (service failing or overloaded) after all retries; a failure that a retry absorbed does not count.',
      'Do: find the failed tables and their error code in the function log or the run records under <prefix>/_runs/;',
      'for 401/403 run `npm run check` with the token and replace the token in the secret; for 5xx contact the service owner.',
      runbook,
    ].join(' '),
    functionErrors: [
      'The export function failed in the last schedule period for a reason on its own side: it crashed or timed out, or a table failed on its data',
      '(malformed CSV, encoding), its configuration (404: unknown table id) or publishing. Failures of the inventory service (401/403, 5xx) are left to the persistent-source-failures alarm.',
      'Do: read the error code in the function log or the run record (for "Task timed out" raise deployment.lambda.timeoutSeconds or split the tables; for data errors see the hint),',
      'then delete the handled messages from the on-failure queue.',
      runbook,
    ].join(' '),
    undeliveredRuns: [
      'EventBridge Scheduler could not invoke the export function after its retries: that run never started and its event is in the schedule dead-letter queue.',
      'Do: read the error attributes of the message (missing permission, throttling, deleted function), fix the cause, invoke the function once by hand, then purge the queue.',
      runbook,
    ].join(' '),
    staleExport: [
      `No run exported every table successfully for ${input.staleAfterPeriods} schedule period(s) (${staleHours} hours).`,
      'Missing data counts as no success, so this also fires when the function stops running; after a first deploy it stays in ALARM until the first complete run.',
      'Do: check the other alarms and the function log, confirm the schedule is enabled and the secret filled, then invoke the function by hand.',
      runbook,
    ].join(' '),
  }
}
