/**
 * The fault matrix's own check: the canary scan that runs after every case must find the token wherever a run
 * could leak it (printed text, metric payloads, plain files, Parquet and gzip), or its silence would prove nothing.
 */
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CANARY_TOKEN, type CanaryEvidence, scanForCanary } from '../../support/canary.ts'
import {
  assetsTable,
  DATE,
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
    emulator.setTable(assetsTable(`Asset Tag,Notes\r\nA-1,${CANARY_TOKEN}\r\n`))
    // One row after many would be held by the row-count guard; accepted, so the planted cell is published.
    expect((await exportDate(ws, 'planted run', '--accept-changes')).exitCode).toBe(0)

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
        `file ${path.join(ws.out, 'assets', `dt=${DATE}`, 'data.parquet')} (decoded content)`,
        `file ${path.join(ws.out, '_raw', 'assets', `dt=${DATE}`, 'body.csv.gz')} (decoded content)`,
      ]),
    )
  })
})
