/**
 * A worksheet's XML scanned as bytes, as they inflate: saxes (xml.ts) decodes every byte to a JS string and makes
 * a string of every tag name, attribute and text, which was two thirds of the reading thread's CPU. This scanner
 * finds the same tags, attributes and text in the inflated bytes and hands them on as byte ranges; strings are
 * made only for what a cell becomes. It carries an unfinished tag, comment or CDATA section over to the next
 * chunk (bounded as saxes's pending XML is), and holds back only a split entity or line end of a text.
 *
 * It accepts what XML allows a worksheet to be: namespace prefixes (elements are known by their local name),
 * attributes in any order and either quote, whitespace in tags, the five entities and character references,
 * CDATA, comments, processing instructions, the XML declaration, a BOM, self-closing tags. It refuses mismatched
 * or unclosed tags, a second root, text outside the root, unknown entities, characters XML does not allow in
 * text, a document type declaration (OPC forbids DTDs in package parts), nesting past MAX_XML_DEPTH and any
 * piece longer than the pending bound, with the errors xml.ts raises for saxes.
 */
import { MAX_XML_DEPTH } from './xml.ts'
import { DUPLICATE_ATTRIBUTE, TagAttributes } from './xml-attributes.ts'
import {
  APOS,
  ascii,
  BANG,
  CDATA_OPEN,
  CLOSE_BRACKET,
  DASH,
  EQ,
  failure,
  GT,
  grow,
  isSpace,
  LT,
  localNameIndex,
  NAME,
  QUESTION,
  QUOT,
  SLASH,
  X,
} from './xml-bytes.ts'
import { checkText, decodeText, PLAIN_TEXT, textSafeEnd, textShape } from './xml-text.ts'

/** What the scanner reports to; `kind` is the index of the element's local name in the scanner's names, or -1. */
export interface ScanHandler {
  open(kind: number): void
  close(kind: number): void
  /** Text of an element the handler reads (wantsText): entities expanded, line ends normalized; maybe in pieces. */
  text(bytes: Uint8Array, start: number, end: number): void
  /** Whether text goes to text() now; otherwise it is only checked. */
  wantsText(): boolean
  /** At a tag with readDepth (1) elements open: reads whole elements it knows; returns where it stopped. */
  readElements?(buffer: Uint8Array, at: number, end: number): number
  readonly readDepth?: number
}

const BOM = [0xef, 0xbb, 0xbf]

export class XmlScanner {
  readonly #names: readonly Uint8Array[]
  readonly #handler: ScanHandler
  readonly #maxPending: number
  readonly #malformed: (reason: string) => Error
  readonly #tooDeep: () => Error
  readonly #tooLong: () => Error
  readonly #readDepth: number
  #carry: Uint8Array = new Uint8Array(64 * 1024)
  #carryLength = 0
  /** Bytes of the pending token already searched for its end, and the open quote of a tag at that point. */
  #searched = 0
  #quote = 0
  #textLength = 0
  #documentStart = true
  #rootSeen = false
  #depth = 0
  readonly #kinds = new Int8Array(MAX_XML_DEPTH + 1)
  readonly #nameEnds = new Int32Array(MAX_XML_DEPTH + 1)
  #stackNames: Uint8Array = new Uint8Array(1024)
  #scratch: Uint8Array = new Uint8Array(1024)
  /** The attributes of the tag being reported to open(). */
  readonly attributes = new TagAttributes()
  #bomChecked = false

  constructor(
    names: readonly string[],
    handler: ScanHandler,
    bounds: {
      readonly maxPending: number
      readonly malformed: (reason: string) => Error
      readonly tooDeep: () => Error
      readonly tooLong: () => Error
    },
  ) {
    this.#names = names.map(ascii)
    this.#handler = handler
    this.#readDepth = handler.readElements ? (handler.readDepth ?? 1) : -1
    this.#maxPending = bounds.maxPending
    this.#malformed = bounds.malformed
    this.#tooDeep = bounds.tooDeep
    this.#tooLong = bounds.tooLong
  }

