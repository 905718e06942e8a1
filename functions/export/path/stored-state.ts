/**
 * What the table's path reads of the warehouse before its bytes open, and the steps that apply it: the registry
 * (a setting that changes a published column is refused, from the configuration and the registry alone) and the
 * recorded erasure requests (schema/erasure-requests.ts), checked against the run's key. After naming, the rows
 * the requests match leave the records (normalize/erased-rows.ts); at the guard, a table set to hold them
 * (`erasedRows: "hold"`) is held instead. Only a table with requests pays for the matching: one keyed digest per
 * cell of each column they name that is in clear.
 */
import type { TableConfig } from '../core/config.ts'
import { ErasedRowsHeldError, ErasureRequestUnusableError } from '../core/errors.ts'
import type { PseudonymizationKey } from '../core/pseudonymization-key.ts'
import type { ErasedRowsRecord } from '../core/run-record.ts'
import { dropErasedRows, unmatchableColumns } from '../normalize/erased-rows.ts'
import { keyCheck } from '../normalize/personal-data.ts'
import type { WarehouseStore } from '../publish/store.ts'
import { type ErasureRequest, readErasureRequests } from '../schema/erasure-requests.ts'
import { readTableSchema } from '../schema/registry.ts'
import type { TableSchema } from '../schema/table-schema.ts'
import type { RawArchiveWriter } from '../source/raw-archive.ts'
import { type NamedTable, refuseHistoryChanges } from './name-and-type.ts'
import { archive } from './table-steps.ts'

/** What the path reads of the warehouse before the table's bytes open. */
export interface StoredState {
  /** The registry (a rewrite's target schema), undefined before the table's first export. */
  readonly stored: TableSchema | undefined
  readonly erasures: readonly ErasureRequest[]
  /** The run's key, or the one read for the requests when the run started without it. */
  readonly key: PseudonymizationKey | undefined
}

/**
 * State: before anything is downloaded, a setting that changes a published column is refused and an erasure
 * request the run cannot apply fails the table. A rewrite (`history`) writes against the schema it asks for.
 */
export const readState = async (
  table: TableConfig,
  store: WarehouseStore,
  context: {
    readonly history?: { readonly schema: TableSchema } | undefined
    readonly pseudonymizationKey?: PseudonymizationKey | undefined
    /**
     * Reads the key when the table has requests and the run has none: a request recorded after the run started
     * (while it waited for the table's lease), on a stack whose key the run did not read because nothing needed it.
     */
    readonly readPseudonymizationKey?: (() => Promise<PseudonymizationKey>) | undefined
  },
): Promise<StoredState> => {
  const stored = context.history?.schema ?? (await readTableSchema(store, table.name))
  if (context.history === undefined) refuseHistoryChanges(table, stored)
  const requests = await readErasureRequests(store, table.name)
  const key =
    requests.length > 0 && context.pseudonymizationKey === undefined
      ? await context.readPseudonymizationKey?.()
      : context.pseudonymizationKey
  return { stored, erasures: usableErasures(table, requests, key), key }
}

const RECORD_AGAIN = 'record the request again (npm run erase -- --table TABLE --where COLUMN=VALUE ...)'

/** The requests recorded for the table, each usable with `key`; else the table fails before its bytes open. */
const usableErasures = (
  table: TableConfig,
  requests: readonly ErasureRequest[],
  key: PseudonymizationKey | undefined,
): readonly ErasureRequest[] => {
  const [first] = requests
  if (first === undefined) return requests
  const unusable = (request: ErasureRequest, reason: string, hint: string) =>
    new ErasureRequestUnusableError({ tableId: table.id, tableName: table.name, request: request.id, reason, hint })
  if (key === undefined) {
    throw unusable(
      first,
      'is matched by digests made with the pseudonymization key, and this run has no key',
      "give the key: --pseudonymization-key-file FILE or INVENTORY_PSEUDONYMIZATION_KEY locally, the stack's pseudonymization secret on AWS (docs/personal-data.md)",
    )
  }
  const check = keyCheck(key)
  const other = requests.find((request) => request.keyCheck !== check)
  if (other !== undefined) {
    throw unusable(
      other,
      "was made with another pseudonymization key than this run's",
      `run with the key it was made with; after a key rotation, ${RECORD_AGAIN.replace('TABLE', table.name)} with the new key, then npm run erase -- --forget ${other.id}`,
    )
  }
  return requests
}

/** A named table without the rows of `requests`, and what was left out (once its batches end). */
export interface ErasedTable {
  readonly named: NamedTable
  readonly erased: (() => ErasedRowsRecord) | undefined
}

/** Drop: the rows the requests match leave the named table's records before anything reads a value. */
export const dropErased = (
  table: TableConfig,
  named: NamedTable,
  requests: readonly ErasureRequest[],
  context: {
    readonly key: PseudonymizationKey | undefined
    readonly previous: TableSchema | undefined
    /** The written columns whose cells are pseudonyms. */
    readonly pseudonymized: readonly string[]
  },
): ErasedTable => {
  if (requests.length === 0 || context.key === undefined) return { named, erased: undefined }
  const types = new Map(context.previous?.columns.map((c) => [c.name, c.type]))
  const columns = named.columns.map(({ name }) => ({
    name,
    pseudonymized: context.pseudonymized.includes(name),
    type: types.get(name),
  }))
  const [missing] = unmatchableColumns(requests, columns)
  if (missing !== undefined) {
    const request = requests.find((r) => r.where.some((c) => c.column === missing))!
    throw new ErasureRequestUnusableError({
      tableId: table.id,
      tableName: table.name,
      request: request.id,
      reason: `matches on ${missing}, which this export does not have (columns.drop, or the service no longer sends it), so its rows cannot be told apart`,
      hint: `${RECORD_AGAIN.replace('TABLE', table.name)} on a column the table still has, then npm run erase -- --forget ${request.id}`,
    })
  }
  const filter = dropErasedRows(named.records, columns, requests, context.key)
  const ids = requests.map((r) => r.id)
  return { named: { ...named, records: filter.records }, erased: () => ({ requests: ids, rows: filter.dropped() }) }
}

/**
 * Archive, for erased rows: a body that held rows of an erasure request is not kept as received, since the raw
 * archive would hold them in clear; the date's data is published without them all the same.
 */
export const archiveUnlessErased = async (
  raw: RawArchiveWriter | undefined,
  erased: ErasedRowsRecord | undefined,
): ReturnType<typeof archive> => {
  if (raw === undefined || erased === undefined || erased.rows === 0) return archive(raw)
  await raw.abort()
  return {
    warnings: [
      `the raw archive was not kept: the body held ${erased.rows} ${erased.rows === 1 ? 'row' : 'rows'} of recorded erasure requests, left out of the data`,
    ],
  }
}

/** Guard, for erased rows: a table set to hold them is held, unless an operator accepts publishing without them. */
export const holdErasedRows = (
  table: TableConfig,
  erased: ErasedRowsRecord | undefined,
  acceptChanges: boolean | undefined,
): void => {
  if (erased === undefined || erased.rows === 0 || table.erasedRows !== 'hold' || acceptChanges === true) return
  throw new ErasedRowsHeldError({ tableId: table.id, tableName: table.name, ...erased })
}
