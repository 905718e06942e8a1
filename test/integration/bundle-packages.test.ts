/** The Lambda bundle carries one copy of each package: two copies are two cold-start initialisations and drift. */
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { buildBundle, duplicatePackages } from '../../bench/bundle.ts'

const REPO = path.resolve(import.meta.dirname, '../..')

describe('the Lambda bundle', () => {
  it('bundles every package from one folder only', async () => {
    const { inputs } = await buildBundle(REPO)

    expect(inputs.some((input) => input.includes('node_modules/@aws-lambda-powertools/metrics/'))).toBe(true)
    expect(Object.fromEntries(duplicatePackages(inputs))).toEqual({})
  }, 120_000)

  it('tells a package bundled from two folders, scoped or not, as a duplicate', () => {
    const inputs = [
      'node_modules/@aws-lambda-powertools/commons/lib/esm/index.js',
      'node_modules/@aws-lambda-powertools/parameters/node_modules/@aws-lambda-powertools/commons/lib/esm/index.js',
      'node_modules/@aws-lambda-powertools/parameters/lib/esm/index.js',
      'node_modules/tslib/tslib.es6.mjs',
      'node_modules/@smithy/core/node_modules/tslib/tslib.es6.mjs',
      'node_modules/zod/v4/core/core.js',
      'node_modules/zod/v4/classic/schemas.js',
      'functions/export/handler.ts',
    ]

    expect(Object.fromEntries(duplicatePackages(inputs))).toEqual({
      '@aws-lambda-powertools/commons': [
        'node_modules/@aws-lambda-powertools/commons',
        'node_modules/@aws-lambda-powertools/parameters/node_modules/@aws-lambda-powertools/commons',
      ],
      tslib: ['node_modules/@smithy/core/node_modules/tslib', 'node_modules/tslib'],
    })
  })
})
