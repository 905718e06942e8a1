import { readFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseExportConfig, type TableConfig } from '../../../functions/export/core/config.ts'
import { KeyColumnError } from '../../../functions/export/core/errors.ts'
import { previewTable } from '../../../functions/export/path/table-preview.ts'
import { DEFAULT_LIMITS } from '../../support/limits.ts'

const tableOf = (table: Record<string, unknown>): TableConfig =>
  parseExportConfig({ source: { baseUrl: 'http://127.0.0.1:1' }, tables: [{ id: '1001', ...table }] }).tables[0]!

const OPTIONS = { rowLimit: 1000, spoolDirectory: os.tmpdir(), limits: DEFAULT_LIMITS }

/** A CSV of `rows` rows in chunks of 100 rows; counts the chunks taken. */
const csvBody = (rows: number, row: (i: number) => string) => {
  const taken = { chunks: 0 }
  async function* body(): AsyncGenerator<Buffer> {
    yield Buffer.from('Serial,RAM (GB)\n')
    for (let at = 0; at < rows; at += 100) {
      taken.chunks++
      const lines = Array.from({ length: Math.min(100, rows - at) }, (_, i) => `${row(at + i)}\n`)
      yield Buffer.from(lines.join(''))
    }
  }
  return { body: body(), taken }
}

describe('previewTable', () => {
  it('names and types the columns from the first rows only, and stops reading there', async () => {
    // A value that would make ram_gb STRING comes after the limit.
    const { body, taken } = csvBody(200_000, (i) => `SN-${i},${i === 100_000 ? 'n/a' : i % 64}`)
    const preview = await previewTable(tableOf({}), body, OPTIONS)
    expect(preview).toEqual({
      columns: [
        { name: 'serial', header: 'Serial', type: 'string' },
        { name: 'ram_gb', header: 'RAM (GB)', type: 'bigint' },
      ],
      rowsRead: 1000,
      suggestedKey: ['serial'],
      warnings: [],
      personalData: [],
    })
    // Read up to the end of the record batch that holds the limit (at most 1 MiB of cells), not the 2,000 chunks.
    expect(taken.chunks).toBeLessThan(500)
  })

  it('fails on a configured key that names no column, as the export would', async () => {
    const { body } = csvBody(10, (i) => `SN-${i},${i}`)
    const preview = previewTable(tableOf({ key: ['asset_tag'] }), body, OPTIONS)
    await expect(preview).rejects.toBeInstanceOf(KeyColumnError)
  })

  it('previews a workbook as its CSV twin: the same names, types and suggested key', async () => {
    const fixtures = path.resolve(import.meta.dirname, '../../fixtures/xlsx')
    const chunks = async function* (file: string) {
      yield await readFile(path.join(fixtures, file))
    }
    const workbook = await previewTable(tableOf({ format: 'xlsx' }), chunks('devices-xlsxwriter.xlsx'), OPTIONS)
    const csv = await previewTable(tableOf({}), chunks('devices-xlsxwriter.csv'), OPTIONS)
    expect(workbook.suggestedKey).toEqual(['asset_id'])
    expect(workbook).toEqual(csv)
  })
})
