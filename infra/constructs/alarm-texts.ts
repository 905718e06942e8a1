/** What each alarm means and what to do, as shown in the notification and the console. */

export const DEFAULT_RUNBOOK = 'docs/operations.md, section "When an alarm fires"'

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
  return {
    persistentSourceFailures: [
      `In at least ${input.failedRunsToAlarm} of the last ${input.evaluationRuns} periods of the default schedule a table failed with HTTP 401/403 (token rejected or lacking permission)`,
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
      "A table's run never started: EventBridge Scheduler could not invoke the export function after its retries (the event is in the schedule dead-letter queue),",
      "or the run waited in Lambda's asynchronous queue behind export.concurrency longer than its maximum event age and was dropped (the event is in the on-failure queue).",
      'Do: read the message (its error attributes, or the table in its input), fix the cause (permission, deleted function; for dropped runs raise export.concurrency or spread the schedules),',
      'invoke the table once by hand, then purge the queue.',
      runbook,
    ].join(' '),
  }
}

export interface TableStaleTextInput {
  readonly table: string
  readonly tableId: string
  readonly expression: string
  readonly periodHours: number
  readonly staleAfterPeriods: number
  /** Where the table's latest outcome is, e.g. `<prefix>/_runs/latest/devices.json`. */
  readonly latestRecord: string
  /** @default DEFAULT_RUNBOOK */
  readonly runbook?: string | undefined
}

/** The description of one table's staleness alarm: it names the table, its schedule and where to look. */
export const tableStaleDescription = (input: TableStaleTextInput): string =>
  [
    `Table ${input.table} (saved table ${input.tableId}) had no successful export for ${input.staleAfterPeriods} of its schedule periods`,
    `(${input.expression}, ${input.staleAfterPeriods * input.periodHours} hours). Missing data counts as no success, so this also fires when its schedule stops;`,
    'after a first deploy it stays in ALARM until the first successful run of the table.',
    `Do: read its latest outcome in ${input.latestRecord} (error code and next step), check the other alarms,`,
    `confirm its schedule is enabled, then run it by hand with the event {"tables": ["${input.table}"]}.`,
    `Runbook: ${input.runbook ?? DEFAULT_RUNBOOK}.`,
  ].join(' ')
