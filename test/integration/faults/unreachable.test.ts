/**
 * The fault matrix, the service's faults continued from source.test.ts: a service that cannot be reached and a
 * token revoked halfway through a run. Each fails its tables with the right code and keeps the previous good data
 * byte for byte.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { startInventoryEmulator } from '../../../emulator/index.ts'
import type { ExportConfigInput } from '../../../functions/export/core/config.ts'
import { CANARY_TOKEN, canaryUser } from '../../support/canary.ts'
import {
  ASSETS,
  assetsTable,
  DATE,
  exportDate,
  exportedWorkspace,
  LOCATIONS,
  locationsTable,
  MAX_ATTEMPTS,
  PUBLISHED,
  readObject,
  runRecordOf,
  useFaultMatrix,
  visibleObjects,
  workspace,
} from '../../support/fault-matrix.ts'

useFaultMatrix()

/** A loopback port nothing listens on. */
const closedPort = async (): Promise<number> => {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

describe('the runner when the service is unreachable or the token dies', () => {
  it('fails every table after the token check when the connection is refused, keeping the previous data', async () => {
    const { ws, good } = await exportedWorkspace()
    const refused = path.join(path.dirname(ws.config), 'refused.json')
    const config = JSON.parse(await readFile(ws.config, 'utf8')) as ExportConfigInput
    await writeFile(
      refused,
      JSON.stringify({ ...config, source: { baseUrl: `http://127.0.0.1:${await closedPort()}` } }),
    )

    const result = await exportDate({ ...ws, config: refused }, 'refused run')

    expect(result.exitCode).toBe(1)
    const record = await runRecordOf(ws, result)
    expect(record.tables.map((t) => [t.name, t.status, t.error?.code, t.error?.failureClass])).toEqual([
      [ASSETS.name, 'failed', 'NETWORK_ERROR', 'network'],
      [LOCATIONS.name, 'failed', 'NETWORK_ERROR', 'network'],
    ])
    expect(result.stderr).toMatch(/ECONNREFUSED/)
    expect(result.stderr).toMatch(/token check \(GET http:\/\/127\.0\.0\.1:\d+\/rest\/usermanager\/me\) failed/)
    // Every table failed the same way, at the token check: the next step is said once, for the run.
    expect(result.stderr).toMatch(/^next step: check that the service is reachable/m)
    expect(result.stderr.match(/token check: attempt \d failed \(NETWORK_ERROR\)/g)).toHaveLength(MAX_ATTEMPTS - 1)
    expect(await visibleObjects(ws.out)).toEqual(PUBLISHED)
    for (const [key, bytes] of good) expect((await readObject(ws, key)).equals(bytes), key).toBe(true)
  })

  it('fails the tables after a token revoked halfway through a run, one request each, keeping their data', async () => {
    let revokeAfterDevices = false
    const revocable = await startInventoryEmulator({
      tables: [
        {
          id: '3001',
          title: 'First',
          columns: ['Tag', 'Owner'],
          rows: function* () {
            yield ['T-1', 'Ada']
            yield ['T-2', 'Grace']
            if (revokeAfterDevices) revocable.revokeToken(CANARY_TOKEN)
          },
        },
        { ...assetsTable(), id: '3002' },
        { ...locationsTable(), id: '3003' },
      ],
      users: [canaryUser()],
    })
    try {
      const ws = await workspace({ concurrency: 1 }, revocable.baseUrl)
      const config = JSON.parse(await readFile(ws.config, 'utf8')) as ExportConfigInput
      config.tables = [
        { id: '3001', name: 'first' },
        { id: '3002', name: 'second' },
        { id: '3003', name: 'third' },
      ]
      await writeFile(ws.config, JSON.stringify(config))
      expect((await exportDate(ws, 'good run')).exitCode).toBe(0)
      const good = await Promise.all(
        ['second', 'third'].map((name) => readObject(ws, `${name}/dt=${DATE}/data.parquet`)),
      )
      const since = revocable.requests.length
      revokeAfterDevices = true

      const result = await exportDate(ws, 'revoked run')

      expect(result.exitCode).toBe(1)
      const record = await runRecordOf(ws, result)
      expect(record.tables.map((t) => [t.name, t.status, t.error?.code, t.httpStatus])).toEqual([
        ['first', 'succeeded', undefined, 200],
        ['second', 'failed', 'AUTH_REJECTED', 401],
        ['third', 'failed', 'AUTH_REJECTED', 401],
      ])
      // Never retried: at most one request per remaining table, each answered 401.
      const after = revocable.requests.slice(since).filter((r) => /\/rest\/tables\/300[23]\//.test(r.path))
      expect(after.length).toBeLessThanOrEqual(2)
      expect(after.map((r) => r.status)).toEqual(after.map(() => 401))
      expect(result.stderr).toMatch(/^second: FAILED \[AUTH_REJECTED\] table 3002: .*HTTP 401/m)
      expect(result.stderr).toMatch(/^second: {3}next step: create a new API token/m)
      const now = await Promise.all(
        ['second', 'third'].map((name) => readObject(ws, `${name}/dt=${DATE}/data.parquet`)),
      )
      expect(now.map((bytes, i) => bytes.equals(good[i]!))).toEqual([true, true])
      expect(await readdir(path.join(ws.out, '_tmp'))).toEqual([])
    } finally {
      await revocable.close()
    }
  })
})
