/**
 * Upstream text (headers, cells, user records, error bodies, sheet names) made safe to print: it is data, never a
 * line of our output. Escape sequences, line breaks and bidi overrides in it are shown as visible escapes, so a
 * header cannot clear the screen and a cell cannot forge a `next step:` line. docs/operations.md lists the set.
 */

/**
 * The characters escaped: C0 controls (with TAB, CR, LF and ESC), DEL, C1 controls, the Unicode line and paragraph
 * separators, and the bidi embeddings, overrides and isolates that reorder the rest of a line on screen.
 */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g
/** The same set without C0, which JSON.stringify escapes already. */
const UNPRINTABLE_IN_JSON = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }

const hex = (character: string, digits: number): string => character.charCodeAt(0).toString(16).padStart(digits, '0')

const escapeOf = (character: string): string =>
  NAMED[character] ?? (character.charCodeAt(0) < 0x100 ? `\\x${hex(character, 2)}` : `\\u${hex(character, 4)}`)

/**
 * `text` as one line of plain characters: LF as `\n`, CR as `\r`, TAB as `\t`, other controls as `\x1b`, bidi
 * controls as `\u202e`. Backslashes are kept as they are, so Windows paths stay readable; applying it twice changes
 * nothing.
 */
export const printable = (text: string): string => text.replace(UNPRINTABLE, escapeOf)

/**
 * `value` as one line of JSON for a terminal: JSON.stringify escapes C0 controls, this also writes C1 and bidi
 * controls as `\u` escapes, so the line parses to the same value.
 */
export const printableJson = (value: unknown): string =>
  JSON.stringify(value).replace(UNPRINTABLE_IN_JSON, (character) => `\\u${hex(character, 4)}`)
