/** The key `npm run check` suggests: identifiers first, a pair when no single one identifies a row, never a timestamp. */
import { describe, expect, it } from 'vitest'
import { type KeyCandidate, suggestKey } from '../../../functions/export/normalize/key-suggestion.ts'

const columns = (spec: string): KeyCandidate[] =>
  spec.split(' ').map((pair) => {
    const [name = '', type = 'string'] = pair.split(':')
    return { name, type: type as KeyCandidate['type'] }
  })

describe('suggestKey', () => {
  it('prefers an identifier-like column to an earlier unique one, and never offers a timestamp, date, flag or double', () => {
    const cols = columns('seen:timestamp day:date price:double flag:boolean note asset_id')
    const sample = [
      ['2026-01-01 00:00:01', '2026-01-01', '1.5', 'true', 'first', 'A1'],
      ['2026-01-01 00:00:02', '2026-01-02', '2.5', 'false', 'second', 'A2'],
    ]
    expect(suggestKey(cols, sample)).toEqual(['asset_id'])
  })

  it('offers a pair of identifier-like columns that identify every row together when no single column does', () => {
    const cols = columns('device_id software_name version detected_at:timestamp')
    const sample = [
      ['d1', 'Firefox', '1', '2026-01-01 00:00:01'],
      ['d1', 'Chrome', '1', '2026-01-01 00:00:02'],
      ['d2', 'Firefox', '2', '2026-01-01 00:00:03'],
    ]
    expect(suggestKey(cols, sample)).toEqual(['device_id', 'software_name'])
  })

  it('falls back to another unique column, and offers nothing when a key cell is empty or nothing is unique', () => {
    expect(suggestKey(columns('label'), [['a'], ['b']])).toEqual(['label'])
    expect(suggestKey(columns('user_id'), [['1'], ['']])).toBeUndefined()
    expect(suggestKey(columns('seen:timestamp'), [['1'], ['2']])).toBeUndefined()
    expect(suggestKey(columns('user_id'), [['1']])).toBeUndefined()
  })
})
