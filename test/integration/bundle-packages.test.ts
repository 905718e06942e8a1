/**
 * The Lambda bundle carries one copy of each package (two copies are two cold-start initialisations and drift)
 * and no more of each than the handler uses: what is bundled is compiled on every cold start.
 */
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { buildBundle, duplicatePackages } from '../../bench/bundle.ts'

const REPO = path.resolve(import.meta.dirname, '../..')

describe('the Lambda bundle', () => {
  let inputs: string[] = []
  beforeAll(async () => {
    ;({ inputs } = await buildBundle(REPO))
  }, 120_000)

  it('bundles every package from one folder only', () => {
    expect(inputs.some((input) => input.includes('node_modules/@aws-lambda-powertools/metrics/'))).toBe(true)
    expect(Object.fromEntries(duplicatePackages(inputs))).toEqual({})
  })

  it("takes the AWS SDK clients' ES builds, as the stack's mainFields ask, so that unused commands are left out", () => {
    const clients = inputs.filter((input) => /node_modules\/@aws-sdk\/client-[a-z-]+\/dist-/.test(input))

    expect(clients.some((input) => input.includes('/client-glue/dist-es/'))).toBe(true)
    expect(clients.filter((input) => input.includes('/dist-cjs/'))).toEqual([])
  })

  it('leaves out the SDK clients only `npm run verify` and the integration test use (devDependencies)', () => {
    const clients = new Set(
      inputs.flatMap((input) => /node_modules\/@aws-sdk\/(client-[a-z0-9-]+)\//.exec(input)?.[1] ?? []),
    )

    expect([...clients].sort()).toEqual(['client-glue', 'client-s3', 'client-secrets-manager'])
  })

  it("carries zod's English messages only, not its 60-odd locales (a namespace import lets esbuild drop them)", () => {
    const locales = inputs.filter((input) => input.includes('node_modules/zod/v4/locales/'))

    expect(locales).toEqual(['node_modules/zod/v4/locales/en.js'])
  })

  it('tells a package bundled from two folders, scoped or not, as a duplicate', () => {
    const inputs = [
      'node_modules/@aws-lambda-powertools/commons/lib/esm/index.js',
      'node_modules/@aws-lambda-powertools/parameters/node_modules/@aws-lambda-powertools/commons/lib/esm/index.js',
      'node_modules/@aws-lambda-powertools/parameters/lib/esm/index.js',
      'node_modules/tslib/tslib.es6.mjs',
      'node_modules/@smithy/core/node_modules/tslib/tslib.es6.mjs',
      'node_modules/zod/v4/core/core.js',
      'node_modules/zod/v4/classic/schemas.js',
      'functions/export/lambda/handler.ts',
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
