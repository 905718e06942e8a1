import { describe, expect, it } from 'vitest'
import { parseExportConfig } from '../../../functions/export/core/config.ts'
import type { ConfigError } from '../../../functions/export/core/errors.ts'
import {
  checkGuards,
  guardSettings,
  heldFirst,
  identityFindings,
  nextBaseline,
} from '../../../functions/export/guards/guards.ts'

const config = (extra: { export?: object; guards?: unknown } = {}) => ({
  source: { baseUrl: 'https://inventory.example.com' },
  tables: [{ id: '1001', name: 'devices', ...(extra.guards === undefined ? {} : { guards: extra.guards }) }],
  ...(extra.export === undefined ? {} : { export: extra.export }),
})
const problemsOf = (input: unknown): string[] => {
  try {
    parseExportConfig(input)
    return []
  } catch (error) {
    return (error as ConfigError).problems.map((p) => `${p.field}: ${p.message}`)
  }
}

const columns = (...names: string[]) => names.map((name) => ({ name, header: name }))
const baseline = { exportDate: '2026-11-01', runId: 'r1', rows: 1000, columns: columns('a', 'b') }
const snapshot = (rows: number, ...names: string[]) => ({
  exportDate: '2026-11-02',
  runId: 'r2',
  rows,
  columns: columns(...(names.length > 0 ? names : ['a', 'b'])),
})
const defaults = parseExportConfig(config()).export.guards

describe('guard configuration', () => {
  it('defaults to hold below 10 %, warn below 50 %, warn on removed and added columns', () => {
    expect(defaults).toEqual({ holdBelow: 0.1, warnBelow: 0.5, columnsRemoved: 'warn', columnsAdded: 'warn' })
  })

  it.each([
    [{ export: { guards: { holdBelow: 1.5 } } }, 'export.guards.holdBelow: must be a ratio from 0 to 1'],
    [{ export: { guards: { holdBelow: 0.6 } } }, 'export.guards.holdBelow: holdBelow must not exceed warnBelow'],
    [{ export: { guards: { columnsRemoved: 'drop' } } }, 'export.guards.columnsRemoved'],
    [{ guards: { warnBelow: 0.05 } }, 'tables[0].guards.holdBelow: holdBelow 0.1 must not exceed warnBelow 0.05'],
    [{ guards: { holdBelow: -0.1 } }, 'tables[0].guards'],
    [{ guards: { holdbelow: 0.2 } }, 'tables[0].guards.holdbelow'],
    [{ export: { guards: { warnBellow: 0.2 } } }, 'export.guards.warnBellow'],
  ])('rejects %j, naming the field', (input, expected) => {
    expect(problemsOf(config(input)).join('\n')).toContain(expected)
  })

  it('merges a table override over the defaults; false switches a guard or every guard off', () => {
    const table = parseExportConfig(config({ guards: { holdBelow: false, columnsRemoved: 'hold' } })).tables[0]!
    expect(guardSettings(defaults, table.guards)).toEqual({ ...defaults, holdBelow: false, columnsRemoved: 'hold' })
    expect(guardSettings(defaults, false)).toBeUndefined()
  })
})

