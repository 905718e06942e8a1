/**
 * Every command, run as the real process, through bad inputs: each ends with its exit status, one coded line that
 * names the field or flag, and no stack trace.
 */
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEMO_TOKEN, type RunningEmulator, startInventoryEmulator } from '../../emulator/index.ts'
import { type CliResult, tempDir, tokenFile } from '../support/cli.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')

/** `node <script> <argv>` from the repository root, as the npm scripts run it. */
const run = (script: string, argv: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(ROOT, script), ...argv],
      { cwd: ROOT, env: { ...process.env, INVENTORY_TOKEN: '', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        resolve({ exitCode: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr })
      },
    )
  })

const cli = (argv: readonly string[]) => run('functions/local/cli.ts', argv)
/** `cdk synth` runs the app with its context in CDK_CONTEXT_JSON; the app fails before any bundling. */
const synth = (context: Record<string, unknown>, outdir = path.join(dir, 'cdk.out')) => {
  const cdkJson = JSON.parse(readFileSync(path.join(ROOT, 'cdk.json'), 'utf8')) as { context: object }
  return run('infra/app.ts', [], {
    CDK_CONTEXT_JSON: JSON.stringify({ ...cdkJson.context, ...context }),
    CDK_OUTDIR: outdir,
  })
}

let dir: string
let token: string
let emulator: RunningEmulator
const file = async (name: string, content: unknown): Promise<string> => {
  const target = path.join(dir, name)
  await writeFile(target, typeof content === 'string' ? content : JSON.stringify(content))
  return target
}
const config = (changes: Record<string, unknown> = {}) => ({
  source: { baseUrl: 'https://inventory.example.com' },
  tables: [{ id: '1001', name: 'devices' }],
  ...changes,
})

beforeAll(async () => {
  dir = await tempDir('inventory-cli-failures-')
  token = await tokenFile(DEMO_TOKEN)
  emulator = await startInventoryEmulator()
})
afterAll(() => emulator.close())

/** An export into `out` against the stand-in, asserting afterwards that it requested nothing. */
const exportWithoutRequests = async (out: string): Promise<CliResult> => {
  const before = emulator.requests.length
  const result = await cli([
    'export',
    '--base-url',
    emulator.baseUrl,
    '--table',
    '1001',
    '--token-file',
    token,
    '--out',
    out,
  ])
  expect(emulator.requests.slice(before)).toEqual([])
  return result
}

interface Case {
  readonly command: string
  readonly exitCode: number
  readonly code: string
  readonly names: RegExp
  /** What the `next step:` line must say; only problems with the flags themselves point at --help. */
  readonly nextStep?: RegExp
  readonly run: () => Promise<CliResult>
}