  write(chunk: Uint8Array): void {
    let buffer = chunk
    let carried = this.#carryLength > 0
    if (carried || !this.#bomChecked) {
      let length = this.#carryLength + chunk.length
      if (length > this.#carry.length) this.#carry = grow(this.#carry, length, this.#carryLength)
      this.#carry.set(chunk, this.#carryLength)
      if (!this.#bomChecked) {
        // A BOM may come split over the first chunks.
        const bom = BOM.every((b, i) => i >= length || this.#carry[i] === b)
        if (bom && length < BOM.length) {
          this.#carryLength = length
          return
        }
        this.#bomChecked = true
        if (bom) {
          this.#carry.copyWithin(0, BOM.length, length)
          length -= BOM.length
        }
      }
      buffer = this.#carry.subarray(0, length)
      carried = true
    }
    const consumed = this.#scan(buffer)
    const left = buffer.length - consumed
    if (left > this.#maxPending) throw this.#tooLong()
    if (left > 0 && carried) this.#carry.copyWithin(0, consumed, buffer.length)
    else if (left > 0) {
      if (left > this.#carry.length) this.#carry = new Uint8Array(Math.max(left, this.#carry.length * 2))
      this.#carry.set(buffer.subarray(consumed))
    }
    this.#carryLength = left
  }

  /** The part has ended: anything unfinished is malformed. */
  end(): void {
    if (this.#carryLength > 0) throw this.#malformed('it ends inside a tag, comment or entity')
    if (this.#depth > 0) throw this.#malformed('it ends before its elements are closed')
    if (!this.#rootSeen) throw this.#malformed('it has no root element')
  }

  /** Scans `buffer` as far as it has whole tokens; returns where the unfinished one starts. */
  #scan(buffer: Uint8Array): number {
    const end = buffer.length
    let at = 0
    while (at < end) {
      if (buffer[at] !== LT) {
        // Text between tags is mostly a short value: a loop finds its end sooner than a native call.
        let lt = at + 1
        while (lt < end && lt - at < 32 && buffer[lt] !== LT) lt++
        if (lt >= end) lt = -1
        else if (buffer[lt] !== LT) lt = buffer.indexOf(LT, lt)
        if (lt < 0) return this.#partialText(buffer, at, end)
        this.#text(buffer, at, lt)
        at = lt
        continue
      }
      if (this.#depth === this.#readDepth) {
        const read = this.#handler.readElements!(buffer, at, end)
        if (read > at) {
          this.#searched = this.#quote = this.#textLength = 0
          at = read
          continue
        }
      }
      const next = at + 1 < end ? buffer[at + 1]! : -1
      let after: number
      if (next === SLASH) after = this.#endTag(buffer, at, end)
      else if (next === QUESTION) after = this.#instruction(buffer, at)
      else if (next === BANG) after = this.#bang(buffer, at, end)
      else if (next < 0) return at
      else after = this.#startTag(buffer, at, end)
      if (after < 0) return at
      if (after - at > this.#maxPending) throw this.#tooLong()
      this.#searched = 0
      this.#quote = 0
      this.#textLength = 0
      this.#documentStart = false
      at = after
    }
    return at
  }

  /** Finds `pattern` at or after `from` for a token starting at `at`; remembers how far it looked. */
  #find(buffer: Uint8Array, at: number, from: number, pattern: number, second: number): number {
    for (let i = Math.max(from, at + this.#searched); ; i++) {
      i = buffer.indexOf(pattern, i)
      if (i < 0 || i + 1 >= buffer.length) {
        this.#searched = Math.max(0, buffer.length - at - 1)
        return -1
      }
      if (second < 0 || buffer[i + 1] === second) return i
    }
  }

  #instruction(buffer: Uint8Array, at: number): number {
    const close = this.#find(buffer, at, at + 2, QUESTION, GT)
    if (close < 0) return -1
    let nameEnd = at + 2
    while (nameEnd < close && NAME[buffer[nameEnd]!]! & 2) nameEnd++
    if (nameEnd === at + 2 || !(NAME[buffer[at + 2]!]! & 1))
      throw this.#malformed('a processing instruction has no target')
    const xml = nameEnd - at - 2 === 3 && (buffer[at + 2]! | 0x20) === X && (buffer[at + 3]! | 0x20) === 0x6d
    if (xml && (buffer[at + 4]! | 0x20) === 0x6c && !this.#documentStart) {
      throw this.#malformed('an XML declaration is not at its start')
    }
    return close + 2
  }

  #bang(buffer: Uint8Array, at: number, end: number): number {
    if (end - at < 4) return -1
    if (buffer[at + 2] === DASH && buffer[at + 3] === DASH) {
      for (let from = at + 4; ; ) {
        const dashes = this.#find(buffer, at, from, DASH, DASH)
        if (dashes < 0) return -1
        if (dashes + 2 >= end) {
          this.#searched = dashes - at
          return -1
        }
        if (buffer[dashes + 2] === GT) return dashes + 3
        from = dashes + 1
      }
    }
    for (let i = 2; i < CDATA_OPEN.length; i++) {
      if (at + i >= end) return -1
      if (buffer[at + i] !== CDATA_OPEN[i]) throw this.#malformed('it has a document type declaration or a stray "<!"')
    }
    if (this.#depth === 0) throw this.#malformed('it has a CDATA section outside its root element')
    const start = at + CDATA_OPEN.length
    for (let from = start; ; ) {
      const brackets = this.#find(buffer, at, from, CLOSE_BRACKET, CLOSE_BRACKET)
      if (brackets < 0) return -1
      if (brackets + 2 >= end) {
        this.#searched = brackets - at
        return -1
      }
      if (buffer[brackets + 2] === GT) {
        if (this.#handler.wantsText()) this.#emit(buffer, start, brackets, false)
        return brackets + 3
      }
      from = brackets + 1
    }
  }

  #endTag(buffer: Uint8Array, at: number, end: number): number {
    let nameEnd = at + 2
    while (nameEnd < end && NAME[buffer[nameEnd]!]! & 2) nameEnd++
    let gt = nameEnd
    while (gt < end && isSpace(buffer[gt]!)) gt++
    if (gt >= end) return -1
    if (buffer[gt] !== GT || nameEnd === at + 2) throw this.#malformed('it has a malformed closing tag')
    const depth = this.#depth
    if (depth === 0) throw this.#malformed('it closes an element it never opened')
    const start = depth === 1 ? 0 : this.#nameEnds[depth - 2]!
    const length = this.#nameEnds[depth - 1]! - start
    let same = length === nameEnd - at - 2
    for (let k = 0; same && k < length; k++) same = this.#stackNames[start + k] === buffer[at + 2 + k]
    if (!same) throw this.#malformed('a closing tag does not match the element open there')
    this.#depth = depth - 1
    this.#handler.close(this.#kinds[depth - 1]!)
    return gt + 1
  }

  #startTag(buffer: Uint8Array, at: number, end: number): number {
    if (!(NAME[buffer[at + 1]!]! & 1)) throw this.#malformed('it has a "<" that starts no tag')
    if (this.#searched === 0) {
      const after = this.#parseTag(buffer, at, end)
      if (after >= 0) return after
      this.#searched = 1
    }
    // A tag across chunks: its end is its first '>' outside quotes, searched from where the last chunk left it.
    let quote = this.#quote
    let i = at + Math.max(1, this.#searched)
    for (; i < end; i++) {
      const b = buffer[i]!
      if (quote !== 0) {
        const close = buffer.indexOf(quote, i)
        if (close < 0) {
          i = end
          break
        }
        i = close
        quote = 0
      } else if (b === QUOT || b === APOS) quote = b
      else if (b === GT) break
    }
    if (i >= end) {
      this.#quote = quote
      this.#searched = end - at
      return -1
    }
    return this.#parseTag(buffer, at, i + 1)
  }

  /** Parses the complete tag `buffer[at..gt]`, then reports it. */
  #parseTag(buffer: Uint8Array, at: number, end: number): number {
    let i = at + 2
    while (i < end && NAME[buffer[i]!]! & 2) i++
    const nameEnd = i
    this.attributes.reset(buffer)
    let selfClosing = false
    for (;;) {
      const spaced = i < end && isSpace(buffer[i]!)
      while (i < end && isSpace(buffer[i]!)) i++
      if (i >= end) return -1
      const b = buffer[i]!
      if (b === GT) break
      if (b === SLASH) {
        if (i + 1 >= end) return -1
        if (buffer[i + 1] !== GT) throw this.#malformed('a tag has a "/" before its end')
        selfClosing = true
        i++
        break
      }
      if (!spaced || !(NAME[b]! & 1)) throw this.#malformed('a tag has a malformed attribute')
      const name = i
      while (i < end && NAME[buffer[i]!]! & 2) i++
      const nameStop = i
      while (i < end && isSpace(buffer[i]!)) i++
      if (i >= end) return -1
      if (buffer[i] !== EQ) throw this.#malformed('a tag has an attribute without a value')
      i++
      while (i < end && isSpace(buffer[i]!)) i++
      if (i >= end) return -1
      const quote = buffer[i]!
      if (quote !== QUOT && quote !== APOS) throw this.#malformed('a tag has an attribute value without quotes')
      const close = buffer.indexOf(quote, i + 1)
      if (close < 0) return -1
      const added = this.attributes.add(name, nameStop, i + 1, close)
      if (added === DUPLICATE_ATTRIBUTE) throw this.#malformed('a tag has the same attribute twice')
      if (added < 0) throw this.#malformed(failure(added))
      i = close + 1
    }
    if (this.#rootSeen && this.#depth === 0) throw this.#malformed('it has a second root element')
    this.#rootSeen = true
    const depth = this.#depth + 1
    if (depth > MAX_XML_DEPTH) throw this.#tooDeep()
    const nameStart = depth === 1 ? 0 : this.#nameEnds[depth - 2]!
    const nameLength = nameEnd - at - 1
    if (nameStart + nameLength > this.#stackNames.length) {
      this.#stackNames = grow(this.#stackNames, nameStart + nameLength, nameStart)
    }
    const names = this.#stackNames
    for (let k = 0; k < nameLength; k++) names[nameStart + k] = buffer[at + 1 + k]!
    this.#nameEnds[depth - 1] = nameStart + nameLength
    const kind = localNameIndex(this.#names, buffer, at + 1, nameEnd)
    this.#kinds[depth - 1] = kind
    this.#depth = depth
    this.#handler.open(kind)
    if (selfClosing) {
      this.#depth = depth - 1
      this.#handler.close(kind)
    }
    return i + 1
  }

  /** A text up to a "<": outside the root it may only be whitespace. */
  #text(buffer: Uint8Array, start: number, end: number): void {
    this.#documentStart = false
    if (this.#depth === 0) {
      for (let i = start; i < end; i++) {
        if (!isSpace(buffer[i]!)) throw this.#malformed('it has text outside its root element')
      }
      return
    }
    this.#textLength += end - start
    if (this.#textLength > this.#maxPending) throw this.#tooLong()
    if (this.#handler.wantsText()) this.#emit(buffer, start, end, true)
    else {
      const checked = checkText(buffer, start, end, this.#scratch)
      if (checked < 0) throw this.#malformed(failure(checked))
    }
  }

  /** A text running past the chunk: all but a split entity or line end goes on now. */
  #partialText(buffer: Uint8Array, start: number, end: number): number {
    if (this.#depth === 0) {
      this.#text(buffer, start, end)
      return end
    }
    const safe = textSafeEnd(buffer, start, end)
    if (safe > start) this.#text(buffer, start, safe)
    return safe
  }

  /** Hands on text, decoding entities (unless CDATA) and line ends, and refusing characters XML does not allow. */
  #emit(buffer: Uint8Array, start: number, end: number, entities: boolean): void {
    const shape = textShape(buffer, start, end, entities)
    if (shape === PLAIN_TEXT) {
      this.#handler.text(buffer, start, end)
      return
    }
    if (shape < 0) throw this.#malformed(failure(shape))
    if (end - start > this.#scratch.length) {
      this.#scratch = new Uint8Array(Math.max(end - start, this.#scratch.length * 2))
    }
    const length = decodeText(buffer, start, end, entities, this.#scratch)
    if (length < 0) throw this.#malformed(failure(length))
    this.#handler.text(this.#scratch, 0, length)
  }
}
