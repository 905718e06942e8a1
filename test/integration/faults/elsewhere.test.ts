/**
 * Scenarios of the hostile-input review (issue 18) that need a process of their own, a thread forced on, or a
 * synthesized stack, and so live in their own files; the fault matrix's other files cover the rest (unframed
 * bodies, a trickle past the table budget, the 2 MiB token check in body.test.ts and source.test.ts; bad --out,
 * --table 1=a=b, the date window, a header-illegal token in state.test.ts; the registry race and the spool sweep
 * in publish.test.ts). Listed here so that the fault matrix shows every scenario; the test below keeps each
 * reference pointing at a test that exists and runs: the title is read from the file's syntax tree, so a title
 * that survives only in a comment, or in a skipped test, does not count.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { declaredTests } from '../../support/test-titles.ts'

const testedElsewhere: readonly {
  readonly scenario: string
  readonly outcome: string
  readonly file: string
  /** The title of a describe, it or test in that file, as written there ('%s' and '$name' included). */
  readonly test: string
  /** For a title shared by the rows of an `.each` table: the label of the row that is this scenario. */
  readonly row?: string
}[] = [
  {
    scenario: 'a data error followed by 50 MiB, the parse thread forced on (the hang)',
    outcome: 'ROW_FIELD_COUNT / INVALID_ENCODING within the child kill timer, no hang',
    file: 'test/unit/csv/parse-worker.test.ts',
    test: 'fails on %s followed by 50 MiB of rows, and does not hang',
  },
  {
    scenario: 'an event loop starved past the deadline',
    outcome: 'DEADLINE_EXCEEDED in one coded line from the watchdog',
    file: 'test/unit/lambda/watchdog.test.ts',
    test: 'stops a run whose event loop is starved past the deadline, saying why in a coded line',
  },
  {
    scenario: 'headers of 1 MB and 10 MB of commas, a row of 100 MB of commas, a field of 300 MB',
    outcome: 'LIMIT_EXCEEDED naming limits.maxColumns / limits.maxFieldBytes, peak RSS under 400 MB',
    file: 'test/integration/record-limits-memory.test.ts',
    test: 'a hostile table fails on a limit in bounded memory',
  },
  {
    scenario: '100,000 identical headers',
    outcome: 'unique names in linear time',
    file: 'test/unit/normalize/columns.test.ts',
    test: 'names 100,000 identical headers uniquely, in order, the same way every time',
  },
  {
    scenario: 'two runs for different dates at once on S3',
    outcome: 'both succeed, the added column stays registered (If-Match refused by the stand-in as S3 does)',
    file: 'test/integration/concurrent-registry.test.ts',
    test: 'keep the column the faster run added, in %s',
  },
  {
    scenario: 'a warehouse folder that cannot be created, for the store itself',
    outcome: 'PUBLISH_FAILED from openUpload and putObject, no spinning mkdir under /proc',
    file: 'test/unit/publish/fs.test.ts',
    test: '%s: openUpload and putObject fail as PUBLISH_FAILED naming the target',
  },
  {
    scenario: 'reprocess with a bad --out',
    outcome: 'USAGE_INVALID, exit 2, before anything is read',
    file: 'test/integration/cli-failures-tools.test.ts',
    test: '%s',
    row: 'reprocess: --out cannot be written',
  },
  {
    scenario: 'the function role without s3:DeleteObject',
    outcome: 'the object statement lists exactly Get, Put and the multipart actions',
    file: 'test/infra/iam.test.ts',
    test: 'scope object access to the warehouse prefix and listing to that prefix',
  },
  {
    scenario: "the alarm key's CloudWatch grant",
    outcome:
      "the key's actions AWS documents for alarms; the topic lets only this account's alarms publish (aws:SourceAccount)",
    file: 'test/infra/alarms.test.ts',
    test: "grants CloudWatch the topic key's actions AWS documents for alarms on an encrypted topic, and only where the topic lets this account's alarms publish",
  },
]

describe('scenarios tested in their own files', () => {
  it.each(testedElsewhere)('$scenario: $file still has the test', async ({ file, test, row }) => {
    const source = await readFile(path.resolve(import.meta.dirname, '../../..', file), 'utf8')
    const declared = declaredTests(source, file).filter((t) => t.title === test)
    expect(declared, `no describe, it or test titled "${test}" runs in ${file}`).not.toEqual([])
    if (row !== undefined) expect(declared.flatMap((t) => t.rows)).toContain(row)
  })
})

describe('reading the titles a test file declares', () => {
  it('counts titles that run, and not those in comments, strings, or skipped and to-do tests', () => {
    const source = [
      "// it('a title in a comment', () => {})",
      "const note = 'a title in a string'",
      "describe('a suite', () => {",
      "  it('a test that runs', () => {})",
      "  it.skip('a skipped test', () => {})",
      "  it.todo('a test to do')",
      "  it.skip.each([['a']])('a skipped table %s', () => {})",
      "  it.each([['first row', 1], ['second row', 2]])('%s is a row', () => {})",
      '})',
      "const cases = [{ name: 'named row' }] as const",
      "describe.each(cases)('$name', () => {})",
    ].join('\n')

    expect(declaredTests(source)).toEqual([
      { title: 'a suite', rows: [] },
      { title: 'a test that runs', rows: [] },
      { title: '%s is a row', rows: ['first row', 'second row'] },
      { title: '$name', rows: ['named row'] },
    ])
  })
})
