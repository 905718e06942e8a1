/** `npm start` with no flags exports the stand-in's demo tables, and they come out typed. */
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { RunRecord } from '../../functions/export/core/run-record.ts'
import { runExportInProcess, tempDir } from '../support/cli.ts'
import { readParquetTable } from '../support/fixtures.ts'

const EXPORT_DATE = '2026-03-15'

describe('the demo export', () => {
  it('types the devices table: ram_gb BIGINT, last_seen TIMESTAMP, serial_number VARCHAR, and more', async () => {
    const out = await tempDir('inventory-demo-')
    const result = await runExportInProcess(['--demo', '--out', out, '--date', EXPORT_DATE])
    expect(result.exitCode, result.stderr).toBe(0)

    const runFolder = path.join(out, '_runs', `dt=${EXPORT_DATE}`)
    const [runFile] = await readdir(runFolder)
    const record = JSON.parse(await readFile(path.join(runFolder, runFile!), 'utf8')) as RunRecord
    const devices = record.tables.find((t) => t.name === 'devices')!
    const typeOf = (name: string) => devices.columns?.find((c) => c.name === name)
    expect(typeOf('ram_gb')).toEqual({ name: 'ram_gb', header: 'RAM (GB)', type: 'bigint' })
    expect(typeOf('last_seen')).toEqual({ name: 'last_seen', header: 'Last Seen', type: 'timestamp' })
    expect(typeOf('serial_number')).toEqual({ name: 'serial_number', header: 'Serial Number', type: 'string' })
    expect(typeOf('device_id')?.type).toBe('string') // zero-padded ids stay text
    expect(typeOf('purchase_date')?.type).toBe('date')
    expect(typeOf('price_eur')?.type).toBe('double')
    expect(typeOf('virtual')?.type).toBe('boolean')

    const table = await readParquetTable(path.join(out, 'devices', `dt=${EXPORT_DATE}`, 'data.parquet'))
    const duckdbType = (name: string) => table.columns.find((c) => c.name === name)?.type
    expect(duckdbType('ram_gb')).toBe('BIGINT')
    expect(duckdbType('last_seen')).toBe('TIMESTAMP WITH TIME ZONE')
    expect(duckdbType('serial_number')).toBe('VARCHAR')
    expect(table.rows).toHaveLength(devices.rows!)
    // Serial numbers with leading zeros survive as written.
    expect(table.rows.some((row) => /^00\d{10}$/.test(String(row.serial_number)))).toBe(true)
  })
})
