/**
 * The Lambda bundle as the stack builds it (esbuild with the stack's bundling options), its size, and its cold
 * import time: loading the built handler module in a fresh process, as a new Lambda container does.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { build } from 'esbuild'
import { NODE_RUNTIME_FLAGS } from '../functions/export/core/constants.ts'
import { bundlingOptions } from '../infra/constructs/exporter-settings.ts'

const run = promisify(execFile)

export interface BundleFigures {
  readonly bytes: number
  /** Median of the cold imports, in milliseconds. */
  readonly coldImportMs: number
}

/** Builds the handler as the stack does; returns the bundle's path and the input files with code in it. */
export const buildBundle = async (repositoryRoot: string): Promise<{ outfile: string; inputs: string[] }> => {
  // Only the esbuild options are read here; the hooks that copy files into the bundle do not run.
  const options = bundlingOptions({ runtimeConfigFile: '/dev/null' })
  const outdir = await mkdtemp(path.join(os.tmpdir(), 'inventory-bundle-'))
  const outfile = path.join(outdir, 'index.mjs')
  const { metafile } = await build({
    entryPoints: [path.join(repositoryRoot, 'functions/export/lambda/handler.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    // Without the stack's mainFields esbuild takes the SDK clients' CommonJS builds: twice the bytes, none
    // tree-shaken, and a cold import twice as long as the shipped bundle's.
    mainFields: options.mainFields,
    minify: options.minify ?? true,
    banner: { js: options.banner ?? '' },
    metafile: true,
    logLevel: 'silent',
  })
  const bundled = Object.values(metafile.outputs)[0]!.inputs
  return { outfile, inputs: Object.keys(bundled).filter((input) => bundled[input]!.bytesInOutput > 0) }
}

/**
 * Packages bundled from more than one folder, each with its folders: two `node_modules/<name>/` roots for one
 * name are two copies (two versions that npm could not dedupe), each loaded and initialised on a cold start.
 */
export const duplicatePackages = (inputs: readonly string[]): Map<string, string[]> => {
  const roots = new Map<string, Set<string>>()
  for (const input of inputs) {
    const at = input.lastIndexOf('node_modules/')
    if (at < 0) continue
    const segments = input.slice(at + 'node_modules/'.length).split('/')
    const name = segments[0]!.startsWith('@') ? segments.slice(0, 2).join('/') : segments[0]!
    const root = `${input.slice(0, at)}node_modules/${name}`
    roots.set(name, (roots.get(name) ?? new Set()).add(root))
  }
  return new Map([...roots].filter(([, found]) => found.size > 1).map(([name, found]) => [name, [...found].sort()]))
}

export const measureBundle = async (repositoryRoot: string, imports = 5): Promise<BundleFigures> => {
  const { outfile } = await buildBundle(repositoryRoot)
  const { size } = await stat(outfile)
  const timings: number[] = []
  for (let i = 0; i < imports; i++) {
    const script = `const t=performance.now();await import(${JSON.stringify(outfile)});process.stdout.write(String(performance.now()-t))`
    // With the V8 flags the stack puts in NODE_OPTIONS, as a new container starts.
    const { stdout } = await run(process.execPath, [...NODE_RUNTIME_FLAGS, '--input-type=module', '-e', script], {
      env: { ...process.env, AWS_REGION: 'us-east-1' },
    })
    timings.push(Number(stdout))
  }
  timings.sort((a, b) => a - b)
  return { bytes: size, coldImportMs: timings[Math.floor(timings.length / 2)]! }
}
