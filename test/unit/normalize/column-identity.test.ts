import { describe, expect, it } from 'vitest'
import {
  ambiguousHeaders,
  type KnownColumns,
  nameKnownColumns,
} from '../../../functions/export/normalize/column-identity.ts'
import { nameColumns } from '../../../functions/export/normalize/columns.ts'

/** The registry after a first export of `headers`, every column in the latest export. */
const knownAfter = (headers: readonly string[], dropped: readonly string[] = []): KnownColumns => {
  const columns = nameColumns(headers).filter((c) => !dropped.includes(c.name))
  return { registered: columns, latest: columns }
}
const names = (headers: readonly string[], known: KnownColumns | undefined) =>
  nameKnownColumns(headers, [], known).map((c) => `${c.header}=${c.name}`)

describe('nameKnownColumns', () => {
  it('names a first export by position, as nameColumns does', () => {
    expect(names(['Email', 'EMAIL'], undefined)).toEqual(['Email=email', 'EMAIL=email_2'])
  })

  it('keeps each name with its header when the service shows them in another order', () => {
    const known = knownAfter(['Device ID', 'Email', 'EMAIL', 'email'])
    expect(names(['email', 'EMAIL', 'Device ID', 'Email'], known)).toEqual([
      'email=email_3',
      'EMAIL=email_2',
      'Device ID=device_id',
      'Email=email',
    ])
  })

  it('gives a name nobody else holds to a header the registry does not know (a rename)', () => {
    const known = knownAfter(['Email', 'EMAIL'])
    expect(names(['EMAIL', 'eMail'], known)).toEqual(['EMAIL=email_2', 'eMail=email'])
  })

  it('leaves the name of a column that went to nobody else', () => {
    expect(names(['EMAIL'], knownAfter(['Email', 'EMAIL']))).toEqual(['EMAIL=email_2'])
  })

  it('finds a column that came back by the header the registry kept for it', () => {
    const registered = nameColumns(['Email', 'EMAIL'])
    const known = { registered, latest: registered.filter((c) => c.header === 'Email') }
    expect(names(['email', 'EMAIL'], known)).toEqual(['email=email', 'EMAIL=email_2'])
  })

  it('names identical headers in order, keeping them apart from the ones it knows', () => {
    const known = knownAfter(['Email', 'EMAIL', 'EMAIL'])
    expect(names(['EMAIL', 'email', 'EMAIL'], known)).toEqual(['EMAIL=email_2', 'email=email', 'EMAIL=email_3'])
  })

  it('keeps the reserved-name suffix a header got (DT becomes dt_2)', () => {
    const first = nameKnownColumns(['DT', 'Name'], ['dt'], undefined)
    expect(nameKnownColumns(['Name', 'DT'], ['dt'], { registered: first }).map((c) => c.name)).toEqual(['name', 'dt_2'])
  })
})

describe('ambiguousHeaders', () => {
  const check = (before: readonly string[], after: readonly string[], dropped: readonly string[] = []) => {
    const known = knownAfter(before, dropped)
    return ambiguousHeaders(nameKnownColumns(after, [], known), known, dropped)
  }

  it('is empty on a first export', () => {
    expect(ambiguousHeaders(nameColumns(['a', 'a']), undefined, [])).toEqual([])
  })

  it('is empty when identical headers stay as many, and when headers that only normalize alike move', () => {
    expect(check(['a', 'a'], ['a', 'a'])).toEqual([])
    expect(check(['Email', 'EMAIL'], ['EMAIL', 'Email'])).toEqual([])
    expect(check(['Email', 'EMAIL'], ['EMAIL'])).toEqual([])
  })

  it('names identical headers that lose or gain a column, with the names before and now', () => {
    expect(check(['x', 'a', 'a'], ['x', 'a'])).toEqual([
      { kind: 'count', header: 'a', names: ['a'], previous: ['a', 'a_2'] },
    ])
    expect(check(['a'], ['a', 'a'])).toEqual([{ kind: 'count', header: 'a', names: ['a', 'a_2'], previous: ['a'] }])
  })

  it('names a header whose text changed while another normalizes to the same name', () => {
    expect(check(['Email', 'EMAIL'], ['EMAIL ', 'Email '])).toEqual([
      { kind: 'text', name: 'email', header: 'EMAIL ', previousHeader: 'Email', twins: ['email_2'] },
      { kind: 'text', name: 'email_2', header: 'Email ', previousHeader: 'EMAIL', twins: ['email'] },
    ])
    expect(check(['Email', 'EMAIL'], ['Email '])).toEqual([
      { kind: 'text', name: 'email', header: 'Email ', previousHeader: 'Email', twins: ['email_2'] },
    ])
    // A lone column whose header changes case or spacing keeps its name: nothing else could have it.
    expect(check(['Email'], ['EMAIL '])).toEqual([])
  })

  it('names identical headers that stay as many while other columns come or go', () => {
    expect(check(['id', 'Owner', 'Owner'], ['id', 'Holder', 'Owner', 'Owner'])).toEqual([
      { kind: 'order', header: 'Owner', names: ['owner', 'owner_2'], added: ['holder'], removed: [] },
    ])
    expect(check(['id', 'x', 'Owner', 'Owner'], ['id', 'Owner', 'Owner'])).toEqual([
      { kind: 'order', header: 'Owner', names: ['owner', 'owner_2'], added: [], removed: ['x'] },
    ])
    expect(check(['id', 'Owner', 'Owner'], ['Owner', 'id', 'Owner'])).toEqual([])
  })

  it('counts a dropped twin: identical headers that stay as many are not held', () => {
    expect(check(['Owner', 'Owner'], ['Owner', 'Owner'], ['owner'])).toEqual([])
  })
})
