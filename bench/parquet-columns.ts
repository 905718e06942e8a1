/**
 * Bytes a column takes in the Parquet files under a folder, from each file's footer (hyparquet reads only the
 * footer's bytes here): what one column costs of the output, such as the `_row_fingerprint` lineage hash.
 */
import { open, readdir } from 'node:fs/promises'
import path from 'node:path'
import { parquetMetadata } from 'hyparquet'

const footer = async (file: string): Promise<Uint8Array> => {
  const handle = await open(file, 'r')
  try {
    const { size } = await handle.stat()
    const tail = Buffer.alloc(8)
    await handle.read(tail, 0, 8, size - 8)
    const length = tail.readUInt32LE(0) + 8
    const bytes = Buffer.alloc(length)
    await handle.read(bytes, 0, length, size - length)
    return bytes
  } finally {
    await handle.close()
  }
}

/** The compressed bytes of `column`'s chunks, pages and dictionaries, summed over every `.parquet` under `folder`. */
export const columnBytes = async (folder: string, column: string): Promise<number> => {
  let total = 0
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.parquet')) continue
    const metadata = parquetMetadata(await footer(path.join(entry.parentPath, entry.name)))
    for (const group of metadata.row_groups)
      for (const chunk of group.columns)
        if (chunk.meta_data?.path_in_schema.join('.') === column) total += Number(chunk.meta_data.total_compressed_size)
  }
  return total
}
