import { describe, expect, it } from 'vitest'
import { ratePeriodHours, scheduleExpressionProblem } from '../../infra/schedule-expression.ts'

describe('EventBridge Scheduler expressions', () => {
  it.each([
    'rate(1 minute)',
    'rate(5 minutes)',
    'rate(1 hour)',
    'rate(12 hours)',
    'rate(1 day)',
    'rate(7 days)',
    'cron(0 2 * * ? *)',
    'cron(0 6 ? * MON-FRI *)',
    'cron(15 10 ? * 6L 2026-2030)',
    'cron(0/15 8-18 ? * 2#1 *)',
    'cron(0 0 L * ? *)',
    'cron(0 0 15W JAN,JUL ? *)',
    'cron(30 1 1,15 * ? 2027)',
  ])('accepts %s', (expression) => {
    expect(scheduleExpressionProblem(expression)).toBeUndefined()
  })

  it.each([
    ['rate(1 hours)', 'singular for 1'],
    ['rate(5 hour)', 'singular for 1'],
    ['rate(0 minutes)', 'at least 1'],
    ['rate(1 week)', 'must be rate(value unit)'],
    ['cron(0 2 * * *)', 'takes 6 fields'],
    ['cron(0 2 * * * *)', 'exactly one of day-of-month and day-of-week must be "?"'],
    ['cron(0 2 ? * ? *)', 'exactly one of day-of-month and day-of-week must be "?"'],
    ['cron(60 2 * * ? *)', 'minutes: "60" is outside 0-59'],
    ['cron(0 24 * * ? *)', 'hours: "24" is outside 0-23'],
    ['cron(0 2 * 13 ? *)', 'month: "13" is outside 1-12 or JAN-DEC'],
    ['cron(0 2 ? * FUNDAY *)', 'day-of-week: "FUNDAY" is outside'],
    ['cron(0 2 * * ? 1969)', 'year: "1969" is outside 1970-2199'],
    ['cron(0/0 2 * * ? *)', 'step that is not a positive number'],
    ['cron(0 2 1? * ? *)', '"?" stands alone'],
    ['at(2026-12-01T02:00:00)', 'runs once'],
    ['daily', 'must be rate(value unit)'],
  ])('rejects %s, saying why', (expression, why) => {
    expect(scheduleExpressionProblem(expression)).toContain(why)
  })

  it('derives the period of a rate() and leaves a cron() period to the configuration', () => {
    expect(ratePeriodHours('rate(30 minutes)')).toBe(0.5)
    expect(ratePeriodHours('rate(1 hour)')).toBe(1)
    expect(ratePeriodHours('rate(2 days)')).toBe(48)
    expect(ratePeriodHours('cron(0 2 * * ? *)')).toBeUndefined()
  })
})
