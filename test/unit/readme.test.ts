import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { withFreshReference } from '../../infra/config-reference.ts'

const readme = () => readFile(new URL('../../README.md', import.meta.url), 'utf8')
const packageScripts = async () =>
  Object.keys(JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')).scripts as object)

describe('the README', () => {
  it('carries the configuration reference generated from the schema (run npm run docs when this fails)', async () => {
    const text = await readme()
    expect(text).toBe(withFreshReference(text))
  })

  it('names only npm scripts that exist', async () => {
    const scripts = new Set([...(await packageScripts()), 'start', 'test', 'ci'])
    const named = [...(await readme()).matchAll(/npm run ([a-z][a-z:-]*)/g)].map((m) => m[1]!)
    expect(named.length).toBeGreaterThan(3)
    expect(named.filter((name) => !scripts.has(name))).toEqual([])
  })
})
