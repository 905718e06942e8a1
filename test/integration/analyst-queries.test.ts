import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { queryWarehouse, warehouseTables } from '../../functions/local/warehouse-sql.ts'
import { namedQueries } from '../../infra/constructs/analyst-queries.ts'
import { parseDeployConfig } from '../../infra/deployment-config.ts'
import { runExportInProcess, tempDir } from '../support/cli.ts'

let warehouse: string

beforeAll(async () => {
  warehouse = await tempDir()
  for (const date of ['2025-01-01', '2025-02-01']) {
    expect((await runExportInProcess(['--demo', '--out', warehouse, '--date', date])).exitCode).toBe(0)
  }
})

const sample = async () =>
  parseDeployConfig(JSON.parse(await readFile(path.resolve(import.meta.dirname, '../../config/sample.json'), 'utf8')))

describe('the Athena named queries', () => {
  it("run over every demo table, and the sample configuration's own ones too", async () => {
    const tables = await warehouseTables(warehouse)
    const queries = namedQueries(tables, (await sample()).deployment.athena.namedQueries)
    expect(queries).toHaveLength(tables.length * 3 + 1)
    for (const query of queries) {
      const result = await queryWarehouse(warehouse, query.sql)
      expect(result.rows.length, query.name).toBeGreaterThan(0)
    }
  })

  it('count the rows per export date and the days exported of a table', async () => {
    const [perDate, , days] = namedQueries(['devices'], [])
    expect((await queryWarehouse(warehouse, perDate!.sql)).rows.map((row) => row.slice(0, 2))).toEqual([
      ['2025-02-01', '2500'],
      ['2025-01-01', '2500'],
    ])
    expect((await queryWarehouse(warehouse, days!.sql)).rows).toEqual([['2', '2025-01-01', '2025-02-01']])
  })
})
