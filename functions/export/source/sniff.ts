/**
 * Tells a page from a table by the body's first bytes: markup (HTML, XML, a comment, a script), a JSON document or
 * compressed bytes served with 200 instead of the file. Pure; body.ts feeds it the start of the body, chunk by chunk.
 */

/**
 * Bytes of the body held back at most while its start is blank: a page after a megabyte of blank lines is still a
 * page, and no table starts with that many. The header scan reads further (csv/parse.ts), so this decides first.
 */
export const SNIFF_LIMIT_BYTES = 1024 * 1024
/** Characters after the blanks (and a `sep=` line) that are enough to decide. */
const SNIFF_CHARACTERS = 256

/**
 * `<!DOCTYPE`, `<!--`, `<?xml`, or a tag: `<` and a name that starts with a letter and ends at a space, `/` or
 * `>` (`<title>`, `<html lang="en">`, `<br/>`). A header such as `<5 years,count` is no tag and stays a table.
 */
const MARKUP_START = /^<(!doctype|!--|\?xml|[a-z][\w:.-]*(?=[\s/>]))/i
/**
 * A JSON object (`{` then a quoted name or `}`) or array (`[` then an object, array, string or `]`), with any
 * whitespace in between, across chunks: `[\n  {"error": ...` is a pretty-printed error, `[Device ID],Owner` a table.
 */
const JSON_START = /^(\{\s*(["}]|$)|\[\s*([{["\]]|$))/
/**
 * What a body may start with before its first line with content, as bytes read as latin1 (NUL bytes, UTF-16's
 * high bytes, are gone already): blanks and form feeds (`\s` takes in a windows-1252 no-break space), byte-order
 * marks (one, or one added to a body that had one), and UTF-8 no-break and zero-width spaces. What a table may
 * start with is the same, less the invisible characters: they would make a header no one could read.
 */
const LEADING_BLANKS = /^(?:\s|\u00ef\u00bb\u00bf|\u00ff\u00fe|\u00fe\u00ff|\u00c2\u00a0|\u00e2\u0080[\u008b-\u008d])+/
/** Excel's `sep=;` line, which csv/preamble.ts reads past: what follows it is what the body is. */
const SEP_LINE = /^sep=[^\r\n]?(\r\n?|\n)/

/**
 * Binary starts no text encoding reads as a table: compressed bytes sent without their Content-Encoding, or a
 * workbook on the CSV route. Read as windows-1252 they would be rows of garbage.
 */
const BINARY_STARTS = [
  { magic: [0x1f, 0x8b], kind: 'gzip-compressed bytes without a Content-Encoding' },
  { magic: [0x28, 0xb5, 0x2f, 0xfd], kind: 'zstd-compressed bytes' },
  { magic: [0x50, 0x4b, 0x03, 0x04], kind: 'a zip file (a workbook?)' },
] as const

const BLANK_START = `nothing but blank lines in its first ${SNIFF_LIMIT_BYTES / (1024 * 1024)} MiB` as const

export type PageKind =
  | 'markup (an HTML or XML page)'
  | 'a JSON document'
  | typeof BLANK_START
  | (typeof BINARY_STARTS)[number]['kind']

/** The start of the body as text to match: NUL bytes left out, then blanks, byte-order marks and a `sep=` line. */
const headText = (head: Buffer): string => {
  const text = head.toString('latin1').replaceAll('\u0000', '').replace(LEADING_BLANKS, '')
  return text.replace(SEP_LINE, '').replace(LEADING_BLANKS, '')
}

/**
 * What the start of the body is: a page kind, `undefined` for a table (or too little to tell it from one), or
 * `'undecided'` while more bytes could change the answer. `ended`: the body ends after `head`.
 */
export const sniffPage = (head: Buffer, ended: boolean): PageKind | undefined | 'undecided' => {
  const binary = BINARY_STARTS.find(({ magic }) => magic.every((byte, i) => head[i] === byte))
  if (binary !== undefined) return binary.kind
  const text = headText(head)
  const full = head.length >= SNIFF_LIMIT_BYTES
  if (!ended && !full && text.length <= SNIFF_CHARACTERS) return 'undecided'
  if (full && text === '') return BLANK_START
  if (MARKUP_START.test(text)) return 'markup (an HTML or XML page)'
  // An object or array with nothing but blanks after its bracket is JSON only when that is all there is.
  return JSON_START.test(text.slice(0, SNIFF_CHARACTERS + 1)) ? 'a JSON document' : undefined
}

/** At most `max` characters of the start of a refused body, escaped: no line break or control character. */
export const bodyExcerpt = (head: Buffer, max = 40): string => {
  const text = headText(head)
  const shown = JSON.stringify(text.slice(0, max)).replace(
    /[\u007f-\u009f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )
  return text.length > max ? `${shown}...` : shown
}
