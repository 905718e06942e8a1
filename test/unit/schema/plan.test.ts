import { describe, expect, it } from 'vitest'
import type { ColumnType } from '../../../functions/export/core/constants.ts'
import { type CurrentExport, planWrite, sameFileLayout } from '../../../functions/export/schema/plan.ts'
import type { TableSchema } from '../../../functions/export/schema/table-schema.ts'

/** This export: columns named as their header, inferred types, and the types each column's values all fit. */
const exportOf = (
  columns: Record<string, ColumnType>,
  { exportDate = '2026-03-02', fits = {} as Record<string, readonly ColumnType[]> } = {},
): CurrentExport => {
  const names = Object.keys(columns)
  return {
    table: 'devices',
    sourceTableId: '1001',
    exportDate,
    columns: names.map((name) => ({ name, header: name.toUpperCase() })),
    inferred: names.map((name) => columns[name]!),
    fits: (index, type) => type === 'string' || (fits[names[index]!] ?? [columns[names[index]!]!]).includes(type),
  }
}

const PREVIOUS: TableSchema = {
  version: 1,
  table: 'devices',
  sourceTableId: '1001',
  firstExportDate: '2026-03-01',
  lastExportDate: '2026-03-01',
  columns: [
    { name: 'asset_tag', header: 'ASSET_TAG', type: 'string', firstSeen: '2026-03-01', lastSeen: '2026-03-01' },
    { name: 'ram_gb', header: 'RAM_GB', type: 'double', firstSeen: '2026-03-01', lastSeen: '2026-03-01' },
  ],
}

