import { describe, expect, it } from 'vitest'
import {
  alarmPeriodSeconds,
  failedRunsWindow,
  periodsPerRun,
  staleWindow,
  windowProblem,
} from '../../infra/constructs/alarm-windows.ts'

describe('alarm windows', () => {
  it.each([
    [24, 86_400],
    [1, 3_600],
    [0.25, 900],
    [0.001, 60],
    [168, 86_400],
  ])('turn a %d-hour schedule period into a %d-second alarm period', (hours, seconds) => {
    expect(alarmPeriodSeconds(hours)).toBe(seconds)
  })

  it('spread a schedule longer than a day over several daily periods', () => {
    expect(periodsPerRun(48)).toBe(2)
    expect(failedRunsWindow(48, 2, 3)).toEqual({ periodSeconds: 86_400, evaluationPeriods: 6, datapointsToAlarm: 2 })
    expect(staleWindow(48, 2)).toEqual({ periodSeconds: 86_400, evaluationPeriods: 4, datapointsToAlarm: 4 })
  })

  it('accept what CloudWatch accepts', () => {
    expect(windowProblem(failedRunsWindow(24, 2, 3))).toBeUndefined()
    expect(windowProblem(staleWindow(24, 7))).toBeUndefined()
    expect(windowProblem(staleWindow(0.25, 96))).toBeUndefined()
  })

  it('name the limit CloudWatch would reject', () => {
    expect(windowProblem(failedRunsWindow(24, 2, 8))).toBe(
      'it would look back 8 day(s), CloudWatch allows at most 7 day(s) for 1 day(s) periods',
    )
    expect(windowProblem(staleWindow(0.5, 49))).toMatch(
      /CloudWatch allows at most 1 day\(s\) for 30 minute\(s\) periods/,
    )
  })
})
