/**
 * What the answer's headers say about its bytes: the Content-Encoding they were compressed with (decoded here, as
 * they stream, before anything hashes, archives or parses them) and the charset its Content-Type declares.
 */
import { pipeline, type Readable } from 'node:stream'
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib'

/** The compressed transfers a table download asks for and decodes. */
export const ACCEPT_ENCODING = 'gzip, br, deflate'

const DECOMPRESSORS = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  br: createBrotliDecompress,
  deflate: createInflate,
} as const
type Compression = keyof typeof DECOMPRESSORS

/** The answer's one compression (`identity` when none), or the coding that cannot be decoded. */
export const contentCoding = (
  header: string | undefined,
): { readonly coding: Compression | 'identity' } | { readonly unsupported: string } => {
  const codings = (header ?? '')
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity')
  if (codings.length === 0) return { coding: 'identity' }
  const [only, ...more] = codings
  // Only one was asked for at a time; two stacked (or one we never named) are refused, not guessed at.
  if (more.length > 0) return { unsupported: codings.join(', ') }
  return Object.hasOwn(DECOMPRESSORS, only!) ? { coding: only as Compression } : { unsupported: only! }
}

/** Bytes of the body as they came over the wire (compressed), counted as they are read. */
export interface WireCount {
  bytes: number
}

async function* counted(source: AsyncIterable<Buffer>, wire: WireCount): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    wire.bytes += chunk.length
    yield chunk
  }
}

/**
 * The body decoded as it streams, with backpressure, so memory stays bounded whatever the ratio. An error of the
 * connection (a cut, a stall) reaches the reader unchanged; zlib's own failures carry its `Z_*` or brotli codes.
 */
export const decodedBody = (
  body: Readable,
  coding: Compression | 'identity',
  wire: WireCount,
): { readonly body: AsyncIterable<Buffer>; readonly destroy: () => void } => {
  if (coding === 'identity') return { body: counted(body, wire), destroy: () => body.destroy() }
  const decompressor = DECOMPRESSORS[coding]()
  // The callback owns pipeline's rejection; the reader gets the same error from the decompressor it iterates.
  const decoded = pipeline(counted(body, wire), decompressor, () => undefined)
  return {
    body: decoded,
    destroy: () => {
      body.destroy()
      decoded.destroy()
    },
  }
}

/** Whether `error` is the decompressor's: the compressed stream itself is damaged or cut. */
export const isDecompressionError = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | undefined)?.code
  return (
    typeof code === 'string' && (code.startsWith('Z_') || code.startsWith('ERR_BROTLI') || code.startsWith('ERR__'))
  )
}

/** The `charset` parameter of a Content-Type, lowercased, or undefined. */
export const declaredCharset = (contentType: string | undefined): string | undefined => {
  const match = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType ?? '')
  const label = (match?.[1] ?? match?.[2])?.trim().toLowerCase()
  return label === '' ? undefined : label
}
