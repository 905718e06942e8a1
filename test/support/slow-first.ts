/**
 * The order `npm test` starts its files in: the slowest first, so that on two cores the run does not end with one
 * long file on one core and the other idle. Vitest's own order (BaseSequencer) puts the longest first too, but only
 * from the durations of an earlier run in its cache; on a clean checkout (CI, a contributor's first run) it starts
 * the largest files first, and the memory tests, short files that run for a minute, came last. SLOW_FILES are the
 * files that took 15 s or more in a whole run on two cores (vitest's cache of durations and a run under load,
 * 2026-12-01), slowest first, with the two that run `cdk synth`; a file that is not there any more fails
 * test/unit/slow-first.test.ts.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node'

export const SLOW_FILES: readonly string[] = [
  'test/integration/iceberg-history.test.ts',
  'test/unit/csv/chunks.test.ts',
  'test/integration/worker-threads.test.ts',
  'test/integration/xlsx-memory.test.ts',
  'test/unit/xlsx/workbook-thread.test.ts',
  'test/integration/streaming-memory.test.ts',
  'test/integration/one-writer.test.ts',
  'test/integration/cli-failures-tools.test.ts',
  'test/integration/xlsx-export.test.ts',
  'test/infra/exporter.test.ts',
  'test/integration/faults/source.test.ts',
  'test/unit/csv/parse-worker.test.ts',
  'test/integration/record-limits-memory.test.ts',
  'test/infra/cli.test.ts',
  'test/integration/request-budgets.test.ts',
  'test/integration/fidelity.test.ts',
  'test/integration/emulator.test.ts',
  'test/integration/cli-failures.test.ts',
  'test/integration/xlsx-thread.test.ts',
  'test/aws/history-fanout.test.ts',
  'test/aws/one-writer.test.ts',
  'test/integration/cli-s3.test.ts',
  'test/integration/bench-smoke.test.ts',
  'test/aws/first-run.test.ts',
  'test/integration/lambda-bundle.test.ts',
  'test/aws/retention-permissions.test.ts',
  'test/integration/faults/publish.test.ts',
  'test/integration/runner.test.ts',
  'test/aws/cli-operator.test.ts',
]

/** The position of `file` (a path from the repository's root) in SLOW_FILES, or the end for every other file. */
export const slowRank = (file: string): number => {
  const rank = SLOW_FILES.indexOf(file)
  return rank === -1 ? SLOW_FILES.length : rank
}

/** Vitest's order, with SLOW_FILES moved to the front in their order (a stable sort keeps the rest as they were). */
export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const root = `${this.ctx.config.root}/`
    const rank = (spec: TestSpecification) =>
      slowRank(spec.moduleId.startsWith(root) ? spec.moduleId.slice(root.length) : spec.moduleId)
    return sorted.toSorted((a, b) => rank(a) - rank(b))
  }
}
