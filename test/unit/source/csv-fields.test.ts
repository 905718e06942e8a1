/**
 * The read-back's CSV text (source/csv-fields.ts) is handed on in chunks written into a ring of reused buffers:
 * a chunk stays as it was until two more are taken, and the one after that is written where it was.
 */
import { describe, expect, it } from 'vitest'
import { CHUNK_BYTES, TextOut } from '../../../functions/export/source/csv-fields.ts'

const chunkOf = (out: TextOut, fill: number): Buffer => {
  const bytes = Buffer.alloc(CHUNK_BYTES, fill)
  out.field(bytes, 0, bytes.length)
  return out.take()
}

describe('TextOut', () => {
  it('keeps each chunk as it was until two more are taken, then writes the next into its memory', () => {
    const out = new TextOut()
    const first = chunkOf(out, 0x61)
    const second = chunkOf(out, 0x62)
    const third = chunkOf(out, 0x63)
    expect([first, second, third].map((chunk) => [chunk.length, chunk[0], chunk.at(-1)])).toEqual([
      [CHUNK_BYTES, 0x61, 0x61],
      [CHUNK_BYTES, 0x62, 0x62],
      [CHUNK_BYTES, 0x63, 0x63],
    ])
    const fourth = chunkOf(out, 0x64)
    expect(fourth.buffer).toBe(first.buffer)
    expect(first[0]).toBe(0x64)
    expect([second[0], third[0]]).toEqual([0x62, 0x63])
  })
})
