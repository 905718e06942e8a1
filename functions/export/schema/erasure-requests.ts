/**
 * Erasure requests as the warehouse remembers them: one small object per request beside the table's registry
 * (`_erasures/<table>/<id>.json`), holding the conditions as keyed digests (core/digest-condition.ts), never the
 * values, and the key check of the key that made them. Every later run of the table reads them before it opens
 * the table's bytes, and its path leaves out the rows they match (normalize/erased-rows.ts), so an erased person
 * does not come back while the service still has them. The id is a digest of the table and the conditions: the
 * same request recorded twice is one record.
 */
import { createHash } from 'node:crypto'
import * as z from 'zod'
import { ERASURES_FOLDER } from '../core/constants.ts'
import { type DigestCondition, DigestConditionSchema, DigestSchema } from '../core/digest-condition.ts'
import type { WarehouseStore } from '../publish/store.ts'
import { parseStateObject } from './state-object.ts'

const ERASURE_DOCUMENT_VERSION = 1

export interface ErasureRequest {
  readonly version: typeof ERASURE_DOCUMENT_VERSION
  /** 12 hex digits: the digest of the table and its conditions. */
  readonly id: string
  readonly table: string
  /** When the request was first recorded (ISO instant). */
  readonly recordedAt: string
  /** The key check of the key the digests were made with (normalize/personal-data.ts keyCheck). */
  readonly keyCheck: string
  /** A row matches when, for every column named, its cell is one of that column's values. */
  readonly where: readonly DigestCondition[]
}

const ID_PATTERN = /^[0-9a-f]{12}$/

const ErasureRequestDocument = z.looseObject({
  version: z.literal(ERASURE_DOCUMENT_VERSION),
  id: z.string().regex(ID_PATTERN),
  table: z.string().min(1),
  recordedAt: z.iso.datetime(),
  keyCheck: DigestSchema,
  where: z.array(DigestConditionSchema).min(1),
}) satisfies z.ZodType<ErasureRequest>

const requestKey = (table: string, id: string): string => `${ERASURES_FOLDER}/${table}/${id}.json`

/** Whether `text` has the shape of a request id, so a mistyped id can be told from an unknown one. */
export const isErasureRequestId = (text: string): boolean => ID_PATTERN.test(text)

/** The request's id: the same table and conditions give the same id, in whatever order they were given. */
export const erasureRequestId = (table: string, where: readonly DigestCondition[]): string => {
  const conditions = where.map((c) => JSON.stringify([c.column, c.digest, c.typed ?? {}])).sort()
  return createHash('sha256')
    .update(JSON.stringify([table, conditions]))
    .digest('hex')
    .slice(0, 12)
}

const parseRequest = (store: WarehouseStore, key: string, body: Buffer): ErasureRequest =>
  parseStateObject(ErasureRequestDocument, body, { root: store.root, key })

/** The requests recorded for `table`, oldest first; STATE_CORRUPT names an object of the wrong shape. */
export const readErasureRequests = async (store: WarehouseStore, table: string): Promise<ErasureRequest[]> =>
  readRequests(store, `${ERASURES_FOLDER}/${table}/`)

/** The tables that have a recorded request: one listing, for a caller that reads the key only when needed. */
export const tablesWithErasureRequests = async (store: WarehouseStore): Promise<ReadonlySet<string>> => {
  const keys = await store.listKeys(`${ERASURES_FOLDER}/`)
  return new Set(keys.filter((k) => k.endsWith('.json')).map((k) => k.split('/')[1]!))
}

/** Every request recorded in the warehouse, by table, oldest first. */
export const listErasureRequests = async (store: WarehouseStore): Promise<ErasureRequest[]> =>
  (await readRequests(store, `${ERASURES_FOLDER}/`)).sort((a, b) => a.table.localeCompare(b.table))

const readRequests = async (store: WarehouseStore, prefix: string): Promise<ErasureRequest[]> => {
  const requests: ErasureRequest[] = []
  for (const key of (await store.listKeys(prefix)).filter((k) => k.endsWith('.json'))) {
    const body = await store.getObject(key)
    if (body !== undefined) requests.push(parseRequest(store, key, body))
  }
  return requests.sort((a, b) => a.recordedAt.localeCompare(b.recordedAt) || a.id.localeCompare(b.id))
}

/**
 * Records the request unless it is recorded already (its id is its conditions'), before any date is rewritten:
 * from then on every export of the table leaves its rows out. Returns the request as stored.
 */
export const recordErasureRequest = async (
  store: WarehouseStore,
  request: { readonly table: string; readonly keyCheck: string; readonly where: readonly DigestCondition[] },
  now: Date = new Date(),
): Promise<{ readonly request: ErasureRequest; readonly recorded: boolean }> => {
  const id = erasureRequestId(request.table, request.where)
  const key = requestKey(request.table, id)
  const existing = await store.getObject(key)
  if (existing !== undefined) return { request: parseRequest(store, key, existing), recorded: false }
  const stored: ErasureRequest = {
    version: ERASURE_DOCUMENT_VERSION,
    id,
    table: request.table,
    recordedAt: now.toISOString(),
    keyCheck: request.keyCheck,
    where: request.where,
  }
  await store.putObject(key, `${JSON.stringify(stored, null, 2)}\n`, 'application/json')
  return { request: stored, recorded: true }
}

/** Forgets a request: the next export of its table publishes the rows it matched, if the service still has them. */
export const forgetErasureRequest = (store: WarehouseStore, request: ErasureRequest): Promise<void> =>
  store.deleteObject(requestKey(request.table, request.id))
