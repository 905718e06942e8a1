import { readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { REFERENCE_PAGE, withFreshReference } from '../../infra/config-reference.ts'
import { anchors, isExternal, linkTargets, prose, slug } from '../support/markdown.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')
const read = (file: string) => readFile(path.join(ROOT, file), 'utf8')
const docsPages = async () =>
  (await readdir(path.join(ROOT, 'docs'))).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)
/** Every page a reader can reach from the README: the README, the changelog and docs/. */
const pages = async () => ['README.md', 'CHANGELOG.md', ...(await docsPages())]
const packageScripts = async () => Object.keys(JSON.parse(await read('package.json')).scripts as object)

const exists = async (file: string) =>
  stat(file).then(
    () => true,
    () => false,
  )

/** The relative links of a page that do not resolve: a missing file, or an anchor no heading of its target has. */
const brokenLinks = async (page: string, text: string): Promise<string[]> => {
  const broken: string[] = []
  for (const target of linkTargets(text)) {
    if (isExternal(target)) continue
    const [file = '', anchor] = target.split('#', 2)
    const resolved = file === '' ? path.join(ROOT, page) : path.resolve(path.dirname(path.join(ROOT, page)), file)
    if (!(await exists(resolved))) {
      broken.push(`${target} (no file ${path.relative(ROOT, resolved)})`)
    } else if (anchor !== undefined && !anchors(await readFile(resolved, 'utf8')).has(anchor)) {
      broken.push(`${target} (no heading with that anchor in ${path.relative(ROOT, resolved)})`)
    }
  }
  return broken
}

describe('the README', () => {
  it('is at most 400 lines long', async () => {
    expect((await read('README.md')).trimEnd().split('\n').length).toBeLessThanOrEqual(400)
  })

  it('opens with a table of contents that lists each of its sections', async () => {
    const text = await read('README.md')
    const sections = [...prose(text).matchAll(/^## (.+)$/gm)].map((m) => m[1]!).filter((s) => s !== 'Contents')
    const contents = /^## Contents\n\n((?:- .*\n)+)/m.exec(text)?.[1] ?? ''
    expect(sections.length).toBeGreaterThan(4)
    expect(linkTargets(contents)).toEqual(sections.map((section) => `#${slug(section)}`))
  })

  it('links every page of docs/ and the changelog', async () => {
    const linked = new Set(linkTargets(await read('README.md')).map((target) => target.split('#')[0]))
    const unlinked = [...(await docsPages()), 'CHANGELOG.md'].filter((page) => !linked.has(page))
    expect(unlinked).toEqual([])
  })
})

describe('the docs', () => {
  it('resolve every relative link of the README, the changelog and docs/, anchors included', async () => {
    const broken: string[] = []
    for (const page of await pages()) {
      for (const link of await brokenLinks(page, await read(page))) broken.push(`${page}: ${link}`)
    }
    expect(broken).toEqual([])
  })

  it('carry the configuration reference generated from the schema (run npm run docs when this fails)', async () => {
    const text = await read(REFERENCE_PAGE)
    expect(text).toBe(withFreshReference(text))
  })

  it('name only npm scripts that exist', async () => {
    const scripts = new Set([...(await packageScripts()), 'start', 'test', 'ci'])
    const named: string[] = []
    for (const page of await pages()) {
      named.push(...[...(await read(page)).matchAll(/npm run ([a-z][a-z:-]*)/g)].map((m) => m[1]!))
    }
    expect(named.length).toBeGreaterThan(3)
    expect(named.filter((name) => !scripts.has(name))).toEqual([])
  })
})

describe('the link check', () => {
  it('gives headings the anchors GitHub gives them', () => {
    expect(slug('Workbooks (`format: "xlsx"`)')).toBe('workbooks-format-xlsx')
    expect(slug("Analysts' access")).toBe('analysts-access')
    expect(slug('What is retried, and how often')).toBe('what-is-retried-and-how-often')
    expect(slug('Column names')).toBe('column-names')
    expect([...anchors('# A\n\n## Notes\n\n```sh\n# not a heading\n```\n\n## Notes\n')]).toEqual([
      'a',
      'notes',
      'notes-1',
    ])
  })

  it('reports a missing page, a missing anchor and a link in code not at all', async () => {
    const text = [
      'See [the guide](docs/no-such-page.md), [analysts](docs/analysts.md#no-such-heading),',
      '[tables](docs/analysts.md#tables-and-views) and [here](#nowhere). `[code](docs/none.md)`',
      '```',
      '[fenced](docs/none.md)',
      '```',
    ].join('\n')
    expect(await brokenLinks('README.md', text)).toEqual([
      'docs/no-such-page.md (no file docs/no-such-page.md)',
      'docs/analysts.md#no-such-heading (no heading with that anchor in docs/analysts.md)',
      '#nowhere (no heading with that anchor in README.md)',
    ])
  })
})
