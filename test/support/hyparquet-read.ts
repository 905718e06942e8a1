/** A Parquet file's rows as hyparquet reads them: the second reader the writer's output is checked with. */
import { zstdDecompressSync } from 'node:zlib'
import { parquetReadObjects } from 'hyparquet'

export const readWithHyparquet = (bytes: Uint8Array): Promise<Record<string, unknown>[]> =>
  parquetReadObjects({
    file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
    compressors: { ZSTD: (input) => zstdDecompressSync(input) },
  })
