/**
 * The history events' schema (lambda/history-event.ts) and the digests `npm run erase -- --aws-event` puts in
 * them (path/erase.ts digestCondition): a value only as keyed digests, one per spelling a column type stores it in;
 * every problem of an event named by its field, never quoting a value.
 */
import { describe, expect, it } from 'vitest'
import { PseudonymizationKey } from '../../../functions/export/core/pseudonymization-key.ts'
import { eraseEvent, parseHistoryEvent, rewriteEvent } from '../../../functions/export/lambda/history-event.ts'
import { pseudonym } from '../../../functions/export/normalize/personal-data.ts'
import { digestCondition } from '../../../functions/export/path/erase.ts'

const KEY = PseudonymizationKey.fromText('k'.repeat(40), 'test')
const digest = (text: string) => pseudonym(KEY, Buffer.from(text))
const event = eraseEvent(KEY, 'devices', [{ column: 'device_id', value: '007' }])

const problems = (input: unknown): string[] => {
  try {
    parseHistoryEvent(input)
  } catch (error) {
    return (error as { problems: { field: string; message: string }[] }).problems.map((p) => `${p.field}: ${p.message}`)
  }
  return []
}

describe('digestCondition', () => {
  it('digests the value as given and each typed spelling that differs from it', () => {
    expect(digestCondition(KEY, { column: 'n', value: '1.50' })).toEqual({
      column: 'n',
      digest: digest('1.50'),
      typed: { double: digest('1.5') },
    })
    expect(digestCondition(KEY, { column: 't', value: '2026-10-01T08:00:00Z' })).toEqual({
      column: 't',
      digest: digest('2026-10-01T08:00:00Z'),
      typed: { timestamp: digest('2026-10-01T08:00:00.000Z') },
    })
  })

  it('adds no typed digest to a value every type spells as given', () => {
    expect(digestCondition(KEY, { column: 'host', value: 'ws-0001' })).toEqual({
      column: 'host',
      digest: digest('ws-0001'),
    })
    expect(digestCondition(KEY, { column: 'flag', value: 'true' })).toEqual({ column: 'flag', digest: digest('true') })
    // Leading zeros keep an id a string: no type reads 007 as 7.
    expect(digestCondition(KEY, { column: 'id', value: '007' })).toEqual({ column: 'id', digest: digest('007') })
  })
})

describe('parseHistoryEvent', () => {
  it('reads a plan (no dates) and a batch (dates)', () => {
    expect(parseHistoryEvent(event)).toEqual({ request: event.history })
    const batch = { ...event, dates: ['2026-10-01', '2026-10-02'] }
    expect(parseHistoryEvent(batch)).toEqual({ request: event.history, dates: ['2026-10-01', '2026-10-02'] })
  })

  it('reads a finish, and a rewrite without conditions', () => {
    expect(parseHistoryEvent({ ...event, finish: true })).toEqual({ request: event.history, finish: true })
    const rewrite = rewriteEvent(KEY, 'devices', 3)
    expect(rewrite.history).toEqual({
      operation: 'rewrite',
      table: 'devices',
      keyCheck: event.history.keyCheck,
      batchSize: 3,
    })
    expect(parseHistoryEvent(rewrite)).toEqual({ request: rewrite.history })
  })

  it.each([
    [
      { history: { ...rewriteEvent(KEY, 'devices').history, where: event.history.where } },
      'history.where: is not allowed for rewrite: a rewrite applies the configuration to every row of every date',
    ],
    [
      { ...event, dates: ['2026-10-01'], finish: true },
      'finish: cannot go with dates: a batch runs dates, the finish runs after them',
    ],
    [{ ...event, finish: false }, 'finish: must be true: the finish after every batch'],
    [
      { history: { ...event.history, where: [{ column: 'device_id', value: '007' }] } },
      'history.where.0: has unknown fields: "value"',
    ],
    [
      { history: { ...event.history, where: [{ column: 'device_id', digest: 'ABC' }] } },
      'history.where.0.digest: must be 32 lowercase hex digits, as npm run erase -- --aws-event prints it',
    ],
    [{ history: { ...event.history, operation: 'drop' } }, 'history.operation: must be one of: erase, rewrite'],
    [{ ...event, dates: ['2026-02-30'] }, 'dates.0: '],
    [{ ...event, dates: [] }, 'dates: must name a date'],
    [{ history: { ...event.history, dates: ['2026-10-01'] } }, 'history: has unknown fields: "dates"'],
    [{ history: { ...event.history, where: undefined } }, 'history.where: is required for erase: the rows to remove'],
    [{ history: event.history, tables: ['devices'] }, '(event): has unknown fields: "tables"'],
  ])('refuses %j', (input, problem) => {
    const found = problems(input)
    expect(
      found.some((p) => p.startsWith(problem)),
      found.join('\n'),
    ).toBe(true)
    expect(found.join('\n')).not.toContain('"007"')
  })
})
