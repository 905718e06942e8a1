/**
 * A canary token: the only token the fault-matrix tests give the exporter. It is random per test process and
 * appears nowhere else, so finding it in anything the exporter emitted or wrote means the token leaked.
 * `scanForCanary` looks through captured text, metric payloads and every file under the given folders, Parquet
 * and gzip files both as stored and decoded.
 */
import { randomBytes } from 'node:crypto'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { inspect } from 'node:util'
import { gunzipSync, zstdDecompressSync } from 'node:zlib'
import { parquetMetadata, parquetReadObjects } from 'hyparquet'
import type { EmulatorUser } from '../../emulator/users.ts'

const SECRET = randomBytes(16).toString('hex')

/** The token of the canary user; random per test process. */
export const CANARY_TOKEN = `canary-tok-${SECRET}`

/** A user of the stand-in service whose token is the canary; reads every table unless told otherwise. */
export const canaryUser = (overrides: Partial<EmulatorUser> = {}): EmulatorUser => ({
  id: 4242,
  username: 'api-canary',
  displayName: 'Canary (fault matrix)',
  email: 'api-canary@corp.example.com',
  token: CANARY_TOKEN,
  status: 'active',
  tables: 'all',
  roles: ['api', 'export'],
  ...overrides,
})

/** Everything a test captured; each entry is scanned under its label. */
export interface CanaryEvidence {
  /** Captured text: stdout, stderr, log lines. */
  readonly texts?: Readonly<Record<string, string | readonly string[]>>
  /** Metric payloads, telemetry events, records: scanned as JSON. */
  readonly payloads?: Readonly<Record<string, unknown>>
  /** Folders whose every file is scanned (warehouse roots, temp folders). */
  readonly folders?: readonly string[]
}

/**
 * The forms the token could take when it leaks: whole, without its prefix, or cut in half (a masked or
 * shortened log line still gives half the secret away).
 */
const needlesFor = (token: string): string[] => {
  const secret = token.startsWith('canary-tok-') ? token.slice('canary-tok-'.length) : token
  const half = Math.floor(secret.length / 2)
  return [...new Set([token, secret, secret.slice(0, half), secret.slice(half)])].filter((n) => n.length >= 8)
}

const findIn = (haystack: string, needles: readonly string[]): string | undefined =>
  needles.find((needle) => haystack.includes(needle))

/** Where in `text` a needle occurs, as "line N". */
const textLocations = (label: string, text: string, needles: readonly string[]): string[] =>
  text.split('\n').flatMap((line, index) => (findIn(line, needles) ? [`${label} line ${index + 1}: ${line}`] : []))

const bytesContain = (bytes: Buffer, needles: readonly string[]): string | undefined =>
  needles.find(
    (needle) => bytes.includes(Buffer.from(needle, 'utf8')) || bytes.includes(Buffer.from(needle, 'utf16le')),
  )

const listFiles = async (folder: string): Promise<string[]> => {
  try {
    const entries = await readdir(folder, { recursive: true, withFileTypes: true })
    return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

const INSPECT_ALL = {
  depth: Number.POSITIVE_INFINITY,
  maxArrayLength: Number.POSITIVE_INFINITY,
  maxStringLength: Number.POSITIVE_INFINITY,
  breakLength: Number.POSITIVE_INFINITY,
  getters: true,
}

const zstd = (input: Uint8Array): Uint8Array => zstdDecompressSync(input)

/** A Parquet file's rows and key-value metadata as text, so compressed pages are searched too. */
const decodedParquet = async (bytes: Buffer): Promise<string> => {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
  const metadata = parquetMetadata(file)
  const rows = await parquetReadObjects({ file, compressors: { ZSTD: zstd } })
  return JSON.stringify({ kv: metadata.key_value_metadata, schema: metadata.schema, rows }, (_, value: unknown) =>
    typeof value === 'bigint' ? value.toString() : value,
  )
}

/** What a file holds once decoded: gzip inflated, Parquet read; undefined when it is scanned as stored. */
const decodedContent = async (file: string, bytes: Buffer): Promise<string | undefined> => {
  try {
    if (file.endsWith('.gz')) return gunzipSync(bytes).toString('utf8')
    if (file.endsWith('.parquet')) return await decodedParquet(bytes)
  } catch (error) {
    return `<undecodable: ${(error as Error).message}>`
  }
  return undefined
}

const fileLocations = async (file: string, needles: readonly string[]): Promise<string[]> => {
  const bytes = await readFile(file)
  const found: string[] = []
  const raw = bytesContain(bytes, needles)
  if (raw !== undefined) found.push(`file ${file} (bytes as stored)`)
  const decoded = await decodedContent(file, bytes)
  if (decoded !== undefined && findIn(decoded, needles) !== undefined) found.push(`file ${file} (decoded content)`)
  return found
}

/**
 * Every place the canary (or half of its secret) appears in the evidence: "stderr line 3: ...",
 * "file /tmp/x/_runs/dt=.../run.json (bytes as stored)", "payload telemetry". Empty when it appears nowhere.
 */
export const scanForCanary = async (evidence: CanaryEvidence, token: string = CANARY_TOKEN): Promise<string[]> =>
  scanForNeedles(evidence, needlesFor(token))

/** Every place any of `needles` appears whole in the evidence (personal data that must not land, a key). */
export const scanForNeedles = async (evidence: CanaryEvidence, needles: readonly string[]): Promise<string[]> => {
  const found: string[] = []
  for (const [label, text] of Object.entries(evidence.texts ?? {})) {
    found.push(...textLocations(label, typeof text === 'string' ? text : text.join('\n'), needles))
  }
  for (const [label, payload] of Object.entries(evidence.payloads ?? {})) {
    // inspect, not JSON: it shows errors whole (stack, cause, own fields), where JSON would call toJSON().
    if (findIn(inspect(payload, INSPECT_ALL), needles) !== undefined) found.push(`payload ${label}`)
  }
  for (const folder of evidence.folders ?? []) {
    for (const file of await listFiles(folder)) found.push(...(await fileLocations(file, needles)))
  }
  return found
}

/** Throws, listing every place the canary appears; resolves when it appears nowhere. */
export const expectNoCanary = async (evidence: CanaryEvidence, token: string = CANARY_TOKEN): Promise<void> => {
  const found = await scanForCanary(evidence, token)
  if (found.length > 0) {
    throw new Error(`the token leaked into ${found.length} place(s):\n${found.map((f) => `  - ${f}`).join('\n')}`)
  }
}