describe('the guards', () => {
  it('hold below holdBelow, warn below warnBelow, and say nothing above', () => {
    expect(checkGuards(baseline, snapshot(99), defaults, false).map((f) => f.action)).toEqual(['held'])
    expect(checkGuards(baseline, snapshot(100), defaults, false).map((f) => f.action)).toEqual(['warned'])
    expect(checkGuards(baseline, snapshot(500), defaults, false)).toEqual([])
  })

  it('hold zero rows after a non-empty export even with holdBelow 0, but not with holdBelow false', () => {
    expect(checkGuards(baseline, snapshot(0), { ...defaults, holdBelow: 0 }, false)[0]?.action).toBe('held')
    expect(checkGuards(baseline, snapshot(0), { ...defaults, holdBelow: false }, false)[0]?.action).toBe('warned')
  })

  it('compare nothing without a baseline (a first export, a backfill of a new date) or after an empty export', () => {
    expect(checkGuards(undefined, snapshot(0), defaults, false)).toEqual([])
    expect(checkGuards({ ...baseline, rows: 0 }, snapshot(0), defaults, false)).toEqual([])
  })

  it('compare a later baseline too: the object a re-export of an earlier date would replace', () => {
    const replaced = { ...baseline, exportDate: '2026-11-02' }
    expect(checkGuards(replaced, snapshot(0), defaults, false)[0]).toMatchObject({
      code: 'ROW_COUNT_DROP',
      action: 'held',
      previousExportDate: '2026-11-02',
    })
  })

  it('compare only the row count with a baseline whose footer predates its columns', () => {
    const { columns: _, ...rowsOnly } = baseline
    const findings = checkGuards(rowsOnly, snapshot(1000, 'c'), defaults, false)
    expect(findings).toEqual([])
  })

  it('mark what would hold as accepted when the change is accepted', () => {
    const findings = checkGuards(baseline, snapshot(5, 'a'), { ...defaults, columnsRemoved: 'hold' }, true)
    expect(findings.map((f) => [f.code, f.action])).toEqual([
      ['ROW_COUNT_DROP', 'accepted'],
      ['COLUMNS_REMOVED', 'accepted'],
    ])
  })

  it('list the holding findings first, so the first names the error code', () => {
    const findings = checkGuards(baseline, snapshot(400, 'a', 'c'), { ...defaults, columnsAdded: 'hold' }, false)
    expect(findings.map((f) => [f.code, f.action])).toEqual([
      ['COLUMNS_ADDED', 'held'],
      ['ROW_COUNT_DROP', 'warned'],
      ['COLUMNS_REMOVED', 'warned'],
    ])
  })

  it('keep the later baseline when a backfill is published after a newer export', () => {
    const later = { ...baseline, exportDate: '2026-11-05' }
    expect(nextBaseline(later, snapshot(3))).toBe(later)
    expect(nextBaseline(baseline, snapshot(3))).toMatchObject({ exportDate: '2026-11-02', rows: 3 })
  })
})

describe('the identity guard', () => {
  const registry = {
    version: 1,
    table: 'devices',
    sourceTableId: '1001',
    firstExportDate: '2026-11-01',
    lastExportDate: '2026-11-01',
    columns: [],
    latestExport: { ...baseline, columns: [...columns('a'), { name: 'a_2', header: 'a' }] },
  } as const
  const ambiguous = [{ kind: 'count', header: 'a', names: ['a'], previous: ['a', 'a_2'] }] as const

  it('holds identical headers that changed in number, quoting the header and naming the columns', () => {
    expect(identityFindings(ambiguous, registry, false)).toEqual([
      {
        code: 'COLUMN_IDENTITY_AMBIGUOUS',
        action: 'held',
        message:
          '2 columns had the header "a" in the previous export (dt=2026-11-01): a, a_2; this export has 1 column (a), and columns with identical headers can be told apart only by their order',
        previousExportDate: '2026-11-01',
        columns: ['a', 'a_2'],
      },
    ])
  })

  it('holds a header whose text changed while another normalizes to the same name, naming both', () => {
    const retexted = [{ kind: 'text', name: 'a_2', header: 'A ', previousHeader: 'A', twins: ['a'] }] as const
    expect(identityFindings(retexted, registry, false)).toEqual([
      {
        code: 'COLUMN_IDENTITY_AMBIGUOUS',
        action: 'held',
        message:
          'the column a_2 had the header "A" in the previous export (dt=2026-11-01) and has "A " in this one, while the headers of a normalize to the same name: such columns are told apart by their header text, and without it only by their order',
        previousExportDate: '2026-11-01',
        columns: ['a_2', 'a'],
      },
    ])
  })

  it('publishes them as accepted under acceptChanges, and finds nothing on a first export', () => {
    expect(identityFindings(ambiguous, registry, true).map((f) => f.action)).toEqual(['accepted'])
    expect(identityFindings(ambiguous, undefined, false)).toEqual([])
  })

  it('puts a hold first, so that it names the error code, whichever guard it comes from', () => {
    const accepted = identityFindings(ambiguous, registry, true)
    const held = checkGuards(baseline, snapshot(10), defaults, false)
    expect(heldFirst([...accepted, ...held]).map((f) => `${f.code} ${f.action}`)).toEqual([
      'ROW_COUNT_DROP held',
      'COLUMN_IDENTITY_AMBIGUOUS accepted',
    ])
  })
})
