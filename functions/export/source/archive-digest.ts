/**
 * What the run that wrote a raw archive recorded about it: the SHA-256 of the body it received, kept in its run
 * record (`_runs/dt=<date>/<run>.json`) next to the archive's key. Reprocess checks the archive against it, so that
 * another valid body put in its place (a different day's CSV, a hand-edited one) is refused, not published as the date.
 */
import * as z from 'zod'
import { RUNS_FOLDER } from '../core/constants.ts'
import type { WarehouseStore } from '../publish/store.ts'

/** The run that wrote the archive, the SHA-256 (hex) of the body it archived, and the encoding it read it in. */
export interface RecordedDigest {
  readonly runId: string
  readonly sha256: string
  /** The CSV's encoding as that run used it (a charset the service declared is in no other place). */
  readonly encoding?: string | undefined
}

/**
 * Only the fields read here; anything else in a run record is left alone. A record that does not parse is
 * skipped: it is not the object being checked, and with no digest found the reprocess warns instead.
 */
const RunRecordDigests = z.looseObject({
  runId: z.string(),
  finishedAt: z.string(),
  tables: z.array(
    z.looseObject({
      name: z.string(),
      status: z.string(),
      sha256: z
        .string()
        .regex(/^[0-9a-f]{64}$/)
        .optional(),
      encoding: z.string().optional(),
      objects: z.array(z.looseObject({ key: z.string() })),
    }),
  ),
})

/** Archive key -> the digest the last run that wrote it recorded, for one export date. */
type DateDigests = ReadonlyMap<string, RecordedDigest>

const readDateDigests = async (store: WarehouseStore, exportDate: string): Promise<DateDigests> => {
  const latest = new Map<string, RecordedDigest & { finishedAt: string }>()
  const keys = (await store.listKeys(`${RUNS_FOLDER}/dt=${exportDate}/`)).filter((key) => key.endsWith('.json'))
  for (const key of keys) {
    const body = await store.getObject(key)
    if (body === undefined) continue
    let json: unknown
    try {
      json = JSON.parse(body.toString('utf8'))
    } catch {
      continue
    }
    const record = RunRecordDigests.safeParse(json)
    if (!record.success) continue
    const { runId, finishedAt } = record.data
    for (const table of record.data.tables) {
      // Only a run that succeeded and wrote the archive vouches for it (a reprocess reads archives, never writes).
      if (table.status !== 'succeeded' || table.sha256 === undefined) continue
      for (const { key: archived } of table.objects) {
        const known = latest.get(archived)
        // Two exports of the same date: the later one's archive replaced the earlier one's.
        if (known === undefined || known.finishedAt < finishedAt) {
          latest.set(archived, { runId, sha256: table.sha256, encoding: table.encoding, finishedAt })
        }
      }
    }
  }
  return latest
}

/**
 * Looks up recorded digests, reading each date's run records once however many tables a reprocess rebuilds.
 * Returns undefined for an archive no run record vouches for (a warehouse written before run records kept it).
 */
export const archiveDigests = (
  store: WarehouseStore,
): ((archiveKey: string, exportDate: string) => Promise<RecordedDigest | undefined>) => {
  const byDate = new Map<string, Promise<DateDigests>>()
  return async (archiveKey, exportDate) => {
    let digests = byDate.get(exportDate)
    if (digests === undefined) {
      digests = readDateDigests(store, exportDate)
      byDate.set(exportDate, digests)
      // A listing that failed (a throttled S3) is tried again by the next table rather than failing them all.
      digests.catch(() => byDate.delete(exportDate))
    }
    const found = (await digests).get(archiveKey)
    return found && { runId: found.runId, sha256: found.sha256, encoding: found.encoding }
  }
}
