/**
 * One zip entry through saxes, a streaming XML parser: the entry's bytes are decoded as UTF-8 and written in as
 * they inflate, so no part is ever held whole. Handlers see tags and text; they may throw a coded error to stop.
 */
import type { Readable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { SaxesParser, type SaxesTagPlain } from 'saxes'
import { ExportError, WorkbookError } from '../core/errors.ts'
import { zipError } from './zip.ts'

export type XmlTag = SaxesTagPlain

export interface XmlHandlers {
  readonly open?: (tag: XmlTag) => void
  readonly text?: (text: string) => void
  readonly close?: (name: string) => void
}

/** Parses `entry` (named `part` in errors) to its end, calling `handlers`. */
export const parseXmlEntry = async (
  entry: Readable,
  part: string,
  tableId: string,
  handlers: XmlHandlers,
): Promise<void> => {
  for await (const _ of streamXmlEntry(entry, part, tableId, handlers)) {
    // each step has called the handlers already
  }
}

/** Parses `entry` chunk by chunk: each step has called `handlers` for one inflated chunk. */
export async function* streamXmlEntry(
  entry: Readable,
  part: string,
  tableId: string,
  handlers: XmlHandlers,
): AsyncGenerator<void> {
  const parser = new SaxesParser({ xmlns: false, position: false })
  // With a handler saxes reports malformed XML and carries on; the first report fails the part.
  let failure: unknown
  parser.on('error', (error) => {
    failure ??= error
  })
  const { open, text, close } = handlers
  if (open) parser.on('opentag', open)
  if (text) {
    parser.on('text', text)
    parser.on('cdata', text)
  }
  if (close) parser.on('closetag', (tag) => close(tag.name))
  const decoder = new StringDecoder('utf8')
  try {
    for await (const chunk of entry) {
      try {
        parser.write(decoder.write(chunk as Buffer))
      } catch (error) {
        throw error instanceof ExportError ? error : malformedXml(error, part, tableId)
      }
      if (failure !== undefined) throw malformedXml(failure, part, tableId)
      yield
    }
    parser.write(decoder.end()).close()
  } catch (error) {
    // A handler's coded error stops the parse as it is; anything else came from inflating the entry.
    throw error instanceof ExportError ? error : zipError(error, tableId)
  } finally {
    entry.destroy()
  }
  if (failure !== undefined) throw malformedXml(failure, part, tableId)
}

const malformedXml = (error: unknown, part: string, tableId: string): Error =>
  new WorkbookError('XLSX_MALFORMED', {
    tableId,
    reason: `the workbook's ${part} is not well-formed XML (${(error as Error).message})`,
    cause: error,
  })
