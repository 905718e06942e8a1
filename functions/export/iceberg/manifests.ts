/**
 * Iceberg's manifests and manifest lists: Avro object container files whose schemas and header keys the table
 * spec (format v2) fixes, field ids included. avsc does the Avro; this file holds only the spec's schemas and
 * the header metadata each file must carry. Each export date is one manifest, so replacing a date replaces one
 * entry of the manifest list and carries every other date's manifest over as it is.
 */
import { Readable } from 'node:stream'
import { buffer } from 'node:stream/consumers'
// avsc's container files alone (its types and utilities with them): the RPC services and IDL parser of the
// package's index stay out of the Lambda's bundle.
import type { Schema } from 'avsc'
import containers from 'avsc/lib/containers.js'
import { PARTITION_KEY } from '../core/constants.ts'
import type { IcebergSchema, PartitionSpec } from './table-metadata.ts'

export const ManifestEntryStatus = { EXISTING: 0, ADDED: 1, DELETED: 2 } as const

/** One data file as a manifest lists it (the spec's `data_file`, the fields this writer fills). */
export interface DataFile {
  /** The file's full URI, as every reader opens it. */
  readonly file_path: string
  readonly record_count: number
  readonly file_size_in_bytes: number
  /** The export date the file holds. */
  readonly dt: string
}

export interface ManifestEntry {
  readonly status: (typeof ManifestEntryStatus)[keyof typeof ManifestEntryStatus]
  readonly snapshotId: number | null
  /** Null on an ADDED entry, which inherits its manifest's sequence number. */
  readonly sequenceNumber: number | null
  readonly file: DataFile
}

/** One manifest as a manifest list names it (the spec's `manifest_file`). */
export interface ManifestFile {
  readonly manifest_path: string
  readonly manifest_length: number
  readonly partition_spec_id: number
  readonly content: 0
  readonly sequence_number: number
  readonly min_sequence_number: number
  readonly added_snapshot_id: number
  readonly added_files_count: number
  readonly existing_files_count: number
  readonly deleted_files_count: number
  readonly added_rows_count: number
  readonly existing_rows_count: number
  readonly deleted_rows_count: number
  readonly partitions: readonly {
    readonly contains_null: boolean
    readonly contains_nan: null
    readonly lower_bound: Buffer | null
    readonly upper_bound: Buffer | null
  }[]
  readonly key_metadata: null
}

const optional = (type: unknown) => ['null', type]
const field = (name: string, id: number, type: unknown, isOptional = false) =>
  isOptional ? { name, type: optional(type), default: null, 'field-id': id } : { name, type, 'field-id': id }

const DATA_FILE_SCHEMA = {
  type: 'record',
  name: 'r2',
  fields: [
    field('content', 134, 'int'),
    field('file_path', 100, 'string'),
    field('file_format', 101, 'string'),
    field('partition', 102, {
      type: 'record',
      name: 'r102',
      fields: [field(PARTITION_KEY, 1000, 'string', true)],
    }),
    field('record_count', 103, 'long'),
    field('file_size_in_bytes', 104, 'long'),
  ],
}

const MANIFEST_ENTRY_SCHEMA = {
  type: 'record',
  name: 'manifest_entry',
  fields: [
    field('status', 0, 'int'),
    field('snapshot_id', 1, 'long', true),
    field('sequence_number', 3, 'long', true),
    field('file_sequence_number', 4, 'long', true),
    field('data_file', 2, DATA_FILE_SCHEMA),
  ],
}

const MANIFEST_FILE_SCHEMA = {
  type: 'record',
  name: 'manifest_file',
  fields: [
    field('manifest_path', 500, 'string'),
    field('manifest_length', 501, 'long'),
    field('partition_spec_id', 502, 'int'),
    field('content', 517, 'int'),
    field('sequence_number', 515, 'long'),
    field('min_sequence_number', 516, 'long'),
    field('added_snapshot_id', 503, 'long'),
    field('added_files_count', 504, 'int'),
    field('existing_files_count', 505, 'int'),
    field('deleted_files_count', 506, 'int'),
    field('added_rows_count', 512, 'long'),
    field('existing_rows_count', 513, 'long'),
    field('deleted_rows_count', 514, 'long'),
    field(
      'partitions',
      507,
      {
        type: 'array',
        'element-id': 508,
        items: {
          type: 'record',
          name: 'r508',
          fields: [
            field('contains_null', 509, 'boolean'),
            field('contains_nan', 518, 'boolean', true),
            field('lower_bound', 510, 'bytes', true),
            field('upper_bound', 511, 'bytes', true),
          ],
        },
      },
      true,
    ),
    field('key_metadata', 519, 'bytes', true),
  ],
}

