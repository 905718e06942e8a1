/**
 * A column taken out of `columns.pseudonymize` or `columns.drop` after it was published so: the export refuses the
 * table with COLUMN_CONTROL_REMOVED, naming the column and saying the past stays as it is, however many dates pass,
 * and publishes nothing; named in `columns.publishInClear` it is published in clear from then on, the dates before
 * keeping it hashed; the registry then forgets it, and the entry, which changes nothing any more, is pointed out.
 * An erasure of such a table is not refused: it reads the pseudonyms back as pseudonyms.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, demoTables, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { queryWarehouse } from '../../functions/local/warehouse-sql.ts'
import { runCommandInProcess, runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'

const KEY = 'c'.repeat(40)
const DATES = ['2026-11-20', '2026-11-21', '2026-11-22', '2026-11-23']
const USERS = { id: '1003', name: 'users', key: ['user_id'] }

let emulator: RunningEmulator
let work: string
let keyFile: string
let token: string

const configWith = async (name: string, columns: object): Promise<string> => {
  const file = path.join(work, `${name}.json`)
  await writeFile(file, JSON.stringify({ source: { baseUrl: emulator.baseUrl }, tables: [{ ...USERS, columns }] }))
  return file
}

const exportOn = (config: string, out: string, date: string) => {
  emulator.upstream.setDate(date)
  return runExportInProcess([
    ...['--config', config, '--token-file', token, '--out', out, '--date', date],
    ...['--pseudonymization-key-file', keyFile],
  ])
}

const datesOf = async (out: string) => (await readdir(path.join(out, 'users'))).sort()
const registry = async (out: string) =>
  JSON.parse(await readFile(path.join(out, '_schemas', 'users.json'), 'utf8')) as Record<string, unknown>

beforeAll(async () => {
  emulator = await startInventoryEmulator({ tables: demoTables({ rows: { devices: 5, software: 5, users: 20 } }) })
  work = await tempDir('control-removal-')
  keyFile = path.join(work, 'key')
  await writeFile(keyFile, KEY)
  token = await tokenFile(DEMO_TOKEN)
})
afterAll(async () => {
  await emulator?.close()
})

describe('a column taken out of columns.pseudonymize or columns.drop', () => {
  it('is refused by name, until accepted in columns.publishInClear; the past stays hashed', async () => {
    const out = path.join(work, 'pseudonymized')
    const hashed = await configWith('hashed', { pseudonymize: ['e_mail'], drop: ['last_login'] })
    expect((await exportOn(hashed, out, DATES[0]!)).exitCode).toBe(0)
    expect(await registry(out)).toMatchObject({ pseudonymized: ['e_mail'], dropped: ['last_login'] })

    const forgotten = await configWith('forgotten', {})
    for (const date of DATES.slice(1, 3)) {
      const refused = await exportOn(forgotten, out, date)
      expect(refused.exitCode).toBe(1)
      expect(refused.stdout).toMatch(/users\s+FAILED COLUMN_CONTROL_REMOVED/)
      expect(refused.stderr).toContain(
        'the configuration of users would publish in clear what earlier dates do not: last_login (no longer in columns.drop: the dates already published stay without it); e_mail (no longer in columns.pseudonymize: the dates already published keep it hashed)',
      )
      expect(refused.stderr).toContain('add "last_login", "e_mail" to tables[].columns.publishInClear')
    }
    expect(await datesOf(out)).toEqual([`dt=${DATES[0]}`])

    const accepted = await configWith('accepted', { publishInClear: ['e_mail', 'last_login'] })
    const published = await exportOn(accepted, out, DATES[1]!)
    expect(published.exitCode, published.stderr).toBe(0)
    const emails = await queryWarehouse(
      out,
      'SELECT dt, e_mail FROM users WHERE e_mail IS NOT NULL ORDER BY dt LIMIT 100',
    )
    const byDate = Map.groupBy(emails.rows, (row) => String(row[0]))
    expect([...byDate.get(DATES[0]!)!].every((row) => /^[0-9a-f]{32}$/.test(String(row[1])))).toBe(true)
    expect([...byDate.get(DATES[1]!)!].every((row) => String(row[1]).includes('@'))).toBe(true)
    // The registry forgets the columns: without the entry the next export goes through, and with it the entry is
    // named as doing nothing any more.
    expect(await registry(out)).toMatchObject({ pseudonymized: [] })
    expect(await registry(out)).not.toHaveProperty('dropped')
    expect((await exportOn(forgotten, out, DATES[2]!)).exitCode).toBe(0)
    const again = await exportOn(accepted, out, DATES[3]!)
    expect(again.exitCode).toBe(0)
    expect(again.stderr).toContain(
      'columns.publishInClear names "e_mail", which is published in clear already: the entry changes nothing now and can go',
    )
  })

  it('is refused from a configuration naming it in two lists at once', async () => {
    const both = await configWith('both', { pseudonymize: ['e_mail'], publishInClear: ['e_mail'] })
    const result = await exportOn(both, path.join(work, 'both'), DATES[0]!)
    expect(result.exitCode).toBe(2)
    expect(result.stderr).toContain('"e_mail" is also in columns.pseudonymize; a column is published in clear or not')
  })

  it('does not stop an erasure, which keeps the pseudonyms it reads back', async () => {
    const out = path.join(work, 'erased')
    const hashed = await configWith('hashed-erase', { pseudonymize: ['e_mail'] })
    expect((await exportOn(hashed, out, DATES[0]!)).exitCode).toBe(0)
    const erased = await runCommandInProcess('erase', [
      ...['--config', hashed, '--out', out, '--table', 'users', '--where', 'user_id=10001'],
      ...['--pseudonymization-key-file', keyFile],
    ])
    expect(erased.exitCode, erased.stderr).toBe(0)
    expect(erased.stdout).toContain('users: 1 row matching user_id removed from 1 date')
    expect(await registry(out)).toMatchObject({ pseudonymized: ['e_mail'] })
    const refused = await exportOn(await configWith('forgotten-erase', {}), out, DATES[1]!)
    expect(refused.stdout).toMatch(/users\s+FAILED COLUMN_CONTROL_REMOVED/)
  })
})
