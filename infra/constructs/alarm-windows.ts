/**
 * Alarm periods and windows derived from the schedule, within CloudWatch's limits. Pure functions: the
 * alarms construct, the tests and the alarm-logic evaluation all use the same arithmetic.
 */

/** Longest alarm period used: one day (a longer schedule spans several periods). */
export const MAX_ALARM_PERIOD_SECONDS = 86_400
/** CloudWatch: period x evaluation periods may not exceed 7 days, or 1 day for periods under an hour. */
export const MAX_EVALUATION_RANGE_SECONDS = 7 * 86_400
export const MAX_SHORT_PERIOD_EVALUATION_RANGE_SECONDS = 86_400
const SHORT_PERIOD_SECONDS = 3_600

/** The period, window and breach count of one alarm. */
export interface AlarmWindow {
  readonly periodSeconds: number
  readonly evaluationPeriods: number
  readonly datapointsToAlarm: number
}

/** A schedule period expressed as an alarm period: a whole number of minutes, at most one day. */
export const alarmPeriodSeconds = (schedulePeriodHours: number): number =>
  Math.min(Math.max(Math.round(schedulePeriodHours * 60), 1) * 60, MAX_ALARM_PERIOD_SECONDS)

/** How many alarm periods one schedule period spans (1 unless the schedule is longer than a day). */
export const periodsPerRun = (schedulePeriodHours: number): number =>
  Math.max(1, Math.ceil((schedulePeriodHours * 3600) / alarmPeriodSeconds(schedulePeriodHours)))

/**
 * M of the last N runs: N schedule periods of evaluation, M breaching data points. With one data point per
 * run and missing data not breaching, periods without a run never count.
 */
export const failedRunsWindow = (
  schedulePeriodHours: number,
  failedRunsToAlarm: number,
  evaluationRuns: number,
): AlarmWindow => ({
  periodSeconds: alarmPeriodSeconds(schedulePeriodHours),
  evaluationPeriods: evaluationRuns * periodsPerRun(schedulePeriodHours),
  datapointsToAlarm: failedRunsToAlarm,
})

/** No success for `staleAfterPeriods` schedule periods: every period of that window breaching. */
export const staleWindow = (schedulePeriodHours: number, staleAfterPeriods: number): AlarmWindow => {
  const evaluationPeriods = staleAfterPeriods * periodsPerRun(schedulePeriodHours)
  return {
    periodSeconds: alarmPeriodSeconds(schedulePeriodHours),
    evaluationPeriods,
    datapointsToAlarm: evaluationPeriods,
  }
}

/** One period, one breach: something that should never happen at all. */
export const singlePeriodWindow = (schedulePeriodHours: number): AlarmWindow => ({
  periodSeconds: alarmPeriodSeconds(schedulePeriodHours),
  evaluationPeriods: 1,
  datapointsToAlarm: 1,
})

/** Why CloudWatch would reject this window, or undefined when it is valid. */
export const windowProblem = (window: AlarmWindow): string | undefined => {
  const range = window.periodSeconds * window.evaluationPeriods
  const limit =
    window.periodSeconds < SHORT_PERIOD_SECONDS
      ? MAX_SHORT_PERIOD_EVALUATION_RANGE_SECONDS
      : MAX_EVALUATION_RANGE_SECONDS
  if (window.datapointsToAlarm > window.evaluationPeriods) {
    return `${window.datapointsToAlarm} breaching data points cannot fit in ${window.evaluationPeriods} periods`
  }
  if (range > limit) {
    return `it would look back ${formatSeconds(range)}, CloudWatch allows at most ${formatSeconds(limit)} for ${formatSeconds(window.periodSeconds)} periods`
  }
  return undefined
}

const formatSeconds = (seconds: number): string =>
  seconds % 86_400 === 0
    ? `${seconds / 86_400} day(s)`
    : seconds % 3600 === 0
      ? `${seconds / 3600} hour(s)`
      : `${seconds / 60} minute(s)`
