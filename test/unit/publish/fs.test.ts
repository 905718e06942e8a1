import { readdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { FolderWarehouseStore } from '../../../functions/export/publish/fs.ts'
import { tempDir } from '../../support/cli.ts'

describe('the folder store refuses a warehouse folder it cannot create', () => {
  // Node's recursive mkdir would spin forever under /proc; the store's own walk stops at the first refusal.
  it.each([
    ['under /proc', async () => '/proc/no-such-process/warehouse'],
    ['below a file', async () => path.join(await writeFileIn('plain-file'), 'warehouse')],
  ])('%s: openUpload and putObject fail as PUBLISH_FAILED naming the target', async (_where, root) => {
    const store = new FolderWarehouseStore(await root())

    await expect(store.openUpload('assets/dt=2026-03-14/data.parquet')).rejects.toMatchObject({
      code: 'PUBLISH_FAILED',
      message: expect.stringContaining('assets/dt=2026-03-14/data.parquet'),
    })
    await expect(store.putObject('_runs/run.json', '{}')).rejects.toMatchObject({ code: 'PUBLISH_FAILED' })
  })

  it('fails a key that escapes the folder as PUBLISH_FAILED', async () => {
    const store = new FolderWarehouseStore(await tempDir('folder-store-'))

    await expect(store.putObject('../outside.json', '{}')).rejects.toMatchObject({
      code: 'PUBLISH_FAILED',
      message: expect.stringMatching(/the key \.\.\/outside\.json escapes the warehouse folder/),
    })
  })
})

describe('an upload aborted at once', () => {
  // A table that fails in its first milliseconds aborts an upload whose file is still being opened.
  it('leaves no partial file behind, even before the file was opened', async () => {
    const root = await tempDir('folder-store-')
    const store = new FolderWarehouseStore(root)
    const uploads = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.openUpload(`assets/dt=2026-03-14/part-${i}.parquet`)),
    )
    await Promise.all(uploads.map((upload) => upload.abort()))
    expect(await readdir(path.join(root, '_tmp'))).toEqual([])
  })
})

const writeFileIn = async (name: string): Promise<string> => {
  const file = path.join(await tempDir('folder-store-'), name)
  await writeFile(file, 'x')
  return file
}
