import { describe, expect, it } from 'vitest'
import { DEFAULT_CLI_PORT, parseCliArgs } from '../../emulator/cli-args.ts'
import { EmulatorErrorCode } from '../../emulator/errors.ts'

describe('parseCliArgs', () => {
  it('uses the defaults when no flag is given', () => {
    expect(parseCliArgs([])).toEqual({
      help: false,
      port: DEFAULT_CLI_PORT,
      host: '127.0.0.1',
      seed: 1,
      rows: {},
      changes: [],
    })
  })

  it('reads port, host, seed and row counts, repeated or comma-separated', () => {
    const argv = [
      '--port',
      '0',
      '--host',
      '0.0.0.0',
      '--seed',
      '7',
      '--rows',
      'devices=100_000,users=5',
      '--rows',
      'software=1',
    ]
    expect(parseCliArgs(argv)).toEqual({
      help: false,
      port: 0,
      host: '0.0.0.0',
      seed: 7,
      rows: { devices: 100_000, users: 5, software: 1 },
      changes: [],
    })
  })

  it('reads upstream changes: a share of rows kept, and columns dropped, per table id', () => {
    const argv = ['--keep-rows', '1001=0.05', '--drop-column', '1001=OS Version', '--drop-column', '1003=Email']
    expect(parseCliArgs(argv).changes).toEqual([
      { tableId: '1001', keepRows: 0.05 },
      { tableId: '1001', dropColumns: ['OS Version'] },
      { tableId: '1003', dropColumns: ['Email'] },
    ])
  })

  it('recognises --help and -h', () => {
    expect(parseCliArgs(['--help']).help).toBe(true)
    expect(parseCliArgs(['-h']).help).toBe(true)
  })

  it.each([
    [['--port', 'eighty'], '--port must be an integer, got "eighty"'],
    [['--port', '70000'], '--port must be from 0 to 65535, got 70000'],
    [['--seed', '1.5'], '--seed must be an integer, got "1.5"'],
    [['--rows', 'printers=3'], '--rows "printers=3": table must be one of devices, software, users'],
    [['--rows', 'devices=-2'], '--rows "devices=-2": count must be a non-negative integer'],
    [['--verbose'], 'unknown flag --verbose'],
    [['--prot', '8080'], 'unknown flag --prot; did you mean --port?'],
    [['--keep-rows', '1001=half'], '--keep-rows "1001=half": the share must be a number from 0 to 1'],
    [['--keep-rows', '1001=1.5'], '--keep-rows "1001=1.5": the share must be a number from 0 to 1'],
    [['--drop-column', 'OS Version'], '--drop-column must be <table id>=<value>, got "OS Version"'],
  ])('rejects %j with a usage error that names the problem', (argv, problem) => {
    expect(() => parseCliArgs(argv)).toThrow(expect.objectContaining({ code: EmulatorErrorCode.USAGE_INVALID }))
    expect(() => parseCliArgs(argv)).toThrow(problem)
  })

  it('reports every bad flag at once', () => {
    expect(() => parseCliArgs(['--port', 'x', '--seed', 'y'])).toThrow(/--port[\s\S]*--seed/)
  })
})
