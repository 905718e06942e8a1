import { describe, expect, it } from 'vitest'
import { scheduleExpressionProblems, scheduleIntervalHours } from '../../infra/schedule.ts'

describe('EventBridge Scheduler expressions', () => {
  it.each([
    'cron(0 2 * * ? *)',
    'cron(15 10 ? * 6L 2026-2028)',
    'cron(0/15 * * * ? *)',
    'cron(0 8-17 ? * MON-FRI *)',
    'cron(0 9 ? * 2#1 *)',
    'cron(0 2 15W * ? *)',
    'cron(0 2 L JAN,JUL ? *)',
    'rate(1 minute)',
    'rate(5 minutes)',
    'rate(1 hour)',
    'rate(12 hours)',
    'rate(1 day)',
    'rate(7 days)',
  ])('accepts %s, as the service does', (expression) => {
    expect(scheduleExpressionProblems(expression)).toEqual([])
  })

  it.each([
    ['cron(0 2 * * *)', /has 5 fields; EventBridge needs six/],
    ['cron(0 2 * * * *)', /exactly one of day-of-month \("\*"\) and day-of-week \("\*"\) must be "\?"/],
    ['cron(0 2 ? * ? *)', /exactly one of day-of-month/],
    ['cron(0 2 1 * MON *)', /exactly one of day-of-month/],
    ['cron(60 2 * * ? *)', /minutes "60" is not valid \(0-59\)/],
    ['cron(0 24 * * ? *)', /hours "24" is not valid/],
    ['cron(0 2 * 13 ? *)', /month "13" is not valid/],
    ['cron(0 2 ? * 8 *)', /day-of-week "8" is not valid/],
    ['cron(0 2 * * ? 1969)', /year "1969" is not valid/],
    ['cron(0 ? * * ? *)', /hours cannot be "\?"/],
    ['cron(0 2 ? * 6#3,2#1 *)', /"#" must be a single expression/],
    ['rate(1 hours)', /singular unit for 1: rate\(1 hour\)/],
    ['rate(5 hour)', /plural unit above 1: rate\(5 hours\)/],
    ['rate(0 minutes)', /value of 1 or more/],
    ['rate(2 weeks)', /minute\(s\), hour\(s\) or day\(s\)/],
    ['rate(1.5 hours)', /whole value/],
    ['at(2026-01-01T00:00:00)', /must be cron\(.*\) or rate\(value unit\)/],
  ])('rejects %s, as the service does', (expression, problem) => {
    expect(scheduleExpressionProblems(expression).join('; ')).toMatch(problem)
  })

  it.each([
    ['cron(0 2 * * ? *)', 24],
    ['cron(30 4 ? * * *)', 24],
    ['cron(0 */6 * * ? *)', 6],
    ['cron(0 0,12 * * ? *)', 12],
    ['cron(0/15 * * * ? *)', 0.25],
    ['cron(0 9 ? * MON *)', 168],
    ['rate(1 day)', 24],
    ['rate(6 hours)', 6],
    ['rate(30 minutes)', 0.5],
  ])('reads %s as running every %s hours', (expression, hours) => {
    expect(scheduleIntervalHours(expression)).toBe(hours)
  })

  it.each(['cron(0 8,9,17 * * ? *)', 'cron(0 8-17 ? * MON-FRI *)', 'cron(0 2 1 * ? *)', 'cron(0 2 * * *)'])(
    'gives no interval for %s, whose runs are uneven or not a simple reading',
    (expression) => {
      expect(scheduleIntervalHours(expression)).toBeUndefined()
    },
  )
})

describe('the expressions EventBridge Scheduler documents', () => {
  it.each([
    'rate(1 minute)',
    'rate(5 minutes)',
    'rate(12 hours)',
    'rate(7 days)',
    'cron(0 6 ? * MON-FRI *)',
    'cron(15 10 ? * 6L 2026-2030)',
    'cron(0/15 8-18 ? * 2#1 *)',
    'cron(0 0 L * ? *)',
    'cron(0 0 15W JAN,JUL ? *)',
    'cron(30 1 1,15 * ? 2027)',
  ])('accepts %s', (expression) => {
    expect(scheduleExpressionProblems(expression)).toEqual([])
  })

  it.each([
    ['rate(1 hours)', /singular unit for 1/],
    ['rate(5 hour)', /plural unit above 1/],
    ['rate(0 minutes)', /1 or more/],
    ['rate(1 week)', /minute\(s\), hour\(s\) or day\(s\)/],
    ['cron(0 2 * * *)', /has 5 fields/],
    ['cron(0 2 ? * ? *)', /exactly one of day-of-month .* must be "\?"/],
    ['cron(60 2 * * ? *)', /minutes "60" is not valid/],
    ['cron(0 24 * * ? *)', /hours "24" is not valid/],
    ['cron(0 2 * 13 ? *)', /month "13" is not valid/],
    ['cron(0 2 ? * FUNDAY *)', /day-of-week "FUNDAY" is not valid/],
    ['cron(0 2 * * ? 1969)', /year "1969" is not valid/],
    ['cron(0/0 2 * * ? *)', /bad increment/],
    ['cron(0 2 1? * ? *)', /day-of-month "1\?" is not valid/],
    ['at(2026-12-01T02:00:00)', /must be cron\(.*\) or rate\(value unit\)/],
  ])('rejects %s, saying why', (expression, why) => {
    expect(scheduleExpressionProblems(expression).join('; ')).toMatch(why)
  })
})
