/**
 * A column's identity is its header, not its position. Headers that normalize to one name get `_2`, `_3`... by
 * position on a table's first export; after that each keeps the name it was registered with, found by its header
 * text, so a column moved in the saved table's UI moves nothing (its values, its drop or pseudonymize setting).
 * Headers that are textually identical can only be told apart by position: when their number changes, which is
 * which cannot be known, and `ambiguousHeaders` names them for the guards to hold the export.
 */
import { baseName, derivedFrom, type NamedColumn, nameColumns } from './columns.ts'

/** A column of earlier exports: its name and the header text it last had. */
interface KnownColumn {
  readonly name: string
  readonly header?: string | undefined
}

/** What earlier exports of the table named, as the schema registry keeps it. */
export interface KnownColumns {
  /** Every data column the registry has (no `__text` companions, no dropped columns), in registry order. */
  readonly registered: readonly KnownColumn[]
  /** The columns of the latest published export, when the registry recorded them. */
  readonly latest?: readonly KnownColumn[] | undefined
}

/** `items` grouped by `key`, each group in order; items without a key are left out. */
const groupBy = <T>(items: readonly T[], key: (item: T) => string | undefined): Map<string, T[]> => {
  const groups = new Map<string, T[]>()
  for (const item of items) {
    const k = key(item)
    if (k === undefined) continue
    const group = groups.get(k)
    if (group === undefined) groups.set(k, [item])
    else group.push(item)
  }
  return groups
}

const byHeader = <T extends { readonly header?: string | undefined }>(columns: readonly T[]): Map<string, T[]> =>
  groupBy(columns, (c) => c.header)

/**
 * Names the headers as nameColumns does, but a header text the registry knows keeps its registered names: when
 * it appears as many times as the registry (or the latest export) has columns with that header, its positions
 * take those names in registry order. Without `known` (the table's first export) names go by position.
 */
export const nameKnownColumns = (
  headers: readonly string[],
  reserved: readonly string[],
  known: KnownColumns | undefined,
): NamedColumn[] => {
  if (known === undefined) return nameColumns(headers, reserved)
  const registered = byHeader(known.registered)
  const latest = new Set((known.latest ?? []).map((c) => c.name))
  const claimed = new Map<number, string>()
  for (const [header, positions] of groupBy([...headers.keys()], (i) => headers[i])) {
    const base = baseName(header, positions[0]!)
    const all = (registered.get(header) ?? []).filter((c) => derivedFrom(c.name, base) && !reserved.includes(c.name))
    // A column that came back after a while is still known; a long-gone twin of it is not counted.
    const names = [all, all.filter((c) => latest.has(c.name))].find((list) => list.length === positions.length)
    for (const [k, column] of (names ?? []).entries()) claimed.set(positions[k]!, column.name)
  }
  return nameColumns(headers, reserved, claimed)
}

/**
 * Columns this export cannot match to the published ones, for the identity guard to hold: identical headers
 * (`count`) whose number changed, or a header of several that normalize to one name whose text changed (`text`).
 */
export type AmbiguousHeader =
  | {
      readonly kind: 'count'
      /** The header text shared by several columns. */
      readonly header: string
      /** The names its columns get in this export, dropped ones left out. */
      readonly names: readonly string[]
      /** The names its columns had in the latest export. */
      readonly previous: readonly string[]
    }
  | {
      readonly kind: 'order'
      /** The header text shared by several columns, as many now as in the latest export. */
      readonly header: string
      /** The names its columns get in this export, dropped ones included. */
      readonly names: readonly string[]
      /** Columns (of any header) added and removed since the latest export, dropped ones left out. */
      readonly added: readonly string[]
      readonly removed: readonly string[]
    }
  | {
      readonly kind: 'text'
      /** The column whose header text changed. */
      readonly name: string
      readonly header: string
      /** Its header text in the latest export. */
      readonly previousHeader: string
      /** The other columns whose headers normalize to the same name, now or in the latest export. */
      readonly twins: readonly string[]
    }

/**
 * What this export cannot match to the published columns (empty on a first export):
 * - header texts shared by several columns (now or in the latest export) whose names, less the dropped ones,
 *   differ from the names the latest export had for that header;
 * - header texts shared by several columns, as many as before, while other columns were added or removed;
 * - a column whose header text changed while other headers normalize to the same name (now or in the latest
 *   export): `Email`/`EMAIL` that come back as `EMAIL `/`Email ` are matched by text, and with no text left to
 *   match, only their order would say which is which.
 */
export const ambiguousHeaders = (
  named: readonly NamedColumn[],
  known: KnownColumns | undefined,
  dropped: readonly string[],
): AmbiguousHeader[] => {
  if (known === undefined) return []
  const latest = known.latest ?? known.registered
  const before = byHeader(latest)
  const ambiguous: AmbiguousHeader[] = []
  const kept = named.map((c) => c.name).filter((name) => !dropped.includes(name))
  const added = kept.filter((name) => !latest.some((c) => c.name === name))
  const removed = latest.map((c) => c.name).filter((name) => !kept.includes(name))
  for (const [header, columns] of byHeader(named)) {
    const previous = (before.get(header) ?? []).map((c) => c.name)
    if (previous.length === 0 || (columns.length < 2 && previous.length < 2)) continue
    const was = new Set(previous)
    const names = columns.map((c) => c.name).filter((name) => !dropped.includes(name))
    if (names.length !== was.size || names.some((name) => !was.has(name))) {
      ambiguous.push({ kind: 'count', header, names, previous })
    } else if (added.length > 0 || removed.length > 0) {
      // As many as before, but others came or went: one of them renamed and a new one with this header added
      // looks just the same, and its order would give the renamed one's name to the new one.
      ambiguous.push({ kind: 'order', header, names: columns.map((c) => c.name), added, removed })
    }
  }
  return [...ambiguous, ...retextedTwins(named, latest)]
}

/** Columns of a base name shared by several (now or before) whose header text is not the one they had. */
const retextedTwins = (named: readonly NamedColumn[], latest: readonly KnownColumn[]): AmbiguousHeader[] => {
  const base = (header: string | undefined) => (header === undefined ? undefined : baseName(header, 0))
  const now = groupBy(named, (c) => base(c.header))
  const before = groupBy(latest, (c) => base(c.header))
  const headerBefore = new Map(latest.map((c) => [c.name, c.header]))
  const found: AmbiguousHeader[] = []
  for (const [key, columns] of now) {
    const earlier = before.get(key) ?? []
    if (columns.length < 2 && earlier.length < 2) continue
    for (const { name, header } of columns) {
      const previousHeader = headerBefore.get(name)
      if (previousHeader === undefined || previousHeader === header) continue
      const twins = [...new Set([...columns, ...earlier].map((c) => c.name))].filter((n) => n !== name)
      found.push({ kind: 'text', name, header, previousHeader, twins })
    }
  }
  return found
}
