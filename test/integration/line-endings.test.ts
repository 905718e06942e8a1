/**
 * Through the real export: tables whose records end in LF, CRLF and lone CRs, mixed, with the changes of ending
 * and line breaks inside quotes placed across the parse stage's 64 KiB slices (the parse thread cuts the body at
 * every 64 KiB), come back with every row and value as written. The bodies pass 1 MiB, so they are parsed on a
 * thread of their own (or in chunks on every core, where there are three).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { exportOneTable, readParquetTable } from '../support/fixtures.ts'

const SLICE = 64 * 1024

interface Written {
  readonly text: string
  readonly rows: readonly (readonly [string, string])[]
}

/**
 * Rows `id,note` ended by `ending(row)`; before each 64 KiB mark, one row is padded so that what `atMark(mark)`
 * names straddles the mark: its ending ('\r\n' split, or a lone '\r' or '\n' just before it), or a CRLF inside
 * its quoted note.
 */
const write = (
  size: number,
  ending: (row: number) => string,
  atMark: (mark: number) => 'crlf' | 'cr' | 'lf' | 'quoted',
): Written => {
  let text = 'id,note\r\n'
  const rows: [string, string][] = []
  let mark = 1
  while (text.length < size) {
    const id = `r${rows.length + 1}`
    const plain = `${id},n${rows.length}`
    const boundary = mark * SLICE
    if (text.length + plain.length + 64 < boundary) {
      rows.push([id, `n${rows.length}`])
      text += `${plain}${ending(rows.length - 1)}`
      continue
    }
    const kind = atMark(mark)
    mark++
    // The record's text up to the byte that must fall just before the mark.
    const head = `${id},"pad`
    if (kind === 'quoted') {
      const pad = 'p'.repeat(boundary - 1 - text.length - head.length)
      const note = `pad${pad}\r\nafter`
      rows.push([id, note])
      text += `${head}${pad}\r\nafter"${ending(rows.length - 1)}`
    } else {
      const pad = 'p'.repeat(boundary - 1 - text.length - head.length - 1)
      rows.push([id, `pad${pad}`])
      text += `${head}${pad}"${{ crlf: '\r\n', cr: '\r', lf: '\n' }[kind]}`
    }
  }
  return { text, rows }
}

let emulator: RunningEmulator
beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: [] })
})
afterAll(() => emulator.close())

const exported = async (id: string, text: string): Promise<string[][]> => {
  emulator.setTable({ id, title: id, rawCsv: Buffer.from(text, 'utf8') })
  const { cli, outcome, parquetFiles } = await exportOneTable(emulator.baseUrl, id)
  expect(cli.exitCode, JSON.stringify(outcome.error)).toBe(0)
  const parquet = await readParquetTable(parquetFiles[0]!)
  emulator.removeTable(id)
  return parquet.rows.map((row) => [String(row.id), String(row.note)])
}

describe('a table whose records end in more than one way', () => {
  it('comes back whole when a few records end otherwise, at and across the parse slices', async () => {
    const kinds = ['cr', 'quoted', 'crlf', 'lf', 'crlf'] as const
    const { text, rows } = write(
      1.3 * 1024 * 1024,
      () => '\r\n',
      (mark) => kinds[mark % kinds.length]!,
    )
    const around = (mark: number) => text.slice(mark * SLICE - 1, mark * SLICE + 1)
    expect([1, 2, 3, 5].map(around)).toEqual(['\r\n', '\r\n', '\nr', '\rr'])
    expect(await exported('mixed-few', text)).toEqual(rows)
  }, 120_000)

  it('comes back whole when the ending changes with every record', async () => {
    const endings = ['\n', '\r\n', '\r']
    const kinds = ['quoted', 'crlf', 'cr', 'lf'] as const
    const { text, rows } = write(
      1.2 * 1024 * 1024,
      (row) => endings[row % 3]!,
      (mark) => kinds[mark % kinds.length]!,
    )
    expect(await exported('mixed-every', text)).toEqual(rows)
  }, 120_000)

  it('reads blank lines of a one-column table as empty values whatever they end in', async () => {
    const values = Array.from({ length: 70_000 }, (_, i) => (i % 5 === 3 ? '' : `v${i}`))
    const endings = ['\n', '\r\n', '\r', '\n', '\r\n', '\n']
    const text = `value\r\n${values.map((value, i) => `${value}${endings[Math.floor(i / 12_000)]}`).join('')}`
    emulator.setTable({ id: 'one-column', title: 'one-column', rawCsv: Buffer.from(text, 'utf8') })
    const { cli, outcome, parquetFiles } = await exportOneTable(emulator.baseUrl, 'one-column')
    expect(cli.exitCode, JSON.stringify(outcome.error)).toBe(0)
    const parquet = await readParquetTable(parquetFiles[0]!)
    expect(parquet.rows.map((row) => row.value ?? '')).toEqual(values)
  }, 120_000)
})
