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
  exportDates: ['2026-03-01', '2026-03-02', '2026-03-04'],
}

const inputsOf = (schema: TableSchema) =>
  glueTableInputs(athenaTableDefinition(schema, 'inventory', 's3://bucket/inventory/devices/'))

describe('the changes view', () => {
  it('is registered with the table and passes the Glue validator, with its columns typed', () => {
    const inputs = inputsOf(SCHEMA)
    expect(inputs.map((i) => i.Name)).toEqual(['devices', 'devices_latest', 'devices_changes'])
    const view = inputs[2]!
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

  it('names each pair of consecutive export dates as literals, so a dt filter reads only those two partitions', () => {
    const sql = changesView({
      source: '"inventory"."devices"',
      columns: SCHEMA.columns,
      key: ['device_id'],
      exportDates: ['2026-03-04', '2026-03-01', '2026-03-02'],
    })!.sql
    const branches = sql.match(
      /SELECT '[\d-]+' AS _change_dt, '[\d-]+' AS _change_previous_dt, \d AS _change_side, t\.\* FROM "inventory"\."devices" t WHERE t\."dt" = '[\d-]+'/g,
    )
    expect(branches?.map((b) => b.match(/'[\d-]+'/g)!.join(' '))).toEqual([
      "'2026-03-02' '2026-03-01' '2026-03-02'",
      "'2026-03-02' '2026-03-01' '2026-03-01'",
      "'2026-03-04' '2026-03-02' '2026-03-04'",
      "'2026-03-04' '2026-03-02' '2026-03-02'",
    ])
  })

  it('is absent without a key or before a second export date', () => {
    expect(inputsOf({ ...SCHEMA, key: undefined }).map((i) => i.Name)).toEqual(['devices', 'devices_latest'])
    expect(inputsOf({ ...SCHEMA, exportDates: ['2026-03-04'] }).map((i) => i.Name)).toEqual([
      'devices',
      'devices_latest',
    ])
  })
})
