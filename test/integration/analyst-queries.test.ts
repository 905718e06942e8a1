import { beforeAll, describe, expect, it } from 'vitest'
import { queryWarehouse } from '../../functions/local/warehouse-sql.ts'
import { analystQueries } from '../../infra/constructs/analyst-queries.ts'
import { runExportInProcess, tempDir } from '../support/cli.ts'

let warehouse: string

beforeAll(async () => {
  warehouse = await tempDir()
  for (const date of ['2025-01-01', '2025-02-01']) {
    expect((await runExportInProcess(['--demo', '--out', warehouse, '--date', date])).exitCode).toBe(0)
  }
})

describe('the Athena named queries', () => {
  const queries = analystQueries({ devicesTable: 'devices' })

  it.each(queries.map((q) => [q.name, q.sql]))('"%s" runs over the demo data', async (_, sql) => {
    const result = await queryWarehouse(warehouse, sql)
    expect(result.columns.length).toBeGreaterThan(1)
  })

  it('counts the newest inventory per operating system', async () => {
    const result = await queryWarehouse(warehouse, queries[0]!.sql)
    const total = result.rows.reduce((sum, row) => sum + Number(row[1]), 0)
    expect(total).toBe(2500)
  })
})
