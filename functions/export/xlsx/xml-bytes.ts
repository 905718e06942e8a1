/**
 * The bytes XML is made of, for the worksheet's scanner (xml-scanner.ts): markup characters, which bytes make a
 * name, the entities and character references, attribute values, and growing the scanner's buffers (text between
 * tags is xml-text.ts's).
 */

export const TAB = 0x09
export const LF = 0x0a
export const CR = 0x0d
export const SPACE = 0x20
export const BANG = 0x21
export const QUOT = 0x22
export const HASH = 0x23
export const AMP = 0x26
export const APOS = 0x27
export const DASH = 0x2d
export const SLASH = 0x2f
export const COLON = 0x3a
export const SEMI = 0x3b
export const LT = 0x3c
export const EQ = 0x3d
export const GT = 0x3e
export const QUESTION = 0x3f
export const CLOSE_BRACKET = 0x5d
export const X = 0x78

/** 1: may start a name, 2: may continue one. Bytes from 0x80 are parts of non-ASCII name characters. */
export const NAME = new Uint8Array(256)
for (let b = 0; b < 256; b++) {
  const letter = (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x5f || b === COLON || b >= 0x80
  if (letter) NAME[b] = 3
  else if ((b >= 0x30 && b <= 0x39) || b === DASH || b === 0x2e) NAME[b] = 2
}
// Most bytes tested are markup or name bytes above a space: one comparison rules them out.
export const isSpace = (b: number): boolean => b <= SPACE && (b === SPACE || b === LF || b === TAB || b === CR)

export const ascii = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0))
export const CDATA_OPEN = ascii('<![CDATA[')
export const ENTITIES: readonly (readonly [Uint8Array, number])[] = [
  [ascii('amp'), AMP],
  [ascii('lt'), LT],
  [ascii('gt'), GT],
  [ascii('quot'), QUOT],
  [ascii('apos'), APOS],
]

/** Failures of the decoding below, as negative results. */
export const UNDEFINED_ENTITY = -1
export const MALFORMED_REFERENCE = -2
export const NO_ENTITY = -3
const LT_IN_ATTRIBUTE = -4
export const DISALLOWED_CHARACTER = -5

/** What a negative result of the decoding below means, for the malformed-XML error. */
export const failure = (code: number): string =>
  code === UNDEFINED_ENTITY
    ? 'it has an entity XML does not define'
    : code === MALFORMED_REFERENCE
      ? 'it has a malformed character reference, or one to a character XML does not allow'
      : code === NO_ENTITY
        ? 'it has an "&" that starts no entity'
        : code === LT_IN_ATTRIBUTE
          ? 'an attribute value has a "<"'
          : 'it has a character XML does not allow'

/** Writes the entity named `buffer[start..end)` (after "&", before ";") as UTF-8 at `out`; returns the new end, or
 * UNDEFINED_ENTITY or MALFORMED_REFERENCE. */
export const writeEntity = (buffer: Uint8Array, start: number, end: number, into: Uint8Array, out: number): number => {
  if (buffer[start] === HASH) {
    const hex = buffer[start + 1] === X
    let code = 0
    let i = hex ? start + 2 : start + 1
    if (i === end) return MALFORMED_REFERENCE
    for (; i < end && code <= 0x10ffff; i++) {
      const b = buffer[i]! | (hex ? 0x20 : 0)
      const digit = b >= 0x30 && b <= 0x39 ? b - 0x30 : hex && b >= 0x61 && b <= 0x66 ? b - 0x57 : -1
      if (digit < 0) return MALFORMED_REFERENCE
      code = code * (hex ? 16 : 10) + digit
    }
    const allowed =
      code === TAB ||
      code === LF ||
      code === CR ||
      (code >= SPACE && code <= 0xd7ff) ||
      (code >= 0xe000 && code <= 0xfffd) ||
      (code >= 0x10000 && code <= 0x10ffff)
    if (!allowed) return MALFORMED_REFERENCE
    return out + Buffer.from(String.fromCodePoint(code), 'utf8').copy(into, out)
  }
  for (const [name, byte] of ENTITIES) {
    if (name.length !== end - start) continue
    let k = 0
    while (k < name.length && name[k] === buffer[start + k]) k++
    if (k === name.length) {
      into[out] = byte
      return out + 1
    }
  }
  return UNDEFINED_ENTITY
}

export const grow = (bytes: Uint8Array, needed: number, keep: number): Uint8Array => {
  const grown = new Uint8Array(Math.max(needed, bytes.length * 2))
  grown.set(bytes.subarray(0, keep))
  return grown
}

/**
 * Decodes the attribute value `buffer[start..end)` into `into` at `out`: entities expanded, line ends and other
 * whitespace to spaces (XML's attribute-value normalization). Returns the new end, or a failure.
 */
export const decodeAttribute = (
  buffer: Uint8Array,
  start: number,
  end: number,
  into: Uint8Array,
  out: number,
): number => {
  for (let i = start; i < end; i++) {
    const b = buffer[i]!
    // Letters and digits, first: one comparison each.
    if (b > AMP && b !== LT) into[out++] = b
    else if (b === AMP) {
      const semi = buffer.indexOf(SEMI, i)
      if (semi < 0 || semi > end) return NO_ENTITY
      out = writeEntity(buffer, i + 1, semi, into, out)
      if (out < 0) return out
      i = semi
    } else if (b === LT) return LT_IN_ATTRIBUTE
    else if (b === CR) {
      into[out++] = SPACE
      if (buffer[i + 1] === LF) i++
    } else if (b < SPACE && b !== TAB && b !== LF) return DISALLOWED_CHARACTER
    else into[out++] = b === TAB || b === LF ? SPACE : b
  }
  return out
}

/** The index of the local name (after a prefix) of `buffer[start..end)` among the names, or -1. */
export const localNameIndex = (
  names: readonly Uint8Array[],
  buffer: Uint8Array,
  start: number,
  end: number,
): number => {
  let local = start
  while (local < end && buffer[local] !== COLON) local++
  local = local < end ? local + 1 : start
  const length = end - local
  for (let n = 0; n < names.length; n++) {
    const name = names[n]!
    if (name.length !== length) continue
    let k = 0
    while (k < length && name[k] === buffer[local + k]) k++
    if (k === length) return n
  }
  return -1
}
