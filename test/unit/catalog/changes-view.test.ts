import { describe, expect, it } from 'vitest'
import { athenaTableDefinition } from '../../../functions/export/catalog/athena.ts'
import { changesView } from '../../../functions/export/catalog/changes-view.ts'
import { glueTableInputs } from '../../../functions/export/catalog/glue-inputs.ts'
import { glueTableInputProblems } from '../../../functions/export/catalog/glue-rules.ts'
import { decodePrestoView } from '../../../functions/export/catalog/presto-view.ts'
import type { TableSchema } from '../../../functions/export/schema/table-schema.ts'

const column = (name: string, type: 'string' | 'bigint' = 'string') =>
  ({ name, header: name, type, firstSeen: '2026-03-01', lastSeen: '2026-03-04' }) as const

const SCHEMA: TableSchema = {
  version: 1,
  table: 'devices',
  sourceTableId: '1001',
  firstExportDate: '2026-03-01',
  lastExportDate: '2026-03-04',
  columns: [column('device_id'), column('os'), column('ram_gb', 'bigint'), column('previous_os')],
  key: ['device_id'],
}

/** `count` consecutive days from 2026-03-01. */
const days = (count: number) =>
  Array.from({ length: count }, (_, i) => new Date(Date.UTC(2026, 2, 1 + i)).toISOString().slice(0, 10))

const inputsOf = (schema: TableSchema) =>
  glueTableInputs(athenaTableDefinition(schema, 'inventory', 's3://bucket/inventory/devices/'))

describe('the changes view', () => {
  it('is registered with the table and passes the Glue validator, with its columns typed', () => {
    const inputs = inputsOf(SCHEMA)
    expect(inputs.map((i) => i.Name)).toEqual(['devices', 'devices_export_dates', 'devices_latest', 'devices_changes'])
    expect(inputs.flatMap(glueTableInputProblems)).toEqual([])
    const view = inputs[3]!
    expect(glueTableInputProblems(view)).toEqual([])
    expect(view.StorageDescriptor?.Columns?.map((c) => `${c.Name} ${c.Type}`)).toEqual([
      'change string',
      'dt string',
      'previous_dt string',
      'device_id string',
      'changed_columns array<string>',
      'os string',
      'ram_gb bigint',
      'previous_os string',
      'previous_os_2 string',
      'previous_ram_gb bigint',
      'previous_previous_os string',
    ])
    expect(decodePrestoView(view.ViewOriginalText)?.columns[4]).toEqual({
      name: 'changed_columns',
      type: 'array(varchar)',
    })
  })

  it('has text of the same length after 3 and after 3,000 export dates', () => {
    const viewText = (count: number) => {
      const dates = days(count)
      // A registry as an older export left it, with every date listed: the view ignores the list.
      const schema = { ...SCHEMA, lastExportDate: dates.at(-1)!, exportDates: dates }
      return inputsOf(schema).find((i) => i.Name === 'devices_changes')!.ViewOriginalText!
    }
    expect(viewText(3000).length).toBe(viewText(3).length)
    expect(viewText(3000)).toBe(viewText(3))
  })

  it('pairs dates through the dates relation, reading the table once for each side', () => {
    const sql = changesView({
      source: '"inventory"."devices"',
      dates: '"inventory"."devices_export_dates"',
      columns: SCHEMA.columns,
      key: ['device_id'],
    })!.sql
    expect(
      sql.match(/FROM "inventory"\."devices_export_dates" d JOIN "inventory"\."devices" t ON t\."dt" = d\."\w+"/g),
    ).toEqual([
      'FROM "inventory"."devices_export_dates" d JOIN "inventory"."devices" t ON t."dt" = d."dt"',
      'FROM "inventory"."devices_export_dates" d JOIN "inventory"."devices" t ON t."dt" = d."previous_dt"',
    ])
    expect(sql).not.toMatch(/'\d{4}-\d{2}-\d{2}'/)
  })

  it('is absent without a key or before a second export date', () => {
    expect(inputsOf({ ...SCHEMA, key: undefined }).map((i) => i.Name)).toEqual(['devices', 'devices_latest'])
    expect(inputsOf({ ...SCHEMA, firstExportDate: '2026-03-04' }).map((i) => i.Name)).toEqual([
      'devices',
      'devices_export_dates',
      'devices_latest',
    ])
  })
})
