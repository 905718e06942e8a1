import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'
import { SlowFirstSequencer } from './test/support/slow-first.ts'

/**
 * Files that share a worker process, one after another, instead of a fresh process each: they change no global
 * state a later file would see (no vi.mock, no process.env), so they pay for loading their modules once per
 * worker rather than once per file (aws-cdk-lib alone takes seconds). The rest of the suite starts child
 * processes, threads and servers, mocks modules and changes process.env, and keeps a process per file.
 */
const SHARED_PROCESS = ['test/unit/**/*.test.ts', 'test/emulator/**/*.test.ts', 'test/infra/**/*.test.ts']

export default defineConfig({
  test: {
    // Every test file's temporary folders in one, removed afterwards (pass or fail); the run fails if anything new
    // is left in the OS temp folder all the same.
    setupFiles: ['test/support/temp-root.ts'],
    globalSetup: ['test/support/temp-check.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default is one file fewer than cores, which on two cores runs the files one at a time. Many of them
    // wait on child processes, threads and sockets, so three at a time keep two cores busy: on a loaded two-core
    // machine 16 integration files took 168 s one at a time, 109 s two at a time and 90 s three at a time.
    maxWorkers: Math.max(3, availableParallelism() - 1),
    // The slowest files first, on a clean checkout too (test/support/slow-first.ts).
    sequence: { sequencer: SlowFirstSequencer },
    reporters: process.env.CI ? ['default'] : ['default'],
    projects: [
      { extends: true, test: { name: 'shared-process', include: SHARED_PROCESS, isolate: false } },
      { extends: true, test: { name: 'process-per-file', include: ['test/**/*.test.ts'], exclude: SHARED_PROCESS } },
    ],
  },
})