describe('planWrite', () => {
  it('registers every column of a first export with its inferred type, each read from its CSV column', () => {
    const plan = planWrite(undefined, exportOf({ asset_tag: 'string', ram_gb: 'bigint' }))
    expect(plan.schema).toEqual({
      version: 1,
      table: 'devices',
      sourceTableId: '1001',
      firstExportDate: '2026-03-02',
      lastExportDate: '2026-03-02',
      columns: [
        { name: 'asset_tag', header: 'ASSET_TAG', type: 'string', firstSeen: '2026-03-02', lastSeen: '2026-03-02' },
        { name: 'ram_gb', header: 'RAM_GB', type: 'bigint', firstSeen: '2026-03-02', lastSeen: '2026-03-02' },
      ],
    })
    expect(plan.sources).toEqual([
      { kind: 'csv', index: 0, type: 'string' },
      { kind: 'csv', index: 1, type: 'bigint' },
    ])
  })

  it('keeps a published type that every value still fits, even when a narrower one is inferred', () => {
    const plan = planWrite(
      PREVIOUS,
      exportOf({ asset_tag: 'string', ram_gb: 'bigint' }, { fits: { ram_gb: ['bigint', 'double'] } }),
    )
    expect(plan.schema.columns.map((c) => [c.name, c.type])).toEqual([
      ['asset_tag', 'string'],
      ['ram_gb', 'double'],
    ])
    expect(plan.sources[1]).toEqual({ kind: 'csv', index: 1, type: 'double' })
  })

  it('appends a __text companion for values that no longer fit the published type, and writes the misfits there', () => {
    const plan = planWrite(PREVIOUS, exportOf({ asset_tag: 'string', ram_gb: 'string' }))
    expect(plan.schema.columns.map((c) => [c.name, c.type, c.textOf])).toEqual([
      ['asset_tag', 'string', undefined],
      ['ram_gb', 'double', undefined],
      ['ram_gb__text', 'string', 'ram_gb'],
    ])
    expect(plan.sources).toEqual([
      { kind: 'csv', index: 0, type: 'string' },
      { kind: 'csv', index: 1, type: 'double', companion: 2 },
      { kind: 'companion', of: 1 },
    ])
  })

  it('leaves a registered companion empty once the values fit again, but keeps it in the registry', () => {
    const withCompanion = planWrite(PREVIOUS, exportOf({ asset_tag: 'string', ram_gb: 'string' })).schema
    const plan = planWrite(
      withCompanion,
      exportOf({ asset_tag: 'string', ram_gb: 'double' }, { exportDate: '2026-03-03' }),
    )
    expect(plan.schema.columns.map((c) => c.name)).toEqual(['asset_tag', 'ram_gb', 'ram_gb__text'])
    expect(plan.sources).toEqual([
      { kind: 'csv', index: 0, type: 'string' },
      { kind: 'csv', index: 1, type: 'double' },
      { kind: 'absent' },
    ])
    // Not seen in this export: its dates stay as they were.
    expect(plan.schema.columns[2]).toMatchObject({ firstSeen: '2026-03-02', lastSeen: '2026-03-02' })
  })

  it('keeps a column the CSV no longer has, NULL in this file, with its dates unchanged', () => {
    const plan = planWrite(PREVIOUS, exportOf({ ram_gb: 'double', os: 'string' }))
    expect(plan.schema.columns.map((c) => [c.name, c.firstSeen, c.lastSeen])).toEqual([
      ['asset_tag', '2026-03-01', '2026-03-01'],
      ['ram_gb', '2026-03-01', '2026-03-02'],
      ['os', '2026-03-02', '2026-03-02'],
    ])
    expect(plan.sources).toEqual([
      { kind: 'absent' },
      { kind: 'csv', index: 0, type: 'double' },
      { kind: 'csv', index: 1, type: 'string' },
    ])
  })

  it('takes the latest header text and widens the dates for a backfill without moving the last export date', () => {
    const renamed = { ...exportOf({ asset_tag: 'string', ram_gb: 'double' }, { exportDate: '2026-02-01' }) }
    const plan = planWrite(PREVIOUS, {
      ...renamed,
      columns: [
        { name: 'asset_tag', header: 'Asset tag' },
        { name: 'ram_gb', header: 'RAM (GB)' },
      ],
    })
    expect(plan.schema).toMatchObject({ firstExportDate: '2026-02-01', lastExportDate: '2026-03-01' })
    expect(plan.schema.columns.map((c) => [c.header, c.firstSeen, c.lastSeen])).toEqual([
      ['Asset tag', '2026-02-01', '2026-03-01'],
      ['RAM (GB)', '2026-02-01', '2026-03-01'],
    ])
  })

  it('leaves the previous schema as it was', () => {
    const before = structuredClone(PREVIOUS)
    planWrite(PREVIOUS, exportOf({ asset_tag: 'string', ram_gb: 'string', os: 'string' }))
    expect(PREVIOUS).toEqual(before)
  })
})

describe('sameFileLayout', () => {
  const base = planWrite(PREVIOUS, exportOf({ asset_tag: 'string', ram_gb: 'double' }))

  it('holds when only headers and dates differ: they change the registry, not the file', () => {
    const later = planWrite(PREVIOUS, {
      ...exportOf({ asset_tag: 'string', ram_gb: 'double' }, { exportDate: '2026-04-01' }),
      columns: [
        { name: 'asset_tag', header: 'Asset tag' },
        { name: 'ram_gb', header: 'RAM' },
      ],
    })
    expect(sameFileLayout(base, later)).toBe(true)
  })

  it.each([
    ['a column is added', exportOf({ asset_tag: 'string', ram_gb: 'double', os: 'string' })],
    ['a value no longer fits the published type', exportOf({ asset_tag: 'string', ram_gb: 'string' })],
    ['the CSV columns come in another order', exportOf({ ram_gb: 'double', asset_tag: 'string' })],
  ])('fails when %s', (_, current) => {
    expect(sameFileLayout(base, planWrite(PREVIOUS, current))).toBe(false)
  })

  it('fails when a new column is inferred as another type', () => {
    const first = planWrite(undefined, exportOf({ serial: 'bigint' }))
    const wider = planWrite(undefined, exportOf({ serial: 'string' }))
    expect(sameFileLayout(first, wider)).toBe(false)
    expect(sameFileLayout(first, first)).toBe(true)
  })
})
