import { describe, expect, it } from 'vitest'
import type { ColumnType } from '../../../functions/export/core/constants.ts'
import { publishedColumnChanges, rewrittenSchema, withCompanions } from '../../../functions/export/schema/history.ts'
import type { RegisteredColumn, TableSchema } from '../../../functions/export/schema/table-schema.ts'

const column = (name: string, type: ColumnType, textOf?: string): RegisteredColumn => ({
  name,
  ...(textOf ? { textOf } : { header: name.toUpperCase() }),
  type,
  firstSeen: '2026-03-01',
  lastSeen: '2026-03-02',
})

const REGISTERED: TableSchema = {
  version: 1,
  table: 'devices',
  sourceTableId: '1001',
  firstExportDate: '2026-03-01',
  lastExportDate: '2026-03-02',
  columns: [
    column('asset_tag', 'string'),
    column('ram_gb', 'bigint'),
    column('ram_gb__text', 'string', 'ram_gb'),
    column('serial', 'string'),
    column('serial__text', 'string', 'serial'),
    column('owner', 'string'),
    column('e_mail', 'string'),
  ],
  pseudonymized: ['e_mail'],
  latestExport: {
    exportDate: '2026-03-02',
    runId: 'r',
    rows: 2,
    columns: ['asset_tag', 'ram_gb', 'serial', 'owner', 'e_mail'].map((name) => ({ name, header: name })),
  },
}

const settings = (
  columnTypes: Record<string, ColumnType> = {},
  drop: string[] = [],
  pseudonymize: string[] = ['e_mail'],
) => ({ columnTypes, columns: { drop, pseudonymize, publishInClear: [] } })

describe('publishedColumnChanges', () => {
  it('is empty when the settings are the ones the dates were published with', () => {
    expect(publishedColumnChanges(settings({ ram_gb: 'bigint' }), REGISTERED)).toEqual([])
  })

  it('names a retype, a drop and a newly pseudonymized column, in registry order', () => {
    expect(publishedColumnChanges(settings({ ram_gb: 'string' }, ['serial'], ['e_mail', 'owner']), REGISTERED)).toEqual(
      [
        { column: 'ram_gb', change: 'string (published as bigint)' },
        { column: 'serial', change: 'dropped' },
        { column: 'owner', change: 'pseudonymized' },
      ],
    )
  })

  it('takes the configured pseudonyms as the published ones for a registry that did not record them', () => {
    const { pseudonymized: _, ...legacy } = REGISTERED
    expect(publishedColumnChanges(settings({}, [], ['e_mail', 'owner']), legacy)).toEqual([])
  })
})

describe('rewrittenSchema', () => {
  it('drops a column with its companion, retypes, and lets a string column go without its companion', () => {
    const target = rewrittenSchema(settings({ ram_gb: 'string' }, ['serial'], ['e_mail', 'owner']), REGISTERED)
    expect(target.columns.map((c) => [c.name, c.type])).toEqual([
      ['asset_tag', 'string'],
      ['ram_gb', 'string'],
      ['owner', 'string'],
      ['e_mail', 'string'],
    ])
    expect(target.pseudonymized).toEqual(['e_mail', 'owner'])
    expect(target.latestExport?.columns.map((c) => c.name)).toEqual(['asset_tag', 'ram_gb', 'owner', 'e_mail'])
    expect(publishedColumnChanges(settings({ ram_gb: 'string' }, ['serial'], ['e_mail', 'owner']), target)).toEqual([])
  })

  it('gets the companions a narrower type needed on the dates that have them', () => {
    const target = rewrittenSchema(settings({ asset_tag: 'bigint' }), REGISTERED)
    const found = new Map([['asset_tag__text', ['2026-03-02', '2026-03-01']]])
    expect(withCompanions(target, found).columns.at(-1)).toEqual({
      name: 'asset_tag__text',
      type: 'string',
      textOf: 'asset_tag',
      firstSeen: '2026-03-01',
      lastSeen: '2026-03-02',
    })
  })
})
