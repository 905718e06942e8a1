/**
 * The house's layers, checked on the source, by folder of functions/export/. From the bottom up:
 *   core/        what every layer shares: configuration, constants, coded errors, run record, lineage, names
 *   the stages   one folder per stage of the data's path (STAGES), each using only core/ and the stages before
 *                it (scratch files come first, then the store port: the stages that write, write through it)
 *   path/        the orchestration: the run, one table's path, preview, run index, the telemetry port
 *   lambda/      the Lambda edge: handler, secrets, Lambda telemetry, watchdog
 *   index.ts     the front door, the only file loose in functions/export/
 *   above        functions/local/ and infra/, which use functions/export/ through index.ts alone (and the local
 *                runner's demo the stand-in in emulator/, which imports nothing of ours)
 * Imports point down or sideways only, and no module reaches itself again through its imports.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = path.resolve(import.meta.dirname, '../..')
const EXPORT = 'functions/export/'
const FRONT_DOOR = 'functions/export/index.ts'

const STAGES = [
  'scratch',
  'publish',
  'normalize',
  'source',
  'csv',
  'xlsx',
  'schema',
  'parquet',
  'guards',
  'iceberg',
  'catalog',
]

/** The layer of each folder of functions/export/ that is not a stage. */
const FOLDER_LAYERS = { core: 'core', path: 'path', lambda: 'edge' } as const

/** Imports that cross the rules on purpose, each with the reason. */
const EXCEPTIONS: readonly { readonly from: string; readonly to: string; readonly why: string }[] = [
  {
    from: 'functions/local/cli.mjs',
    to: 'functions/export/csv/parse-worker.ts',
    why: 'the entry starts the parse thread while the runner loads; through index.ts it would wait for every module',
  },
  {
    from: 'emulator/cli-args.ts',
    to: 'functions/export/core/closest-key.ts',
    why: 'the stand-in suggests a misspelt flag as every command does; the file imports nothing',
  },
]

const LAYER_RANK = { core: 0, stage: 1, path: 2, edge: 3, 'front door': 4, above: 5 } as const
type Layer = keyof typeof LAYER_RANK

const sourceFiles = (folder: string): string[] =>
  readdirSync(path.join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') || file.endsWith('.mjs'))
    .map((file) => path.posix.join(folder, file.split(path.sep).join('/')))
    .sort()

const FILES = [...sourceFiles('functions'), ...sourceFiles('infra'), ...sourceFiles('emulator')]

/** What each area outside functions/export/ may import besides its own files. */
const ABOVE: Readonly<Record<string, readonly string[]>> = {
  'functions/local': [FRONT_DOOR, 'emulator/'],
  infra: [FRONT_DOOR],
  emulator: [],
}
const areaOf = (file: string): string =>
  file
    .split('/')
    .slice(0, file.startsWith('functions/') ? 2 : 1)
    .join('/')

/** Relative specifiers of static imports and re-exports, side-effect imports and dynamic imports. */
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm

const importsOf = (file: string): string[] => {
  const source = readFileSync(path.join(ROOT, file), 'utf8')
  return [...source.matchAll(IMPORT)].map((m) => path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1]!)))
}

const GRAPH = new Map(FILES.map((file) => [file, importsOf(file)]))

/** The folder of functions/export/ that holds `file`, or undefined for a file outside it or loose in it. */
const folderOf = (file: string): string | undefined => {
  const rest = file.slice(EXPORT.length)
  return file.startsWith(EXPORT) && rest.includes('/') ? rest.split('/')[0] : undefined
}

const stageOf = (file: string): string | undefined => {
  const folder = folderOf(file)
  return folder !== undefined && !(folder in FOLDER_LAYERS) ? folder : undefined
}

const layerOf = (file: string): Layer => {
  if (!file.startsWith(EXPORT)) return 'above'
  if (file === FRONT_DOOR) return 'front door'
  const folder = folderOf(file)
  if (folder === undefined) return 'front door'
  return FOLDER_LAYERS[folder as keyof typeof FOLDER_LAYERS] ?? 'stage'
}

