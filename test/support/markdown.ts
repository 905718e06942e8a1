/** Reading Markdown as GitHub renders it, for the tests that keep README.md and docs/ linked and true. */

/** The text outside fenced code blocks (``` or ~~~), with inline code spans blanked: links and headings live there. */
export const prose = (markdown: string): string => {
  const lines: string[] = []
  let fence: string | undefined
  for (const line of markdown.split('\n')) {
    const opener = /^\s*(```|~~~)/.exec(line)?.[1]
    if (fence !== undefined) {
      if (opener === fence) fence = undefined
      lines.push('')
    } else if (opener !== undefined) {
      fence = opener
      lines.push('')
    } else lines.push(line.replace(/`[^`]*`/g, '``'))
  }
  return lines.join('\n')
}

/**
 * The anchor GitHub gives a heading (github-slugger): lowercased, punctuation removed (letters, digits, `_`, `-`
 * and spaces stay), each space a hyphen.
 */
export const slug = (heading: string): string =>
  heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-')

/** Every anchor a page offers: its headings' slugs, a repeated slug numbered `-1`, `-2`, ... as GitHub does. */
export const anchors = (markdown: string): Set<string> => {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  // Headings are read from the raw lines outside fences, so code spans in them keep their text.
  const raw = markdown.split('\n')
  const outside = prose(markdown).split('\n')
  raw.forEach((line, index) => {
    if (outside[index] === '' && line !== '') return
    const text = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1]
    if (text === undefined) return
    const base = slug(text)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    result.add(count === 0 ? base : `${base}-${count}`)
  })
  return result
}

/** The targets of a page's inline links `[text](target)`, outside code. */
export const linkTargets = (markdown: string): string[] =>
  [...prose(markdown).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1]!)

/** Whether a link leaves the repository (a scheme such as https: or mailto:). */
export const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target)