/** avsc checks every record against the schema as it writes it: a wrong one fails here, not in Athena. */
const containerFile = async (schema: object, records: readonly unknown[], metadata: Record<string, string>) => {
  // avsc's typings leave out `metadata`, which the encoder writes into the file's header.
  const options = {
    codec: 'deflate',
    metadata: Object.fromEntries(Object.entries(metadata).map(([key, value]) => [key, Buffer.from(value)])),
  }
  const encoder = new containers.streams.BlockEncoder(schema as Schema, options)
  const bytes = buffer(encoder)
  for (const record of records) encoder.write(record)
  encoder.end()
  return bytes
}

const readContainerFile = async <T>(bytes: Buffer): Promise<T[]> => {
  const records: T[] = []
  for await (const record of Readable.from([bytes]).pipe(new containers.streams.BlockDecoder()))
    records.push(record as T)
  return records
}

/** A manifest of one date's files: the bytes to store at `path`. */
export const encodeManifest = (
  entries: readonly ManifestEntry[],
  context: { readonly schema: IcebergSchema; readonly spec: PartitionSpec },
): Promise<Buffer> =>
  containerFile(
    MANIFEST_ENTRY_SCHEMA,
    entries.map((entry) => ({
      status: entry.status,
      snapshot_id: entry.snapshotId,
      sequence_number: entry.sequenceNumber,
      file_sequence_number: entry.sequenceNumber,
      data_file: {
        content: 0,
        file_path: entry.file.file_path,
        file_format: 'PARQUET',
        partition: { [PARTITION_KEY]: entry.file.dt },
        record_count: entry.file.record_count,
        file_size_in_bytes: entry.file.file_size_in_bytes,
      },
    })),
    {
      schema: JSON.stringify(context.schema),
      'schema-id': String(context.schema['schema-id']),
      'partition-spec': JSON.stringify(context.spec.fields),
      'partition-spec-id': String(context.spec['spec-id']),
      'format-version': '2',
      content: 'data',
    },
  )

interface StoredEntry {
  status: ManifestEntry['status']
  snapshot_id: number | null
  sequence_number: number | null
  data_file: { file_path: string; record_count: number; file_size_in_bytes: number; partition: { dt: string } }
}

/** A manifest's entries; an ADDED one's sequence number is its manifest's, as the spec's inheritance has it. */
export const decodeManifest = async (bytes: Buffer, manifest: ManifestFile): Promise<ManifestEntry[]> =>
  (await readContainerFile<StoredEntry>(bytes)).map((entry) => ({
    status: entry.status,
    snapshotId: entry.snapshot_id ?? manifest.added_snapshot_id,
    sequenceNumber: entry.sequence_number ?? manifest.sequence_number,
    file: {
      file_path: entry.data_file.file_path,
      record_count: entry.data_file.record_count,
      file_size_in_bytes: entry.data_file.file_size_in_bytes,
      dt: entry.data_file.partition.dt,
    },
  }))

/** The manifest list of a snapshot: the bytes to store at its `manifest-list`. */
export const encodeManifestList = (
  manifests: readonly ManifestFile[],
  snapshot: { readonly id: number; readonly parentId: number | undefined; readonly sequenceNumber: number },
): Promise<Buffer> =>
  containerFile(MANIFEST_FILE_SCHEMA, manifests, {
    'snapshot-id': String(snapshot.id),
    'parent-snapshot-id': snapshot.parentId === undefined ? 'null' : String(snapshot.parentId),
    'sequence-number': String(snapshot.sequenceNumber),
    'format-version': '2',
  })

export const decodeManifestList = (bytes: Buffer): Promise<ManifestFile[]> => readContainerFile<ManifestFile>(bytes)

/** The date a manifest of this writer holds: every manifest it writes is one date's. */
export const manifestDate = (manifest: ManifestFile): string | undefined =>
  manifest.partitions[0]?.lower_bound?.toString('utf8')

/** Files a manifest still lists as the table's (added or carried), its DELETED entries aside. */
export const liveFiles = (manifest: ManifestFile): number => manifest.added_files_count + manifest.existing_files_count