const excepted = (from: string, to: string) => EXCEPTIONS.some((e) => e.from === from && e.to === to)

/** Why the import from `from` to `to` breaks the layers, or undefined when it does not. */
const breach = (from: string, to: string): string | undefined => {
  if (excepted(from, to)) return undefined
  const [fromLayer, toLayer] = [layerOf(from), layerOf(to)]
  if (fromLayer === 'above') {
    const area = areaOf(from)
    if (areaOf(to) === area || ABOVE[area]?.some((allowed) => to === allowed || to.startsWith(allowed))) return
    return to.startsWith(EXPORT) ? 'uses functions/export/ other than through index.ts' : `reaches into ${areaOf(to)}/`
  }
  if (toLayer === 'above') return `reaches out of functions/export/ into ${areaOf(to)}/`
  if (LAYER_RANK[toLayer] > LAYER_RANK[fromLayer]) return `imports up, from the ${fromLayer} to the ${toLayer}`
  const [fromStage, toStage] = [stageOf(from), stageOf(to)]
  if (fromStage !== undefined && toStage !== undefined && fromStage !== toStage) {
    if (STAGES.indexOf(toStage) > STAGES.indexOf(fromStage)) return `imports a later stage (${toStage}/)`
  }
  return undefined
}

/** One cycle through `start`'s imports, if there is one. */
const cycleFrom = (start: string): string[] | undefined => {
  const done = new Set<string>()
  const walk = (file: string, trail: string[]): string[] | undefined => {
    for (const next of GRAPH.get(file) ?? []) {
      if (next === start) return [...trail, next]
      if (done.has(next)) continue
      done.add(next)
      const found = walk(next, [...trail, next])
      if (found) return found
    }
    return undefined
  }
  return walk(start, [start])
}

describe('the import graph', () => {
  it('resolves every relative import to a source file', () => {
    const missing = [...GRAPH].flatMap(([file, imports]) =>
      imports.filter((to) => !GRAPH.has(to)).map((to) => `${file} -> ${to}`),
    )
    expect(missing).toEqual([])
  })

  it('holds no file loose in functions/export/ but the front door', () => {
    const loose = FILES.filter((file) => file.startsWith(EXPORT) && folderOf(file) === undefined)
    expect(loose).toEqual([FRONT_DOOR])
  })

  it('knows every folder of functions/export/ as a stage or a layer', () => {
    const unknown = FILES.map(stageOf).filter((stage) => stage !== undefined && !STAGES.includes(stage))
    expect([...new Set(unknown)], 'add each new folder to STAGES, after the stages it imports').toEqual([])
  })

  it('points down only: no stage imports the path above it or a later stage, nothing above uses more than index.ts', () => {
    const breaches = [...GRAPH].flatMap(([from, imports]) =>
      imports.flatMap((to) => {
        const why = breach(from, to)
        return why === undefined ? [] : [`${from} -> ${to}: ${why}`]
      }),
    )
    expect(breaches).toEqual([])
  })

  it('has no cycles', () => {
    const cycles = FILES.map(cycleFrom).filter((cycle) => cycle !== undefined)
    expect(cycles.map((cycle) => cycle.join(' -> '))).toEqual([])
  })

  it('lists as exceptions only imports that exist', () => {
    expect(EXCEPTIONS.filter((e) => !GRAPH.get(e.from)?.includes(e.to))).toEqual([])
  })
})

describe('the environment', () => {
  it('is read (process.env) only in functions/export/core/environment.ts, and by the CLI entry for the compile cache', () => {
    const readers = FILES.filter((file) => {
      const code = readFileSync(path.join(ROOT, file), 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '')
      return /\bprocess\.env\b/.test(code)
    })
    // The entry sets NODE_COMPILE_CACHE before any module of the export is loaded: the only way to hand Node's compile
    // cache to the threads the export starts, and too early for environment.ts, which loads the configuration schema.
    expect(readers).toEqual(['functions/export/core/environment.ts', 'functions/local/cli.mjs'])
  })
})
