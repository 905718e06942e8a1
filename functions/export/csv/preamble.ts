/**
 * What may come before a CSV's header line: blank lines, and Excel's `sep=;` line, which names the delimiter
 * instead of being the header. Both are read past here, so the header is the first line with content.
 */
import { DELIMITERS, type Delimiter } from '../core/constants.ts'

const CR = 0x0d
const LF = 0x0a
const SPACE = 0x20
const TAB = 0x09
/** `sep=` and one delimiter, then the line's end. */
const SEP_LINE = /^sep=(.)(\r\n?|\n|$)/

export interface Preamble {
  /** The bytes read from the header line on (a copy), where the header scan goes on. */
  readonly buffered: readonly Buffer[]
  /** Every chunk read (copies), preamble and all: to replay the body from its start. */
  readonly read: readonly Buffer[]
  readonly ended: boolean
  /** csv-parse lines before the header line: 0 for a file that starts with its header. */
  readonly lines: number
  /** The delimiter a `sep=` line named. */
  readonly delimiter?: Delimiter | undefined
}

/** Where the first line with content starts at or after `from`, and the line breaks passed; undefined: read more. */
const skipBlankLines = (head: Buffer, from: number, ended: boolean): { at: number; lines: number } | undefined => {
  let lines = 0
  let lineStart = from
  for (let i = from; i < head.length; i++) {
    const byte = head[i]!
    if (byte === SPACE || byte === TAB) continue
    if (byte === LF) {
      lines++
      lineStart = i + 1
      continue
    }
    if (byte !== CR) return { at: lineStart, lines }
    // A CR at the end of what was read may be the first half of a CRLF: one line break, as csv-parse counts it.
    if (i + 1 === head.length && !ended) return undefined
    if (head[i + 1] === LF) i++
    lines++
    lineStart = i + 1
  }
  return ended ? { at: head.length, lines } : undefined
}

/** Reads the body's blank lines and `sep=` line, at most `maxBytes` of them (the header scan's own bound). */
export const readPreamble = async (iterator: AsyncIterator<Buffer>, maxBytes: number): Promise<Preamble> => {
  const read: Buffer[] = []
  let head: Buffer = Buffer.alloc(0)
  let ended = false
  const more = async (): Promise<boolean> => {
    if (ended || head.length >= maxBytes) return false
    const next = await iterator.next()
    if (next.done) {
      ended = true
      return true
    }
    // A copy: the caller may reuse a chunk's memory once the chunks after it are parsed (see parse-worker.ts).
    read.push(Buffer.from(next.value))
    head = read.length === 1 ? read[0]! : Buffer.concat(read)
    return true
  }
  let blank = skipBlankLines(head, 0, ended)
  while (blank === undefined && (await more())) blank = skipBlankLines(head, 0, ended)
  blank ??= { at: head.length, lines: 0 }
  // `sep=;` and its line break: a CR at the end may still be followed by an LF.
  while (!ended && head.length - blank.at < 7 && head.length < maxBytes && (await more())) {}
  const sep = SEP_LINE.exec(head.subarray(blank.at, blank.at + 7).toString('latin1'))
  const delimiter = DELIMITERS.find((d) => d === sep?.[1])
  if (sep === null || delimiter === undefined) {
    return { buffered: rest(head, blank.at), read, ended, lines: blank.lines }
  }
  const at = blank.at + sep[0].length
  return { buffered: rest(head, at), read, ended, lines: blank.lines + (sep[2] === '' ? 0 : 1), delimiter }
}

const rest = (head: Buffer, at: number): Buffer[] => (at < head.length ? [head.subarray(at)] : [])
