/**
 * A deliberately simple reader of raw CSV fixtures, so the XLSX endpoint can serve them too.
 * It handles BOMs (UTF-8, UTF-16LE/BE), the delimiters , ; TAB | (most frequent in the first line wins),
 * quoted fields and ragged rows; anything stranger is passed through as literal text.
 */

const DELIMITERS = [',', ';', '\t', '|'] as const

/** Decodes by BOM; without one the bytes are taken as UTF-8 (invalid bytes become U+FFFD). */
export const decodeRawCsv = (raw: string | Uint8Array): string => {
  if (typeof raw === 'string') return raw.replace(/^\uFEFF/, '')
  const [b0, b1] = raw
  if (b0 === 0xff && b1 === 0xfe) return new TextDecoder('utf-16le').decode(raw.subarray(2))
  if (b0 === 0xfe && b1 === 0xff) return new TextDecoder('utf-16be').decode(raw.subarray(2))
  // TextDecoder drops a UTF-8 BOM by itself.
  return new TextDecoder('utf-8').decode(raw)
}

const detectDelimiter = (text: string): string => {
  const firstLine = text.slice(0, text.search(/\r?\n|$/))
  let best: string = ','
  let bestCount = 0
  for (const delimiter of DELIMITERS) {
    const count = firstLine.split(delimiter).length - 1
    if (count > bestCount) {
      best = delimiter
      bestCount = count
    }
  }
  return best
}

/** Records as arrays of strings; a final line break does not start an empty record. */
export const parseRawCsv = (raw: string | Uint8Array): string[][] => {
  const text = decodeRawCsv(raw)
  const delimiter = detectDelimiter(text)
  const records: string[][] = []
  let record: string[] = []
  let field = ''
  let quoted = false
  let atFieldStart = true
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!
    if (quoted) {
      if (char !== '"') field += char
      else if (text[i + 1] === '"') {
        field += '"'
        i++
      } else quoted = false
    } else if (char === '"' && atFieldStart) {
      quoted = true
      atFieldStart = false
    } else if (char === delimiter) {
      record.push(field)
      field = ''
      atFieldStart = true
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && text[i + 1] === '\n') i++
      record.push(field)
      records.push(record)
      record = []
      field = ''
      atFieldStart = true
    } else {
      field += char
      atFieldStart = false
    }
  }
  if (!atFieldStart || field !== '' || record.length > 0) {
    record.push(field)
    records.push(record)
  }
  return records
}
