import { truncateSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { toExportError } from '../../../functions/export/core/errors.ts'
import { describeError, reviveError } from '../../../functions/export/core/thread-errors.ts'
import { BatchSpool } from '../../../functions/export/normalize/batch-spool.ts'
import { tempDir } from '../../support/cli.ts'

const FUNCTIONS = path.resolve(import.meta.dirname, '../../../functions')

describe('coded errors', () => {
  it('no source file under functions/ throws or rejects with a plain Error', async () => {
    const files = (await readdir(FUNCTIONS, { recursive: true })).filter((f) => f.endsWith('.ts'))
    const plain: string[] = []
    for (const file of files) {
      const lines = (await readFile(path.join(FUNCTIONS, file), 'utf8')).split('\n')
      lines.forEach((line, i) => {
        if (/\bnew (Type|Range)?Error\(/.test(line)) plain.push(`${file}:${i + 1}: ${line.trim()}`)
      })
    }
    expect(plain).toEqual([])
  })

  it('a spool file cut short while it is read back fails as INTERNAL naming the file', async () => {
    const file = path.join(await tempDir('coded-errors-'), 'spool.bin')
    const spool = new BatchSpool(file)
    spool.append({
      firstRow: 1,
      rowCount: 1,
      columnCount: 1,
      bytes: new Uint8Array([65]),
      offsets: new Int32Array([0, 1]),
    })
    // As a disk that lost the file's tail would leave it.
    truncateSync(file, 10)

    expect(() => [...spool.batches()]).toThrow(
      expect.objectContaining({ code: 'INTERNAL', message: expect.stringContaining(`spool file ${file} is short`) }),
    )
    spool.close()
  })

  it('a full disk is STORAGE_FULL of class storage, on this thread and from a worker thread', async () => {
    // /dev/full answers every write with ENOSPC, as a full spool disk does.
    const { writeFile } = await import('node:fs/promises')
    const full = await writeFile('/dev/full', 'x').catch((error: unknown) => error)

    const here = toExportError(full, '1001')
    const fromWorker = reviveError(describeError(full), '1001')

    for (const error of [here, fromWorker]) {
      expect(error).toMatchObject({ code: 'STORAGE_FULL', failureClass: 'storage', retryable: true, tableId: '1001' })
      expect(error.message).toBe('table 1001: the disk is full')
    }
  })
})
