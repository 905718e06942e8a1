/**
 * Every command, run as the real process, through bad inputs: each ends with its exit status, one coded line that
 * names the field or flag, and no stack trace. The start and check commands here; the other commands in
 * cli-failures-tools.test.ts.
 */
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  type Case,
  cli,
  config,
  dir,
  emulator,
  expectCodedFailure,
  exportWithoutRequests,
  file,
  run,
  token,
  useCliFailures,
} from '../support/cli-failures.ts'

useCliFailures()

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
    'start: a flag of another command (check takes no --location-root, which ddl takes)',
    {
      command: 'check',
      exitCode: 2,
      code: 'USAGE_INVALID',
      names: /unknown flag --location-root/,
      nextStep: /run with --help/,
      run: () => cli(['check', '--location-root', 's3://bucket/inventory']),
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
]

describe.each(cases)('%s', (_name, failure) => {
  it(`exits ${failure.exitCode} with one coded line naming the problem, and no stack trace`, () =>
    expectCodedFailure(failure))
})

describe('help', () => {
  it.each([
    ['bench', 'bench/run.ts', /Usage: npm run bench/],
    ['emulator', 'emulator/main.ts', /^Usage: npm run emulator -- \[flags\]$[\s\S]*--keep-rows[\s\S]*--drop-column/m],
    ['start', 'functions/local/cli.mjs', /Usage: npm start/],
  ])('%s --help prints its usage and exits 0', async (_name, script, usage) => {
    const argv = script.endsWith('cli.mjs') ? ['export', '--help'] : ['--help']
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
      [
        '--base-url URL',
        '--table ID[=NAME]',
        '--token-file FILE',
        '--only ID|NAME',
        '--log-format text|json',
        '--out DIR|s3://BUCKET[/PREFIX]',
        '--glue-database NAME',
        '--stack NAME',
      ],
    ],
    ['check', ['--base-url URL', '--table ID[=NAME]', '--token-file FILE', '--config FILE', '--demo']],
    ['query', ['--out DIR', '--format table|csv|json']],
    ['ddl', ['--out DIR|s3://BUCKET[/PREFIX]', '--table NAME|ID', '--database NAME', '--location-root S3_URI']],
    [
      'reprocess',
      ['--date YYYY-MM-DD', '--config FILE', '--table NAME|ID', '--out DIR|s3://BUCKET[/PREFIX]', '--stack NAME'],
    ],
    ['reset', ['--out DIR']],
  ])('%s --help lists its flags', async (command, flags) => {
    const result = await cli([command, '--help'])
    expect(result.exitCode).toBe(0)
    const listed = result.stdout.slice(result.stdout.indexOf('\nFlags:\n'))
    for (const flag of [...flags, '-h, --help']) expect(listed).toContain(`  ${flag}  `)
  })
})
