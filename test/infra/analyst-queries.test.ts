import { describe, expect, it } from 'vitest'
import { namedQueries } from '../../infra/constructs/analyst-queries.ts'

describe('analyst queries', () => {
  it('add "what changed since the previous export" for every table with a key, filtered on one dt', () => {
    const queries = namedQueries(
      ['devices', 'installed_software', 'users'],
      [],
      [
        { name: 'devices', key: ['device_id'] },
        { name: 'installed_software', key: ['device_id', 'software_name'] },
      ],
    )
    expect(queries.map((q) => q.name).slice(9)).toEqual([
      'devices: what changed since the previous export',
      'installed_software: what changed since the previous export',
    ])
    expect(queries[10]?.sql).toContain(
      "SELECT * FROM installed_software_changes\nWHERE dt = date_format(current_date, '%Y-%m-%d')\nORDER BY change, device_id, software_name",
    )
  })

  it('refuses a key that is not a plain Athena identifier', () => {
    expect(() => namedQueries([], [], [{ name: 'devices', key: ['device id'] }])).toThrow(/"device id" is not a plain/)
    const error = (() => {
      try {
        namedQueries([], [], [{ name: 'devices', key: ['device id'] }])
      } catch (thrown) {
        return thrown
      }
    })()
    expect(error).toMatchObject({ code: 'CONFIG_INVALID', problems: [{ field: 'tables[].key' }] })
  })
})
