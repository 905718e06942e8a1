/**
 * `cdk synth` run as a user runs it, and the exporter's bundle from its cdk.out invoked in a child process on the
 * `node` of node_modules (the Lambda's major) with the function's synthesized handler, environment and memory.
 * The same steps as test/integration/lambda-bundle.test.ts, shared for the harness's tests.
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)
const REPO = path.resolve(import.meta.dirname, '../..')
const BIN = path.join(REPO, 'node_modules/.bin')

export interface BundleResource {
  readonly Type: string
  readonly Properties: {
    readonly Handler?: string
    readonly Runtime?: string
    readonly MemorySize?: number
    readonly Environment?: { readonly Variables: Record<string, unknown> }
    readonly Target?: { readonly Input?: string }
  } & Record<string, unknown>
  readonly Metadata?: Readonly<Record<string, unknown>>
}
export interface BundleTemplate {
  readonly Resources: Record<string, BundleResource>
}

/**
 * `cdk synth -c config=<file> -o <out>`; the stack's resources together with its nested stacks' (each table's
 * schedule, staleness alarm and named queries live in one of them).
 */
export const cdkSynth = async (configFile: string, out: string): Promise<BundleTemplate> => {
  await run(
    path.join(BIN, 'cdk'),
    ['synth', '-c', `config=${configFile}`, '-o', out, '-q', '--no-notices', '--no-version-reporting'],
    {
      cwd: REPO,
      env: { ...process.env, PATH: `${BIN}${path.delimiter}${process.env.PATH}`, CDK_DISABLE_CLI_TELEMETRY: 'true' },
      maxBuffer: 64 * 1024 * 1024,
    },
  )
  const templateFiles = (await readdir(out)).filter((f) => f.endsWith('.template.json'))
  const templates = await Promise.all(
    templateFiles.map(async (f) => JSON.parse(await readFile(path.join(out, f), 'utf8')) as BundleTemplate),
  )
  return { Resources: Object.assign({}, ...templates.map((t) => t.Resources)) }
}

/** The exporter: the one function whose code is a bundled asset folder with index.mjs. */
export const exporterFunction = (template: BundleTemplate, out: string) => {
  const bundled = Object.values(template.Resources).filter((r) => {
    const asset = r.Metadata?.['aws:asset:path']
    return (
      r.Type === 'AWS::Lambda::Function' && typeof asset === 'string' && existsSync(path.join(out, asset, 'index.mjs'))
    )
  })
  if (bundled.length !== 1) throw new Error(`expected one bundled function in ${out}, found ${bundled.length}`)
  return { fn: bundled[0]!, assetDir: path.join(out, bundled[0]!.Metadata!['aws:asset:path'] as string) }
}

/** What the child process runs: import the bundle's module, call its handler once, print the outcome. */
const INVOKER = `
import { pathToFileURL } from 'node:url'
const [modulePath, exportName, eventJson, remainingMs] = process.argv.slice(2)
const handler = (await import(pathToFileURL(modulePath).href))[exportName]
const deadline = Date.now() + Number(remainingMs)
const context = {
  callbackWaitsForEmptyEventLoop: true, functionName: process.env.AWS_LAMBDA_FUNCTION_NAME, functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:' + process.env.AWS_LAMBDA_FUNCTION_NAME,
  memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE, awsRequestId: '5e1f0c2a-0000-4000-8000-00000000b0d1',
  logGroupName: '/aws/lambda/x', logStreamName: 'x', getRemainingTimeInMillis: () => deadline - Date.now(),
  done() {}, fail() {}, succeed() {},
}
let outcome
try { outcome = { ok: true, result: await handler(JSON.parse(eventJson), context) } }
catch (error) { outcome = { ok: false, error: { name: error.name, code: error.code, message: error.message } } }
process.stdout.write('__OUTCOME__' + JSON.stringify({ ...outcome, node: process.version }) + '\\n')
`

export interface Invocation {
  readonly ok: boolean
  readonly result?: {
    readonly status: string
    readonly exportDate: string
    readonly tables: { name: string; status: string; error?: unknown }[]
  } & Record<string, unknown>
  readonly error?: { readonly name: string; readonly code?: string; readonly message: string }
  readonly node: string
  readonly stdout: string
  readonly stderr: string
}

export interface InvokeOptions {
  readonly fn: BundleResource
  readonly assetDir: string
  /** The function's environment, references resolved. */
  readonly environment: Record<string, string>
  /** AWS_ENDPOINT_URL_* and credentials. */
  readonly sdkEnvironment: Record<string, string>
  readonly scratch: string
}

/** One invocation of the bundle's handler with `event`, as Lambda would (timeout: the function's own). */
export const invokeBundle = async (options: InvokeOptions, event: unknown): Promise<Invocation> => {
  const { fn, assetDir } = options
  const [moduleName, exportName] = fn.Properties.Handler!.split('.') as [string, string]
  const runtimeMajor = /^nodejs(\d+)\.x$/.exec(fn.Properties.Runtime!)![1]
  const tmp = await mkdtemp(path.join(options.scratch, 'tmp-'))
  const invoker = path.join(options.scratch, 'invoke.mjs')
  await writeFile(invoker, INVOKER)
  const timeoutMs = Number(fn.Properties.Timeout ?? 3) * 1000
  const child = await run(
    path.join(BIN, 'node'),
    [invoker, path.join(assetDir, `${moduleName}.mjs`), exportName, JSON.stringify(event), String(timeoutMs)],
    {
      cwd: assetDir,
      maxBuffer: 64 * 1024 * 1024,
      env: {
        PATH: process.env.PATH,
        TMPDIR: tmp,
        TZ: ':UTC',
        LAMBDA_TASK_ROOT: assetDir,
        AWS_EXECUTION_ENV: `AWS_Lambda_nodejs${runtimeMajor}.x`,
        AWS_LAMBDA_FUNCTION_NAME: 'InventoryExport-ExporterFunction',
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.Properties.MemorySize),
        AWS_CONFIG_FILE: path.join(tmp, 'no-config'),
        AWS_SHARED_CREDENTIALS_FILE: path.join(tmp, 'no-credentials'),
        AWS_EC2_METADATA_DISABLED: 'true',
        ...options.sdkEnvironment,
        ...options.environment,
      },
    },
  )
  const line = child.stdout.split('\n').find((l) => l.startsWith('__OUTCOME__'))
  if (line === undefined) throw new Error(`the bundle printed no outcome:\n${child.stdout}\n${child.stderr}`)
  const outcome = JSON.parse(line.slice('__OUTCOME__'.length)) as Omit<Invocation, 'stdout' | 'stderr'>
  return { ...outcome, stdout: child.stdout, stderr: child.stderr }
}
