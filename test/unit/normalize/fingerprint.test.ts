import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { RowFingerprinter } from '../../../functions/export/normalize/fingerprint.ts'
import { type RecordBatch, RecordBatchBuilder } from '../../../functions/export/normalize/record-batch.ts'

/** One batch of the records (strings as the service sent them; '' is an empty cell). */
const batchOf = (records: string[][]): RecordBatch => {
  const builder = new RecordBatchBuilder(records[0]!.length)
  for (const record of records) builder.add(record.map((cell) => Buffer.from(cell).toString('latin1')))
  return builder.flush()!
}

const fingerprintsOf = (names: string[], records: string[][]): bigint[] => [
  ...new RowFingerprinter(names).fingerprints([batchOf(records)], records.length),
]

/** The documented encoding, written out independently of the implementation. */
const documented = (cells: Record<string, string>): bigint => {
  const parts = Object.entries(cells)
    .filter(([, value]) => value !== '')
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .flatMap(([name, value]) => {
      const bytes = Buffer.from(value, 'utf8')
      const length = Buffer.alloc(4)
      length.writeUInt32BE(bytes.length)
      return [Buffer.from(name, 'utf8'), Buffer.of(0), length, bytes]
    })
  return createHash('sha256').update(Buffer.concat(parts)).digest().readBigInt64BE(0)
}

describe('RowFingerprinter', () => {
  it('hashes the non-empty cells in name order exactly as docs/analysts.md documents', () => {
    const long = 'x'.repeat(100)
    const [first, second] = fingerprintsOf(
      ['os', 'device_id', 'notes'],
      [
        ['Windows 11', '000001', ''],
        ['macOS 14 é 😀', '000002', long],
      ],
    )
    expect(first).toBe(documented({ os: 'Windows 11', device_id: '000001', notes: '' }))
    expect(second).toBe(documented({ os: 'macOS 14 é 😀', device_id: '000002', notes: long }))
  })

  it.each([
    ['the CSV in UTC', '2026-11-14T06:26:39Z', 'true'],
    ["the workbook's reading", '2026-11-14 06:26:39', 'true'],
    ['an offset', '2026-11-14T08:26:39+02:00', 'TRUE'],
    ['other spellings', '2026-11-14t06:26:39.000z', 'True'],
    ['a compact offset', '2026-11-14 01:26:39-0500', 'true'],
  ])('hashes an instant and a boolean in one spelling: %s', (_form, instant, flag) => {
    const [fingerprint] = fingerprintsOf(['id', 'seen', 'on'], [['000001', instant, flag]])
    // The CSV's spelling is the one spelling, so a CSV that writes it keeps the fingerprints it always had.
    expect(fingerprint).toBe(documented({ id: '000001', seen: '2026-11-14T06:26:39Z', on: 'true' }))
  })

  it('keeps milliseconds, and hashes other text as it is', () => {
    const [withMs, workbookMs, notInstant, text] = fingerprintsOf(
      ['a'],
      [['2026-11-14T06:26:39.250Z'], ['2026-11-14 06:26:39.25'], ['2026-11-31T06:26:39Z'], ['TRUE story']],
    )
    expect(withMs).toBe(documented({ a: '2026-11-14T06:26:39.250Z' }))
    expect(workbookMs).toBe(withMs)
    expect(notInstant).toBe(documented({ a: '2026-11-31T06:26:39Z' }))
    expect(text).toBe(documented({ a: 'TRUE story' }))
  })

  it('makes room for a spelling longer than its cell', () => {
    const cells = Array.from({ length: 50 }, () => '2026-11-14 06:26')
    const names = cells.map((_, i) => `c${String(i).padStart(2, '0')}`)
    const [fingerprint] = fingerprintsOf(names, [cells])
    expect(fingerprint).toBe(documented(Object.fromEntries(names.map((n) => [n, '2026-11-14T06:26:00Z']))))
  })

  it('gives the same fingerprint whatever the column order and after an added column that is empty', () => {
    const before = fingerprintsOf(['device_id', 'os'], [['000001', 'Windows 11']])
    const reordered = fingerprintsOf(['os', 'device_id'], [['Windows 11', '000001']])
    const widened = fingerprintsOf(['device_id', 'os', 'owner'], [['000001', 'Windows 11', '']])
    expect(reordered).toEqual(before)
    expect(widened).toEqual(before)
  })

  it('tells apart values that only differ in where one cell ends and the next begins', () => {
    const [a, b, c] = fingerprintsOf(
      ['a', 'b'],
      [
        ['xy', 'z'],
        ['x', 'yz'],
        ['xy', ''],
      ],
    )
    expect(new Set([a, b, c]).size).toBe(3)
  })

  it('fingerprints rows over several batches in order', () => {
    const fingerprinter = new RowFingerprinter(['id'])
    const all = [...fingerprinter.fingerprints([batchOf([['1'], ['2']]), batchOf([['3']])], 3)]
    expect(all).toEqual([documented({ id: '1' }), documented({ id: '2' }), documented({ id: '3' })])
  })

  it('hashes rows of the same length alike and rows after one longer than its input buffer from their own bytes', () => {
    // Rows of one length share a view of the hash input; a row past the buffer's 4 KiB moves it, and the rows of
    // the earlier lengths after it must be read from the new buffer, not from a view of the old one.
    const records = [
      ['a', '1'],
      ['b', '2'],
      ['c', 'x'.repeat(5000)],
      ['d', '3'],
      ['e', '4'],
      ['a', '1'],
    ]
    const all = fingerprintsOf(['device_id', 'owner'], records)
    expect(all).toEqual(records.map(([device_id, owner]) => documented({ device_id: device_id!, owner: owner! })))
    expect(all[5]).toBe(all[0])
  })

  it('agrees with the documented hash for random cells of every length up to 40 bytes, to the last byte of a batch', () => {
    let seed = 7
    const random = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
      return seed % n
    }
    const alphabet = ['a', 'Z', '0', ' ', ',', 'é', '😀', '"']
    const cell = () => Array.from({ length: random(41) }, () => alphabet[random(alphabet.length)]).join('')
    const names = ['n', 'a_long_column_name', 'id', 'xy', 'z12']
    for (let batch = 0; batch < 20; batch++) {
      const records = Array.from({ length: 1 + random(30) }, () => names.map(() => (random(4) === 0 ? '' : cell())))
      const expected = records.map((record) => documented(Object.fromEntries(names.map((n, i) => [n, record[i]!]))))
      expect(fingerprintsOf(names, records)).toEqual(expected)
    }
  })

  it('agrees with the documented hash on a thousand rows, as many negative as positive', () => {
    const records = Array.from({ length: 1000 }, (_, i) => [`device-${i}`, i % 3 === 0 ? '' : `owner ${i * 7919}`])
    const all = fingerprintsOf(['device_id', 'owner'], records)
    expect(all).toEqual(records.map(([device_id, owner]) => documented({ device_id: device_id!, owner: owner! })))
    expect(all.filter((value) => value < 0n).length).toBeGreaterThan(400)
    expect(all.filter((value) => value > 0n).length).toBeGreaterThan(400)
  })
})
