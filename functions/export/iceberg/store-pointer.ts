/**
 * The metadata pointer where no catalog holds it (a local warehouse, or a bucket read without Glue): one small
 * object per table naming its current metadata file, moved only by a conditional write on the version read.
 */
import * as z from 'zod'
import { ICEBERG_POINTERS_FOLDER } from '../core/constants.ts'
import type { WarehouseStore } from '../publish/store.ts'
import { parseStateObject } from '../schema/state-object.ts'
import type { CurrentMetadata, MetadataPointer } from './metadata-pointer.ts'

const pointerKey = (table: string): string => `${ICEBERG_POINTERS_FOLDER}/${table}.json`

const PointerDocument = z.looseObject({ metadataKey: z.string().min(1) })

export const storeMetadataPointer = (store: WarehouseStore): MetadataPointer => ({
  async read(table: string): Promise<CurrentMetadata | undefined> {
    const stored = await store.getObjectVersion(pointerKey(table))
    if (stored === undefined) return undefined
    const { metadataKey } = parseStateObject(PointerDocument, stored.body, { root: store.root, key: pointerKey(table) })
    return { metadataKey, token: stored.version }
  },
  async swap(table: string, metadataKey: string, token: string | undefined): Promise<void> {
    const body = `${JSON.stringify({ metadataKey })}\n`
    await store.putObjectIfVersion(pointerKey(table), body, 'application/json', token)
  },
})
