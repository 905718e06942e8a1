/**
 * The commands other than start and check (query, ddl, reset, reprocess, the emulator, the bench, synth), run as
 * the real process through bad inputs: each ends with its exit status, one coded line that names the field or
 * flag, and no stack trace, as cli-failures.test.ts checks for start and check.
 */
import { describe, it } from 'vitest'
import {
  type Case,
  cli,
  config,
  dir,
  emulator,
  expectCodedFailure,
  file,
  run,
  synth,
  useCliFailures,
} from '../support/cli-failures.ts'

useCliFailures()

const cases: [string, Case][] = [
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
    'reprocess: no --table and no --config',
    {
      command: 'reprocess',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /which tables to rebuild: give --config FILE or --table NAME\|ID \(repeatable\)$/m,
      nextStep: /npm run reprocess -- --date YYYY-MM-DD --config FILE, or --table NAME for each table/,
      run: () => cli(['reprocess', '--date', '2026-01-01']),
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
    'emulator: a misspelt flag',
    {
      command: 'emulator',
      exitCode: 2,
      code: 'EMULATOR_USAGE_INVALID',
      names: /unknown flag --prot; did you mean --port\?/,
      run: () => run('emulator/main.ts', ['--prot', '8080']),
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
  it(`exits ${failure.exitCode} with one coded line naming the problem, and no stack trace`, () =>
    expectCodedFailure(failure))
})
