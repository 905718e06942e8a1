/**
 * An Iceberg v2 table's metadata document (the `metadata/<n>-<uuid>.metadata.json` a catalog points at), made and
 * moved as plain values: a new table, a new schema when columns arrive or widen, a new snapshot. Field ids are
 * the table's column identity: a name keeps its id for good, a new name takes the next one, and an id is never
 * given again, so a column dropped and added back is a new column, as Iceberg's schema evolution requires.
 *
 * The data files are the Hive layout's own Parquet objects, which carry no field ids: the table's default name
 * mapping (`schema.name-mapping.default`) maps each id to its column's name, as Iceberg does for imported files.
 * `dt` is an identity partition whose value stands in the manifests, not in the files.
 */
import { randomInt, randomUUID } from 'node:crypto'
import type { ColumnType } from '../core/constants.ts'
import { PARTITION_KEY } from '../core/constants.ts'
import { StateCorruptError } from '../core/errors.ts'

export type IcebergPrimitive = 'long' | 'double' | 'boolean' | 'date' | 'timestamptz' | 'string'

export interface IcebergField {
  readonly id: number
  readonly name: string
  readonly required: false
  readonly type: IcebergPrimitive
}

export interface IcebergSchema {
  readonly type: 'struct'
  readonly 'schema-id': number
  readonly fields: readonly IcebergField[]
}

export interface PartitionSpec {
  readonly 'spec-id': number
  readonly fields: readonly { name: string; transform: 'identity'; 'source-id': number; 'field-id': number }[]
}

export interface Snapshot {
  readonly 'snapshot-id': number
  readonly 'parent-snapshot-id'?: number
  readonly 'sequence-number': number
  readonly 'timestamp-ms': number
  readonly 'manifest-list': string
  readonly summary: Readonly<Record<string, string>> & { readonly operation: 'append' | 'overwrite' | 'delete' }
  readonly 'schema-id': number
}

export interface TableMetadata {
  readonly 'format-version': 2
  readonly 'table-uuid': string
  readonly location: string
  readonly 'last-sequence-number': number
  readonly 'last-updated-ms': number
  readonly 'last-column-id': number
  readonly 'current-schema-id': number
  readonly schemas: readonly IcebergSchema[]
  readonly 'default-spec-id': 0
  readonly 'partition-specs': readonly PartitionSpec[]
  readonly 'last-partition-id': number
  readonly 'default-sort-order-id': 0
  readonly 'sort-orders': readonly [{ readonly 'order-id': 0; readonly fields: readonly [] }]
  readonly properties: Readonly<Record<string, string>>
  readonly 'current-snapshot-id': number
  readonly refs: Readonly<Record<string, { readonly 'snapshot-id': number; readonly type: 'branch' }>>
  readonly snapshots: readonly Snapshot[]
  readonly 'snapshot-log': readonly { readonly 'timestamp-ms': number; readonly 'snapshot-id': number }[]
  readonly 'metadata-log': readonly { readonly 'timestamp-ms': number; readonly 'metadata-file': string }[]
}

/** A column as the table publishes it, in its Parquet objects' order. */
export interface PublishedColumn {
  readonly name: string
  readonly type: ColumnType
}

/** Athena's (Hive's) names of the warehouse's types, as Iceberg names them; Parquet's timestamps are UTC. */
const ICEBERG_TYPES: Readonly<Record<ColumnType, IcebergPrimitive>> = {
  bigint: 'long',
  double: 'double',
  boolean: 'boolean',
  date: 'date',
  timestamp: 'timestamptz',
  string: 'string',
}

/** The columns of the current schema as the warehouse names their types, `dt` aside. */
export const publishedColumns = (metadata: TableMetadata): PublishedColumn[] => {
  const warehouseType = new Map(Object.entries(ICEBERG_TYPES).map(([hive, iceberg]) => [iceberg, hive as ColumnType]))
  return currentSchema(metadata)
    .fields.filter((field) => field.name !== PARTITION_KEY)
    .map(({ name, type }) => ({ name, type: warehouseType.get(type)! }))
}

/** Iceberg's own first id for partition fields. */
const FIRST_PARTITION_FIELD_ID = 1000
/** No snapshot yet, in the form every reader takes. */
const NO_SNAPSHOT = -1

/** The spec's unique 64-bit snapshot ids, kept within JSON's exact integers since this document is JSON. */
export const newSnapshotId = (): number => randomInt(1, 2 ** 48)

/** Metadata files the log keeps, as Iceberg's `write.metadata.previous-versions-max` does by default. */
const METADATA_LOG_ENTRIES = 100

const nameMapping = (fields: readonly IcebergField[]): string =>
  JSON.stringify(fields.map((field) => ({ 'field-id': field.id, names: [field.name] })))

/**
 * The schema for `columns` (with `dt`) over `previous`: every name keeps its id and a new one takes the next. A
 * column whose type changes (a rewrite's retype: the warehouse's types have none of Iceberg's promotions, int to
 * long or float to double) becomes a new column under the same name, as Iceberg's drop and add make it.
 */