const cases: [string, Case][] = [
  [
    'start: --table without a service',
    {
      command: 'start',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /--table given without a service: add --base-url/,
      run: () => cli(['export', '--table', '1004']),
    },
  ],
  [
    'start: --out without a service',
    {
      command: 'start',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /--out given without a service/,
      run: () => cli(['export', '--out', dir]),
    },
  ],
  [
    'start: --demo with --table',
    {
      command: 'start',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /--demo .*drop --table/,
      run: () => cli(['export', '--demo', '--table', '1001']),
    },
  ],
  [
    'start: a base URL without a scheme',
    {
      command: 'start',
      exitCode: 2,
      code: 'CONFIG_INVALID',
      names: /source\.baseUrl: must be an http\(s\) URL/,
      run: () => cli(['export', '--base-url', 'inventory.example.com', '--table', '1001', '--token-file', token]),
    },
  ],
  [
    'start: --table with a second "="',
    {
      command: 'start',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /--table must be ID or ID=NAME with one "=", got "1=a=b"/,
      run: () => cli(['export', '--base-url', 'https://inventory.example.com', '--table', '1=a=b']),
    },
  ],
  [
    'start: --out is a file (nothing is requested)',
    {
      command: 'start',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /--out .*plain-file is not a folder/,
      nextStep: /give --out a folder/,
      run: async () => exportWithoutRequests(await file('plain-file', 'x')),
    },
  ],
  [
    'start: --out cannot be written (nothing is requested)',
    {
      command: 'start',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /--out \/proc\/warehouse cannot be written/,
      run: () => exportWithoutRequests('/proc/warehouse'),
    },
  ],
  [
    'start: a token file with a line break inside the token (never echoed, nothing requested)',
    {
      command: 'start',
      exitCode: 2,
      code: 'TOKEN_UNAVAILABLE',
      names: /--token-file .*bad-token: character 7 of the token cannot be sent in an HTTP header/,
      run: async () => {
        const before = emulator.requests.length
        const bad = await file('bad-token', 'secret\nCANARY-TOKEN-VALUE\n')
        const result = await cli(['export', '--base-url', emulator.baseUrl, '--table', '1001', '--token-file', bad])
        expect(emulator.requests.slice(before)).toEqual([])
        expect(result.stderr).not.toContain('CANARY-TOKEN-VALUE')
        return result
      },
    },
  ],
  [
    'start: an unknown flag',
    {
      command: 'start',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /unknown flag --bogus$/,
      nextStep: /run with --help/,
      run: () => cli(['export', '--bogus']),
    },
  ],
  [
    'start: a misspelt flag',
    {
      command: 'start',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /unknown flag --tabel; did you mean --table\?/,
      nextStep: /run with --help/,
      run: () => cli(['export', '--tabel', '1001=devices']),
    },
  ],
  [
    'check: a misspelt flag',
    {
      command: 'check',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /unknown flag --tokenfile; did you mean --token-file\?/,
      nextStep: /run with --help/,
      run: () => cli(['check', '--tokenfile', 'x']),
    },
  ],
  [
    'start: a flag of another command (check takes no --only)',
    {
      command: 'check',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /unknown flag --only/,
      nextStep: /run with --help/,
      run: () => cli(['check', '--only', 'devices']),
    },
  ],
  [
    'start: no token, run locally (the next step names --token-file and INVENTORY_TOKEN, not Secrets Manager)',
    {
      command: 'start',
      exitCode: 2,
      code: 'TOKEN_UNAVAILABLE',
      names: /the API token could not be read from --token-file or INVENTORY_TOKEN/,
      nextStep: /^next step: pass --token-file FILE .* or set INVENTORY_TOKEN$/,
      run: () => cli(['export', '--base-url', emulator.baseUrl, '--table', '1001']),
    },
  ],
  [
    'start: a misspelt configuration key',
    {
      command: 'start',
      exitCode: 2,
      code: 'CONFIG_INVALID',
      names: /tables\[0\]\.colummTypes: is not a known key; did you mean "columnTypes"\?/,
      run: async () =>
        cli([
          'export',
          '--config',
          await file('typo.json', config({ tables: [{ id: '1', colummTypes: {} }] })),
          '--token-file',
          token,
        ]),
    },
  ],
  [
    'start: a CA file that does not exist',
    {
      command: 'start',
      exitCode: 2,
      code: 'CONFIG_INVALID',
      names: /source\.caCertificatesFile: cannot be read \(ENOENT/,
      run: async () => {
        const source = { baseUrl: emulator.baseUrl, caCertificatesFile: path.join(dir, 'no-such-ca.pem') }
        return cli(['export', '--config', await file('ca.json', config({ source })), '--token-file', token])
      },
    },
  ],
  [
    'start: a configuration file that is not JSON',
    {
      command: 'start',
      exitCode: 2,
      code: 'CONFIG_INVALID',
      names: /--config .*broken\.json:.*\(file\): is not valid JSON at line 3, column 1: /,
      nextStep: /fix the JSON in .*broken\.json at line 3, column 1$/,
      run: async () => cli(['export', '--config', await file('broken.json', '{\n  "a": 1,\n}')]),
    },
  ],
  [
    'start: a configuration file that does not exist',
    {
      command: 'start',
      exitCode: 2,
      code: 'CONFIG_INVALID',
      names: /--config .*missing\.json:.*\(file\): cannot be read: no such file$/,
      nextStep: /check the path of the configuration file \(.*missing\.json\)/,
      run: () => cli(['export', '--config', path.join(dir, 'missing.json')]),
    },
  ],
  [
    'check: --table and --token-file without a service',
    {
      command: 'check',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /--table, --token-file given without a service/,
      run: () => cli(['check', '--table', '1001=devices', '--token-file', token]),
    },
  ],
  [
    'check: an impossible date',
    {
      command: 'check',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /--date must be a calendar date/,
      run: () => cli(['check', '--date', '2026-02-30']),
    },
  ],
  [
    'check: a date before 2000',
    {
      command: 'check',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /--date must be between 2000-01-01 and \d{4}-\d{2}-\d{2} \(today in UTC plus one day\), got "1999-12-31"/,
      run: () => cli(['check', '--date', '1999-12-31']),
    },
  ],
  [
    'reprocess: a date years ahead',
    {
      command: 'reprocess',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /--date must be between 2000-01-01 and .*, got "2206-11-24"/,
      run: () => cli(['reprocess', '--table', '1001=devices', '--date', '2206-11-24']),
    },
  ],
  [
    'query: no SQL',
    {
      command: 'query',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /exactly one SQL statement/,
      run: () => cli(['query']),
    },
  ],
  [
    'ddl: an empty warehouse',
    {
      command: 'ddl',
      exitCode: 1,
      code: 'WAREHOUSE_EMPTY',
      names: /no table has been exported to .* yet$/,
      nextStep: /export first: npm start/,
      run: () => cli(['ddl', '--out', dir]),
    },
  ],
  [
    'query: an empty warehouse (not DuckDB\'s "did you mean duckdb_views")',
    {
      command: 'query',
      exitCode: 1,
      code: 'WAREHOUSE_EMPTY',
      names: /no table has been exported to .* yet$/,
      nextStep: /export first: npm start/,
      run: () => cli(['query', '--out', dir, 'SELECT count(*) FROM devices']),
    },
  ],
  [
    'query: an unknown --format',
    {
      command: 'query',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /--format must be one of table, csv, json, got "xml"/,
      nextStep: /run with --help/,
      run: () => cli(['query', '--format', 'xml', 'SELECT 1']),
    },
  ],
  [
    'reset: a folder this tool did not write',
    {
      command: 'reset',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /refusing to delete .*: it has no _schemas folder/,
      nextStep: /point --out at a warehouse folder npm start wrote/,
      run: () => cli(['reset', '--out', dir]),
    },
  ],
  [
    'reprocess: no --date',
    {
      command: 'reprocess',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /--date is required/,
      run: () => cli(['reprocess', '--table', '1001=devices']),
    },
  ],
  [
    'reprocess: --out is a file',
    {
      command: 'reprocess',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /--out .*plain-file is not a folder/,
      run: async () =>
        cli(['reprocess', '--table', '1001=devices', '--date', '2026-01-01', '--out', await file('plain-file', 'x')]),
    },
  ],
  [
    'reprocess: --out cannot be written',
    {
      command: 'reprocess',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /--out \/proc\/warehouse cannot be written/,
      run: () => cli(['reprocess', '--table', '1001=devices', '--date', '2026-01-01', '--out', '/proc/warehouse']),
    },
  ],
  [
    'reprocess: --demo',
    {
      command: 'reprocess',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /unknown flag --demo/,
      run: () => cli(['reprocess', '--demo', '--date', '2026-01-01']),
    },
  ],
  [
    'an unknown command',
    {
      command: 'cli',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /unknown command "exprot"; did you mean "export"\?/,
      nextStep: /npm run help/,
      run: () => cli(['exprot']),
    },
  ],
  [
    'emulator: a port that is not a number',
    {
      command: 'emulator',
      exitCode: 2,
      code: 'EMULATOR_USAGE_INVALID',
      names: /--port must be an integer, got "eighty"/,
      run: () => run('emulator/main.ts', ['--port', 'eighty']),
    },
  ],
  [
    'emulator: a port in use',
    {
      command: 'emulator',
      exitCode: 2,
      code: 'EMULATOR_LISTEN_FAILED',
      names: /cannot listen on 127\.0\.0\.1:\d+ \(EADDRINUSE\): the port is in use; choose another --port/,
      run: () => run('emulator/main.ts', ['--port', String(emulator.port)]),
    },
  ],
  [
    'bench: an unknown flag',
    {
      command: 'bench',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /'--bogus'/,
      run: () => run('bench/run.ts', ['--bogus']),
    },
  ],
  [
    'bench: a misspelt flag',
    {
      command: 'bench',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /'--colums'; did you mean --columns\?/,
      run: () => run('bench/run.ts', ['--colums']),
    },
  ],
  [
    'bench: a misspelt data set',
    {
      command: 'bench',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /got "inventori"; did you mean inventory\?/,
      run: () => run('bench/run.ts', ['--dataset', 'inventori']),
    },
  ],
  [
    'bench: zero runs',
    {
      command: 'bench',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /--runs must be a positive number, got "0"/,
      run: () => run('bench/run.ts', ['--runs', '0']),
    },
  ],
  [
    'synth: a misspelt deployment key',
    {
      command: 'synth',
      exitCode: 2,
      code: 'CONFIG_INVALID',
      names: /deployment\.unknownKey: is not a known key/,
      nextStep:
        /^next step: fix the fields named above in \S+synth-typo\.json, then run npx cdk synth -c config=\S+synth-typo\.json again$/,
      run: async () => synth({ config: await file('synth-typo.json', config({ deployment: { unknownKey: 1 } })) }),
    },
  ],
  [
    'synth: a base URL without a scheme',
    {
      command: 'synth',
      exitCode: 2,
      code: 'CONFIG_INVALID',
      names: /source\.baseUrl: must be an http\(s\) URL/,
      run: async () =>
        synth({ config: await file('synth-url.json', config({ source: { baseUrl: 'inventory.example.com' } })) }),
    },
  ],
  [
    'synth: no -c config',
    {
      command: 'synth',
      exitCode: 2,
      code: 'CONFIG_INVALID',
      names: /invalid CDK context: config: is not set; name the configuration file/,
      nextStep: /^next step: name the configuration file in the context, then synthesize: npx cdk synth -c config=/,
      run: () => synth({}),
    },
  ],
  [
    'synth: a five-field cron expression',
    {
      command: 'synth',
      exitCode: 2,
      code: 'CONFIG_INVALID',
      names: /deployment\.schedule\.expression: cron\(0 2 \* \* \*\) has 5 fields/,
      run: async () => {
        const deployment = { schedule: { expression: 'cron(0 2 * * *)' } }
        return synth({ config: await file('synth-cron.json', config({ deployment })) })
      },
    },
  ],
  [
    'synth: a CA file that does not exist (a stack-level check)',
    {
      command: 'synth',
      exitCode: 2,
      code: 'CONFIG_INVALID',
      names: /invalid stack settings: source\.caCertificatesFile: no file at/,
      nextStep: /^next step: fix the fields named above in \S+synth-ca\.json, then run npx cdk synth/,
      run: async () => {
        const source = { baseUrl: 'https://inventory.example.com', caCertificatesFile: 'no/such/ca.pem' }
        return synth({ config: await file('synth-ca.json', config({ source })) })
      },
    },
  ],
  [
    'synth: a build step that fails for a reason other than the configuration (cdk.out is a file)',
    {
      command: 'synth',
      exitCode: 1,
      code: 'SYNTH_FAILED',
      names: /cdk synth failed building the stacks: \S+not-a-folder must be a directory/,
      // The build's next step, never the runtime's hint about previous data and run records.
      nextStep: /^next step: nothing was deployed; fix what the message names .*then run npx cdk synth -c config=/,
      run: async () => synth({ config: await file('synth-ok.json', config()) }, await file('not-a-folder', 'x')),
    },
  ],
]

describe.each(cases)('%s', (_name, failure) => {
  it(`exits ${failure.exitCode} with one coded line naming the problem, and no stack trace`, async () => {
    const result = await failure.run()
    expect(result.exitCode, result.stderr).toBe(failure.exitCode)
    const lines = result.stderr.split('\n').filter((line) => line.trim() !== '')
    const errorLines = lines.filter((line) => line.startsWith('error ['))
    expect(errorLines, result.stderr).toHaveLength(1)
    expect(errorLines[0]).toContain(`error [${failure.code}]: `)
    expect(errorLines[0]).toMatch(failure.names)
    expect(
      lines.filter((line) => !line.startsWith('error [') && !line.startsWith('next step: ')),
      result.stderr,
    ).toEqual([])
    expect(result.stderr).not.toMatch(/^\s+at /m)
    if (failure.nextStep) {
      expect(
        lines.find((line) => line.startsWith('next step: ')),
        result.stderr,
      ).toMatch(failure.nextStep)
      if (!failure.nextStep.source.includes('--help')) expect(result.stderr).not.toContain('--help')
    }
    expect(result.stderr).not.toContain('secretsmanager')
    // Nothing has run at synth time: the runtime's hints do not belong there.
    if (failure.command === 'synth') expect(result.stderr).not.toMatch(/previous data|run record/)
  })
})

describe('help', () => {
  it.each([
    ['bench', 'bench/run.ts', /Usage: npm run bench/],
    ['emulator', 'emulator/main.ts', /^Usage: npm run emulator -- \[flags\]$[\s\S]*--keep-rows[\s\S]*--drop-column/m],
    ['start', 'functions/local/cli.ts', /Usage: npm start/],
  ])('%s --help prints its usage and exits 0', async (_name, script, usage) => {
    const argv = script.endsWith('cli.ts') ? ['export', '--help'] : ['--help']
    const result = await run(script, argv)
    expect(result.exitCode).toBe(0)
    expect(result.stdout).toMatch(usage)
    // The system's Node cannot run the .ts files; the npm scripts run the project's own.
    expect(result.stdout).not.toContain('node emulator/main.ts')
  })

  it('--help on its own lists every command with its npm script', async () => {
    const result = await cli(['--help'])
    expect(result.exitCode).toBe(0)
    for (const script of ['npm start', 'check', 'query', 'ddl', 'reprocess', 'reset']) {
      expect(result.stdout).toMatch(new RegExp(`^  (npm run )?${script} +\\S`, 'm'))
    }
  })

  it.each([
    [
      'export',
      ['--base-url URL', '--table ID[=NAME]', '--token-file FILE', '--only ID|NAME', '--log-format text|json'],
    ],
    ['check', ['--base-url URL', '--table ID[=NAME]', '--token-file FILE', '--config FILE', '--demo']],
    ['query', ['--out DIR', '--format table|csv|json']],
    ['ddl', ['--out DIR', '--database NAME', '--location-root S3_URI']],
    ['reprocess', ['--date YYYY-MM-DD', '--config FILE', '--table ID=NAME', '--out DIR']],
    ['reset', ['--out DIR']],
  ])('%s --help lists its flags', async (command, flags) => {
    const result = await cli([command, '--help'])
    expect(result.exitCode).toBe(0)
    const listed = result.stdout.slice(result.stdout.indexOf('\nFlags:\n'))
    for (const flag of [...flags, '-h, --help']) expect(listed).toContain(`  ${flag}  `)
  })
})
