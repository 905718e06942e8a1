import { describe, expect, it } from 'vitest'
import { MAX_COLUMN_NAME_LENGTH } from '../../../functions/export/core/constants.ts'
import { nameColumns, snakeCase } from '../../../functions/export/normalize/columns.ts'

describe('snakeCase', () => {
  it.each([
    ['Device ID', 'device_id'],
    ['RAM (GB)', 'ram_gb'],
    ['Last Seen', 'last_seen'],
    ['E-Mail', 'e_mail'],
    ['  padded  ', 'padded'],
    ['Virtual?', 'virtual'],
    ['already_snake', 'already_snake'],
    ['camelCase', 'camelcase'],
    ['a--b__c', 'a_b_c'],
    ['Größe', 'grosse'],
    ['Straße', 'strasse'],
    ['GROẞE', 'grosse'],
    ['Café crème', 'cafe_creme'],
    ['Ørsted', 'orsted'],
    ['Æble', 'aeble'],
    ['Œuvre', 'oeuvre'],
    ['Łódź', 'lodz'],
    ['Þór', 'thor'],
    ['Ñandú', 'nandu'],
    ['İstanbul', 'istanbul'],
    ['ﬁle', 'file'],
    ['m²', 'm2'],
    ['名前', ''],
    ['数量 (個)', ''],
    ['😀', ''],
    ['', ''],
  ])('turns %j into %j', (header, name) => {
    expect(snakeCase(header)).toBe(name)
  })
})

describe('nameColumns', () => {
  const names = (headers: readonly string[], reserved?: readonly string[]) =>
    nameColumns(headers, reserved).map((c) => c.name)

  it.each([
    [
      ['name', 'name', 'Name'],
      ['name', 'name_2', 'name_3'],
    ],
    [
      ['name', 'name', 'name_2'],
      ['name', 'name_2', 'name_2_2'],
    ],
    [
      ['E-Mail', 'e mail', 'E_MAIL', 'email'],
      ['e_mail', 'e_mail_2', 'e_mail_3', 'email'],
    ],
    [
      ['', 'a', '', '名前'],
      ['column_1', 'a', 'column_3', 'column_4'],
    ],
    [
      ['', 'column_1'],
      ['column_1', 'column_1_2'],
    ],
    [
      ['2024 Budget', '1st', '3'],
      ['col_2024_budget', 'col_1st', 'col_3'],
    ],
  ])('names %j as %j, unique in order of appearance', (headers, expected) => {
    expect(names(headers)).toEqual(expected)
  })

  it('keeps the header text exactly as sent', () => {
    expect(nameColumns(['RAM (GB)', ' x '])).toEqual([
      { name: 'ram_gb', header: 'RAM (GB)' },
      { name: 'x', header: ' x ' },
    ])
  })

  it('never gives a data column a reserved (lineage) name', () => {
    expect(names(['_export_run_id', 'export run id'], ['export_run_id'])).toEqual([
      'export_run_id_2',
      'export_run_id_3',
    ])
  })

  it('cuts a long name to 255 characters without a trailing underscore', () => {
    const [name] = names(['Measured value '.repeat(20)])
    expect(name!.length).toBeLessThanOrEqual(MAX_COLUMN_NAME_LENGTH)
    expect(name).toBe('measured_value_'.repeat(17).slice(0, 255).replace(/_+$/, ''))
  })

  it('fits the suffix of a repeated long name inside 255 characters', () => {
    const long = 'x'.repeat(300)
    expect(names([long, long, long])).toEqual(['x'.repeat(255), `${'x'.repeat(253)}_2`, `${'x'.repeat(253)}_3`])
  })

  it('does not leave a double underscore before a suffix when the cut falls on one', () => {
    const header = `${'a'.repeat(252)} b`
    expect(names([header, header])).toEqual([`${'a'.repeat(252)}_b`, `${'a'.repeat(252)}_2`])
  })

  it('never makes a name with "__", which is reserved for <column>__text companions', () => {
    const cut = `${'a'.repeat(252)}__b`
    const headers = ['a__text', 'x _ y', cut, cut, `${'b'.repeat(253)}_c`, `${'b'.repeat(253)}_c`, '', '']
    for (const name of names(headers)) expect(name).not.toContain('__')
  })

  it('gives every name the Athena shape: lowercase ASCII, letter first, at most 255 characters', () => {
    const headers = ['', '1', '_', 'Ä', '名', '-x-', 'A'.repeat(400), '9'.repeat(400)]
    for (const name of names(headers)) expect(name).toMatch(/^[a-z][a-z0-9_]{0,254}$/)
  })
})

describe('nameColumns on many repeats', () => {
  it('names 100,000 identical headers uniquely, in order, the same way every time', () => {
    const headers = Array.from({ length: 100_000 }, () => 'Name')
    const first = nameColumns(headers).map((c) => c.name)
    expect(new Set(first).size).toBe(100_000)
    expect(first.slice(0, 3)).toEqual(['name', 'name_2', 'name_3'])
    expect(first.at(-1)).toBe('name_100000')
    expect(nameColumns(headers).map((c) => c.name)).toEqual(first)
  })

  it('skips a suffix a literal header already took, as before', () => {
    expect(nameColumns(['a', 'a_2', 'a', 'a', 'A_2']).map((c) => c.name)).toEqual(['a', 'a_2', 'a_3', 'a_4', 'a_2_2'])
  })

  it('gives the partition column name to no data column when it is reserved', () => {
    expect(nameColumns(['DT', 'dt', 'Dt'], ['dt']).map((c) => c.name)).toEqual(['dt_2', 'dt_3', 'dt_4'])
  })
})
