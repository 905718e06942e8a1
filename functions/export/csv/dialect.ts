/** Dialect detection: the delimiter is the candidate that occurs most often in the header line, outside quotes. */
import { DELIMITERS, type Delimiter } from '../core/constants.ts'

export interface HeaderScan {
  /** Whether the first unquoted line break was found in the bytes given. */
  readonly complete: boolean
  readonly delimiter: Delimiter
  /** Fields in the header line under that delimiter. */
  readonly fieldCount: number
}

const QUOTE = 0x22
const LF = 0x0a
const CR = 0x0d
const CODES = DELIMITERS.map((d) => d.charCodeAt(0))

/** Scans the start of the file (UTF-8 bytes) up to the first line break outside quotes. */
export const scanHeaderLine = (bytes: Buffer, forced?: Delimiter): HeaderScan => {
  const counts = new Array<number>(DELIMITERS.length).fill(0)
  let quoted = false
  let complete = false
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!
    if (byte === QUOTE) quoted = !quoted
    else if (!quoted && (byte === LF || byte === CR)) {
      complete = true
      break
    } else if (!quoted) {
      const index = CODES.indexOf(byte)
      if (index >= 0) counts[index]!++
    }
  }
  let best = 0
  for (let i = 1; i < counts.length; i++) if (counts[i]! > counts[best]!) best = i
  const delimiter = forced ?? DELIMITERS[best]!
  return { complete, delimiter, fieldCount: counts[DELIMITERS.indexOf(delimiter)]! + 1 }
}
