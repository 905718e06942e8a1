import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'
import { SlowFirstSequencer } from './test/support/slow-first.ts'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Every test file's temporary folders in one, removed afterwards (pass or fail).
    setupFiles: ['test/support/temp-root.ts'],
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
  },
})
