/**
 * One zip entry through saxes, a streaming XML parser: the entry's bytes are decoded as UTF-8 and written in as
 * they inflate, so no part is ever held whole. Handlers see tags and text; they may throw a coded error to stop.
 * saxes buffers a text node, a comment or a tag with its attributes whole before it emits it, so the XML written
 * since the last event is counted as it streams and refused past a bound: a 400 MB cell fails at the bound, not
 * after it is in memory. Nesting is bounded too (saxes keeps a stack of open tags).
 */
import type { Readable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { SaxesParser, type SaxesTagPlain } from 'saxes'
import { DataError, ExportError, WorkbookError } from '../core/errors.ts'
import { zipError } from './zip.ts'

export type XmlTag = SaxesTagPlain

/**
 * Elements open at once. SpreadsheetML nests about eight deep (worksheet, sheetData, row, c, is, r, t); 20 million
 * nested tags in one cell once took the process to a V8 heap abort.
 */
export const MAX_XML_DEPTH = 64
/**
 * Least bound on the XML between two events, whatever limits.maxFieldBytes says: a written piece of XML is at most
 * this long, so the count after a piece with an event in it never exceeds the bound by mistake.
 */
const MIN_PENDING_XML_CHARS = 64 * 1024

interface XmlHandlers {
  readonly open?: (tag: XmlTag) => void
  readonly text?: (text: string) => void
  readonly close?: (name: string) => void
  /** Where the parse is, for the error when the XML since the last event is too long (a cell, a row). */
  readonly where?: () => string
}

export interface XmlOptions {
  /**
   * Characters of XML written since the last event: a text node with its entities as written, a tag with its
   * attributes: limits.maxFieldBytes, and at least MIN_PENDING_XML_CHARS.
   */
  readonly maxPendingChars: number
  /** Stops the parse between pieces of XML, with the signal's reason (the table's deadline). */
  readonly signal?: AbortSignal | undefined
}

/** The bound on XML between events for a field limit. */
export const pendingXmlBound = (maxFieldBytes: number): number => Math.max(maxFieldBytes, MIN_PENDING_XML_CHARS)

/** Parses `entry` (named `part` in errors) to its end, calling `handlers`. */
export const parseXmlEntry = async (
  entry: Readable,
  part: string,
  tableId: string,
  handlers: XmlHandlers,
  options: XmlOptions,
): Promise<void> => {
  for await (const _ of streamXmlEntry(entry, part, tableId, handlers, options)) {
    // each step has called the handlers already
  }
}

/** Parses `entry` chunk by chunk: each step has called `handlers` for one inflated chunk. */
export async function* streamXmlEntry(
  entry: Readable,
  part: string,
  tableId: string,
  handlers: XmlHandlers,
  options: XmlOptions,
): AsyncGenerator<void> {
  const maxPending = pendingXmlBound(options.maxPendingChars)
  const { signal } = options
  const parser = new SaxesParser({ xmlns: false, position: false })
  // With a handler saxes reports malformed XML and carries on; the first report fails the part.
  let failure: unknown
  parser.on('error', (error) => {
    failure ??= error
  })
  let depth = 0
  let evented = false
  const { open, text, close } = handlers
  parser.on('opentag', (tag) => {
    evented = true
    if (++depth > MAX_XML_DEPTH) throw tooDeep(part, tableId)
    open?.(tag)
  })
  parser.on('closetag', (tag) => {
    evented = true
    depth--
    close?.(tag.name)
  })
  parser.on('text', (value) => {
    evented = true
    text?.(value)
  })
  parser.on('cdata', (value) => {
    evented = true
    text?.(value)
  })
  for (const event of ['comment', 'processinginstruction', 'doctype', 'xmldecl'] as const) {
    parser.on(event, () => {
      evented = true
    })
  }
  const decoder = new StringDecoder('utf8')
  /** Characters written since the last event, or (after a piece with an event in it) at most that piece. */
  let pending = 0
  const write = (xml: string) => {
    for (const piece of pieces(xml)) {
      evented = false
      try {
        parser.write(piece)
      } catch (error) {
        throw error instanceof ExportError ? error : malformedXml(error, part, tableId)
      }
      if (failure !== undefined) throw malformedXml(failure, part, tableId)
      pending = evented ? piece.length : pending + piece.length
      if (pending > maxPending) throw tooLong(part, tableId, maxPending, handlers.where?.())
    }
  }
  try {
    for await (const chunk of entry) {
      signal?.throwIfAborted()
      write(decoder.write(chunk as Buffer))
      yield
    }
    write(decoder.end())
    parser.close()
  } catch (error) {
    // A handler's coded error stops the parse as it is; anything else came from inflating the entry.
    throw error instanceof ExportError ? error : zipError(error, tableId)
  } finally {
    entry.destroy()
  }
  if (failure !== undefined) throw malformedXml(failure, part, tableId)
}

/** `xml` in pieces of at most MIN_PENDING_XML_CHARS, never splitting a surrogate pair. */
function* pieces(xml: string): Generator<string> {
  if (xml.length <= MIN_PENDING_XML_CHARS) {
    if (xml.length > 0) yield xml
    return
  }
  for (let at = 0; at < xml.length; ) {
    let end = Math.min(at + MIN_PENDING_XML_CHARS, xml.length)
    const last = xml.charCodeAt(end - 1)
    if (end < xml.length && last >= 0xd800 && last <= 0xdbff) end--
    yield xml.slice(at, end)
    at = end
  }
}

const malformedXml = (error: unknown, part: string, tableId: string): Error =>
  new WorkbookError('XLSX_MALFORMED', {
    tableId,
    reason: `the workbook's ${part} is not well-formed XML (${(error as Error).message})`,
    cause: error,
  })

export const tooDeep = (part: string, tableId: string): Error =>
  new WorkbookError('XLSX_MALFORMED', {
    tableId,
    reason: `the workbook's ${part} nests elements more than ${MAX_XML_DEPTH} deep`,
  })

export const tooLong = (part: string, tableId: string, bound: number, where: string | undefined): Error =>
  new DataError('LIMIT_EXCEEDED', {
    tableId,
    reason: `the workbook's ${part} has over ${bound.toLocaleString('en-US')} characters of XML in one piece of text or one tag${where ? ` (${where})` : ''}, over limits.maxFieldBytes`,
    hint: 'the previous data is kept; raise limits.maxFieldBytes in the configuration if a cell really is that long, or fix the saved table',
  })

/** Scans `entry` chunk by chunk into a byte scanner (xml-scanner.ts): each step has scanned one inflated chunk. */
export async function* scanXmlEntry(
  entry: Readable,
  scanner: { write(chunk: Uint8Array): void; end(): void },
  tableId: string,
  signal: AbortSignal | undefined,
  /** Sees each inflated chunk before the scanner does. */
  peek?: (chunk: Uint8Array) => void,
): AsyncGenerator<void> {
  try {
    for await (const chunk of entry) {
      signal?.throwIfAborted()
      peek?.(chunk as Buffer)
      scanner.write(chunk as Buffer)
      yield
    }
    scanner.end()
  } catch (error) {
    // The scanner's and the sheet's coded errors stop the reading as they are; anything else came from inflating.
    throw error instanceof ExportError ? error : zipError(error, tableId)
  } finally {
    entry.destroy()
  }
}
