import { describe, expect, it } from 'vitest'
import { analystQueries } from '../../infra/constructs/analyst-queries.ts'

describe('analyst queries', () => {
  it('add "what changed since the previous export" for every table with a key, filtered on one dt', () => {
    const queries = analystQueries({
      devicesTable: 'devices',
      keyedTables: [
        { name: 'devices', key: ['device_id'] },
        { name: 'installed_software', key: ['device_id', 'software_name'] },
      ],
    })
    expect(queries.map((q) => q.name).slice(3)).toEqual([
      'What changed in devices since the previous export',
      'What changed in installed_software since the previous export',
    ])
    expect(queries[4]?.sql).toContain(
      "SELECT * FROM installed_software_changes\nWHERE dt = date_format(current_date, '%Y-%m-%d')\nORDER BY change, device_id, software_name",
    )
  })
})
