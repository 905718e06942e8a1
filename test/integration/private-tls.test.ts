import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { runCommandInProcess, runExportInProcess, tempDir, tokenFile } from '../support/cli.ts'

/** A service behind a certificate of a private CA, as inventory services on a company network often are. */
let emulator: RunningEmulator
let caFile: string
let token: string

beforeAll(async () => {
  const dir = await tempDir('inventory-tls-')
  const key = path.join(dir, 'key.pem')
  caFile = path.join(dir, 'cert.pem')
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      caFile,
      '-days',
      '2',
      '-subj',
      '/CN=inventory.internal.example',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { stdio: 'ignore' },
  )
  emulator = await startInventoryEmulator({
    tls: { key: readFileSync(key, 'utf8'), cert: readFileSync(caFile, 'utf8') },
  })
  token = await tokenFile(DEMO_TOKEN)
})
afterAll(() => emulator.close())

const configWith = async (source: Record<string, unknown>): Promise<string> => {
  const file = path.join(await tempDir('inventory-tls-config-'), 'config.json')
  writeFileSync(
    file,
    JSON.stringify({ source: { baseUrl: emulator.baseUrl, ...source }, tables: [{ id: '1003', name: 'users' }] }),
  )
  return file
}

describe('a service whose certificate a private CA signed', () => {
  it('is NOT READY in npm run check, in plain words, naming the setting that fixes it', async () => {
    const result = await runCommandInProcess('check', ['--config', await configWith({}), '--token-file', token])
    expect(result.exitCode).toBe(1)
    expect(result.stdout).toMatch(/token: NOT READY \[TLS_ERROR\] the token check .* failed TLS: /)
    expect(result.stdout).toContain(
      'next step: for a private CA, set source.caCertificatesFile to a PEM bundle of the chain',
    )
  })

  it('is trusted, for checks and exports, once source.caCertificatesFile names the CA', async () => {
    const config = await configWith({ caCertificatesFile: caFile })
    const check = await runCommandInProcess('check', ['--config', config, '--token-file', token])
    expect(check.exitCode).toBe(0)
    const out = await tempDir()
    const exported = await runExportInProcess(['--config', config, '--token-file', token, '--out', out])
    expect(exported.exitCode).toBe(0)
    expect(exported.stdout).toMatch(/users\s+ok\s+800/)
  })
})
