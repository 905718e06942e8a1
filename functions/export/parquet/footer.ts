/**
 * The file's footer, held as bytes while the file grows. The footer lists every row group's column chunks with
 * their statistics, so it grows with the table; kept as JS objects until the end, that was about 21 KB of heap
 * per group of 23 columns (2.6 MiB for a 1 GB table), and twice that while the footer was written. Here each
 * group's metadata is serialized when the group closes (about 2 KB), and the footer splices those bytes in.
 *
 * hyparquet-writer's `writeMetadata` does all the Thrift: a group's bytes are cut out of the footer it writes for
 * that group alone, and the footer is the one it writes with no groups, with the groups put into its (empty)
 * `row_groups` list. Thrift's compact protocol makes that exact: a struct in a list is encoded the same wherever
 * it stands, and only the list's header says how many there are.
 */
import type { FileMetaData, RowGroup, SchemaElement } from 'hyparquet'
import { ByteWriter } from 'hyparquet-writer/src/bytewriter.js'
import { writeMetadata } from 'hyparquet-writer/src/metadata.js'

type FooterFields = Omit<FileMetaData, 'metadata_length' | 'schema' | 'row_groups'>

/** Thrift compact protocol: the element type of a list of structs. */
const STRUCT = 12
const EMPTY_GROUP: RowGroup = { columns: [], total_byte_size: 0n, num_rows: 0n }

/** `writeMetadata`'s bytes, without the metadata length it appends. */
const serialize = (schema: SchemaElement[], fields: Partial<FooterFields>, rowGroups: RowGroup[]): Uint8Array => {
  const writer = new ByteWriter()
  writeMetadata(writer, { ...fields, schema, row_groups: rowGroups } as FileMetaData)
  const bytes = writer.getBytes()
  return bytes.subarray(0, bytes.length - 4)
}

/** Where the `row_groups` list's header stands in the metadata written with `fields` and no row groups. */
const rowGroupsHeader = (schema: SchemaElement[], fields: Partial<FooterFields>) => {
  const empty = serialize(schema, fields, [])
  const one = serialize(schema, fields, [EMPTY_GROUP])
  let at = 0
  while (empty[at] === one[at]) at++
  return { empty, at }
}

export class FooterMetadata {
  readonly #schema: SchemaElement[]
  /** Where a lone group's bytes start in the metadata `writeMetadata` writes for it. */
  readonly #groupStart: number
  readonly #emptyLength: number
  readonly #rowGroups: Uint8Array[] = []
  #rowGroupBytes = 0

  constructor(schema: SchemaElement[]) {
    this.#schema = schema
    const { empty, at } = rowGroupsHeader(schema, {})
    this.#groupStart = at + 1
    this.#emptyLength = empty.length
  }

  get rowGroups(): number {
    return this.#rowGroups.length
  }

  /** Bytes held for the row groups so far. */
  get rowGroupBytes(): number {
    return this.#rowGroupBytes
  }

  /** Serializes a closed row group's metadata; nothing of `group` is kept. */
  addRowGroup(group: RowGroup): void {
    const alone = serialize(this.#schema, {}, [group])
    const length = alone.length - this.#emptyLength
    this.#rowGroups.push(alone.slice(this.#groupStart, this.#groupStart + length))
    this.#rowGroupBytes += length
  }

  /** Appends the file's metadata and its length (not the closing magic number). */
  write(writer: ByteWriter, fields: FooterFields): void {
    const { empty, at } = rowGroupsHeader(this.#schema, fields)
    const start = writer.offset
    writer.appendBytes(empty.subarray(0, at))
    const count = this.#rowGroups.length
    // The list's header, as writeMetadata writes it (an empty list's element type is left 0).
    if (count === 0) writer.appendUint8(empty[at]!)
    else if (count > 14) {
      writer.appendUint8(0xf0 | STRUCT)
      writer.appendVarInt(count)
    } else writer.appendUint8((count << 4) | STRUCT)
    for (const group of this.#rowGroups) writer.appendBytes(group)
    writer.appendBytes(empty.subarray(at + 1))
    writer.appendUint32(writer.offset - start)
  }
}