const evolveFields = (previous: readonly IcebergField[], lastColumnId: number, columns: readonly PublishedColumn[]) => {
  // By name, the latest field that had it (fields come oldest schema first).
  const byName = new Map(previous.map((field) => [field.name, field]))
  let last = lastColumnId
  const fields = [...columns, { name: PARTITION_KEY, type: 'string' as const }].map(({ name, type }) => {
    const icebergType = ICEBERG_TYPES[type]
    const known = byName.get(name)
    const id = known && known.type === icebergType ? known.id : ++last
    return { id, name, required: false as const, type: icebergType }
  })
  return { fields, lastColumnId: last }
}

const sameFields = (a: readonly IcebergField[], b: readonly IcebergField[]): boolean =>
  a.length === b.length && a.every((field, i) => field.id === b[i]?.id && field.type === b[i]?.type)

/** A table with no snapshot, partitioned by `dt`, at `location` (the URI its files' paths start with). */
export const newTableMetadata = (location: string, columns: readonly PublishedColumn[], now: number): TableMetadata => {
  const { fields, lastColumnId } = evolveFields([], 0, columns)
  const dt = fields.find((field) => field.name === PARTITION_KEY)!
  return {
    'format-version': 2,
    'table-uuid': randomUUID(),
    location,
    'last-sequence-number': 0,
    'last-updated-ms': now,
    'last-column-id': lastColumnId,
    'current-schema-id': 0,
    schemas: [{ type: 'struct', 'schema-id': 0, fields }],
    'default-spec-id': 0,
    'partition-specs': [
      {
        'spec-id': 0,
        fields: [
          { name: PARTITION_KEY, transform: 'identity', 'source-id': dt.id, 'field-id': FIRST_PARTITION_FIELD_ID },
        ],
      },
    ],
    'last-partition-id': FIRST_PARTITION_FIELD_ID,
    'default-sort-order-id': 0,
    'sort-orders': [{ 'order-id': 0, fields: [] }],
    properties: { 'format-version': '2', 'schema.name-mapping.default': nameMapping(fields) },
    'current-snapshot-id': NO_SNAPSHOT,
    refs: {},
    snapshots: [],
    'snapshot-log': [],
    'metadata-log': [],
  }
}

export const currentSchema = (metadata: TableMetadata): IcebergSchema => {
  const schema = metadata.schemas.find((s) => s['schema-id'] === metadata['current-schema-id'])
  if (!schema) {
    throw new StateCorruptError({
      key: 'metadata',
      where: metadata.location,
      reason: `the metadata names schema ${metadata['current-schema-id']} as current, which it lacks`,
    })
  }
  return schema
}

export const currentSnapshot = (metadata: TableMetadata): Snapshot | undefined =>
  metadata.snapshots.find((s) => s['snapshot-id'] === metadata['current-snapshot-id'])

/** The metadata with `columns` as its current schema: unchanged when they are the current one's. */
export const withColumns = (metadata: TableMetadata, columns: readonly PublishedColumn[]): TableMetadata => {
  const schema = currentSchema(metadata)
  const { fields, lastColumnId } = evolveFields(
    metadata.schemas.flatMap((s) => s.fields),
    metadata['last-column-id'],
    columns,
  )
  if (sameFields(schema.fields, fields)) return metadata
  const schemaId = Math.max(...metadata.schemas.map((s) => s['schema-id'])) + 1
  // One id per name: the current schema's, or for a column no longer in it its last one, so files written before
  // a column left still read it by name.
  const everField = new Map<string, IcebergField>()
  for (const field of [...metadata.schemas.flatMap((s) => s.fields), ...fields]) everField.set(field.name, field)
  return {
    ...metadata,
    'last-column-id': lastColumnId,
    'current-schema-id': schemaId,
    schemas: [...metadata.schemas, { type: 'struct', 'schema-id': schemaId, fields }],
    properties: { ...metadata.properties, 'schema.name-mapping.default': nameMapping([...everField.values()]) },
  }
}

/** The metadata with `snapshot` made current on `main`, and `previousFile` (this metadata's own file) logged. */
export const withSnapshot = (
  metadata: TableMetadata,
  snapshot: Snapshot,
  previousFile: string | undefined,
): TableMetadata => ({
  ...metadata,
  'last-sequence-number': snapshot['sequence-number'],
  'last-updated-ms': snapshot['timestamp-ms'],
  'current-snapshot-id': snapshot['snapshot-id'],
  refs: { ...metadata.refs, main: { 'snapshot-id': snapshot['snapshot-id'], type: 'branch' } },
  snapshots: [...metadata.snapshots, snapshot],
  'snapshot-log': [
    ...metadata['snapshot-log'],
    { 'timestamp-ms': snapshot['timestamp-ms'], 'snapshot-id': snapshot['snapshot-id'] },
  ],
  'metadata-log':
    previousFile === undefined
      ? metadata['metadata-log']
      : [
          ...metadata['metadata-log'],
          { 'timestamp-ms': metadata['last-updated-ms'], 'metadata-file': previousFile },
        ].slice(-METADATA_LOG_ENTRIES),
})
