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
    // The slowest files first, on a clean checkout too (test/support/slow-first.ts).
    sequence: { sequencer: SlowFirstSequencer },
    reporters: process.env.CI ? ['default'] : ['default'],
  },
})
