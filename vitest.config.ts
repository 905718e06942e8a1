import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Every test file's temporary folders in one, removed afterwards (pass or fail).
    setupFiles: ['test/support/temp-root.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: process.env.CI ? ['default'] : ['default'],
  },
})
