/**
 * Flags of the local commands, declared once with their help text: the parser and each command's `--help` read
 * the same table, so a flag cannot be accepted without being listed. Node's parseArgs does the parsing; unknown and
 * malformed flags are caught before it, because its own messages give wrong advice ("place it after '--'").
 */
import { parseArgs } from 'node:util'
import { closestKey, UsageError } from '../export/index.ts'

interface FlagSpec {
  readonly type: 'string' | 'boolean'
  readonly multiple?: boolean
  readonly short?: string
  /** The value's placeholder in the help, e.g. `URL`. */
  readonly value?: string
  /** One line of help; later lines after `\n`. */
  readonly help: string
}
export type FlagSpecs = Readonly<Record<string, FlagSpec>>

type FlagValue<S extends FlagSpec> = S['type'] extends 'boolean'
  ? boolean
  : S['multiple'] extends true
    ? string[]
    : string
export type FlagValues<F extends FlagSpecs> = { -readonly [K in keyof F]?: FlagValue<F[K]> }

interface ParsedFlags<F extends FlagSpecs> {
  readonly values: FlagValues<F>
  readonly positionals: string[]
}

export const HELP_FLAG = { type: 'boolean', short: 'h', help: 'this text' } as const satisfies FlagSpec

/** The `Flags:` section of a command's help, one flag a line, help aligned. */
export const flagHelp = (flags: FlagSpecs): string => {
  const names = Object.entries(flags).map(([name, spec]) => {
    const long = `--${name}${spec.value ? ` ${spec.value}` : ''}`
    return spec.short ? `-${spec.short}, ${long}` : long
  })
  const width = Math.max(...names.map((n) => n.length)) + 2
  const lines = Object.values(flags).flatMap((spec, i) => {
    const [first, ...rest] = spec.help.split('\n')
    return [`  ${names[i]!.padEnd(width)}${first}`, ...rest.map((line) => `  ${' '.repeat(width)}${line}`)]
  })
  return ['Flags:', ...lines].join('\n')
}

/** The problem with one `--name[=value]` or `-x` argument, when parseArgs would refuse it. */
const flagProblem = (arg: string, flags: FlagSpecs): string | undefined => {
  const names = Object.keys(flags)
  if (arg.startsWith('--')) {
    const [name = '', ...inline] = arg.slice(2).split('=')
    const spec = flags[name]
    if (spec === undefined) {
      const guess = closestKey(name, names)
      return `unknown flag --${name}${guess ? `; did you mean --${guess}?` : ''}`
    }
    if (spec.type === 'boolean' && inline.length > 0) return `--${name} takes no value, got "${arg}"`
    return undefined
  }
  const short = arg.slice(1, 2)
  if (!Object.values(flags).some((spec) => spec.short === short) || arg.length > 2) {
    return `unknown flag ${arg}${arg.length > 2 ? `; long flags take two dashes, as in -${arg}` : ''}`
  }
  return undefined
}

/** Parses `argv` against `flags`; every problem is a UsageError naming the flag (and its likely spelling). */
export const parseFlags = <F extends FlagSpecs>(
  flags: F,
  argv: readonly string[],
  { positionals = false }: { positionals?: boolean } = {},
): ParsedFlags<F> => {
  const end = argv.indexOf('--')
  for (const [index, arg] of (end === -1 ? argv : argv.slice(0, end)).entries()) {
    // A string flag's value may start with a dash only when written as --name=value; a lone "-" is a value.
    const previous = index > 0 ? argv[index - 1] : undefined
    const takesValue =
      previous?.startsWith('--') && !previous.includes('=') && flags[previous.slice(2)]?.type === 'string'
    if (!arg.startsWith('-') || arg === '-' || takesValue) continue
    const problem = flagProblem(arg, flags)
    if (problem) throw new UsageError(problem)
  }
  const options = Object.fromEntries(
    Object.entries(flags).map(([name, { type, multiple, short }]) => [
      name,
      { type, ...(multiple && { multiple }), ...(short && { short }) },
    ]),
  )
  let parsed: { values: Record<string, unknown>; positionals: string[] }
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true })
  } catch (error) {
    const missing = /Option '(?:-\w, )?--([\w-]+) <value>' argument missing/.exec((error as Error).message)
    throw new UsageError(missing ? `--${missing[1]} needs a value` : (error as Error).message)
  }
  if (!positionals && parsed.positionals.length > 0) {
    throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`)
  }
  return parsed as unknown as ParsedFlags<F>
}
