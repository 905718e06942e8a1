/**
 * The fault matrix's own check: the canary scan that runs after every case must find the token wherever a run
 * could leak it (printed text, metric payloads, plain files, Parquet and gzip), or its silence would prove nothing.
 */
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { gzipSync, zstdCompressSync } from 'node:zlib'
import { parquetWriteBuffer } from 'hyparquet-writer'
import { describe, expect, it } from 'vitest'
import { CANARY_TOKEN, type CanaryEvidence, scanForCanary } from '../../support/canary.ts'
import {
  assetsTable,
  emulator,
  evidence,
  exportDate,
  exportedWorkspace,
  useFaultMatrix,
} from '../../support/fault-matrix.ts'

useFaultMatrix()

describe('the canary scan', () => {
  it('finds the token wherever it was planted: text, payloads, plain files, Parquet and gzip', async () => {
    const { ws } = await exportedWorkspace()
    const planted: CanaryEvidence = {
      texts: { stderr: `line one\nleaked ${CANARY_TOKEN}\n` },
      payloads: { metric: { dimensions: { token: CANARY_TOKEN.slice(-16) } } },
      folders: [ws.out],
    }
    await writeFile(path.join(ws.out, '_runs', 'leak.json'), JSON.stringify({ token: CANARY_TOKEN }))
    // A body that holds the token is refused (NOT_CSV) before anything lands, so the Parquet and gzip copies the
    // scan must find are planted by hand, compressed as the exporter writes them.
    emulator.setTable(assetsTable(`Asset Tag,Notes\r\nA-1,${CANARY_TOKEN}\r\n`))
    const refused = await exportDate(ws, 'planted run', '--accept-changes')
    expect(refused.exitCode).toBe(1)
    expect(refused.stderr).toContain('NOT_CSV')
    const parquet = parquetWriteBuffer({
      columnData: [{ name: 'notes', data: [CANARY_TOKEN], type: 'STRING' }],
      codec: 'ZSTD',
      compressors: { ZSTD: (bytes: Uint8Array) => new Uint8Array(zstdCompressSync(bytes)) },
    })
    await writeFile(path.join(ws.out, 'leak.parquet'), new Uint8Array(parquet))
    await writeFile(path.join(ws.out, 'leak.csv.gz'), gzipSync(`notes\n${CANARY_TOKEN}\n`))

    const found = await scanForCanary(planted)
    // The planted copies are found; the scan after this case must not see them, so the folder is dropped.
    evidence.folders = []
    delete evidence.texts['planted run stdout']
    delete evidence.texts['planted run stderr']

    expect(found).toEqual(
      expect.arrayContaining([
        `stderr line 2: leaked ${CANARY_TOKEN}`,
        'payload metric',
        `file ${path.join(ws.out, '_runs', 'leak.json')} (bytes as stored)`,
        `file ${path.join(ws.out, 'leak.parquet')} (decoded content)`,
        `file ${path.join(ws.out, 'leak.csv.gz')} (decoded content)`,
      ]),
    )
  })
})
