/**
 * The reference for the shared strings' byte scanner (functions/export/xlsx/shared-strings.ts): the saxes-based
 * reader the exporter used before, kept for the differential test only, elements known by their local name.
 */
import type { Readable } from 'node:stream'
import { DataError, WorkbookError } from '../../functions/export/core/errors.ts'
import { StringItemText, unescapeText } from '../../functions/export/xlsx/shared-strings.ts'
import { SharedStringTable, type StringTableOptions } from '../../functions/export/xlsx/string-table.ts'
import { parseXmlEntry, type XmlOptions } from '../../functions/export/xlsx/xml.ts'

const MAX_SHARED_STRING_BYTES = 4 * 1024 ** 3
const MAX_SHARED_STRINGS = 64_000_000
const localName = (name: string) => name.slice(name.indexOf(':') + 1)

const PART = 'shared strings (xl/sharedStrings.xml)'

/** Reads the part; a string longer than `maxFieldBytes` could never fill a cell, so it fails as LIMIT_EXCEEDED. */
export const readSharedStringsWithSaxes = async (
  entry: Readable,
  tableId: string,
  options: StringTableOptions,
  xml: XmlOptions & { readonly maxFieldBytes: number },
): Promise<SharedStringTable> => {
  const strings = new SharedStringTable(options)
  const item = new StringItemText(
    xml.maxFieldBytes,
    () =>
      new DataError('LIMIT_EXCEEDED', {
        tableId,
        reason: `shared string ${strings.count + 1} of the workbook is over limits.maxFieldBytes (${xml.maxFieldBytes})`,
        hint: 'the previous data is kept; raise limits.maxFieldBytes in the configuration if a cell really is that long, or fix the saved table',
      }),
  )
  try {
    await parseXmlEntry(
      entry,
      PART,
      tableId,
      {
        open: (tag) => item.open(localName(tag.name)),
        text: (text) => item.text(text),
        close: (qname) => {
          const name = localName(qname)
          item.close(name)
          if (name !== 'si') return
          strings.add(unescapeText(item.take()))
          if (strings.byteLength > MAX_SHARED_STRING_BYTES || strings.count > MAX_SHARED_STRINGS) {
            throw new WorkbookError('XLSX_TOO_LARGE', {
              tableId,
              reason: `the workbook's shared strings exceed ${MAX_SHARED_STRINGS.toLocaleString('en-US')} strings or ${MAX_SHARED_STRING_BYTES / 2 ** 30} GiB`,
            })
          }
        },
        where: () => `shared string ${strings.count + 1}`,
      },
      { maxPendingChars: xml.maxFieldBytes, signal: xml.signal },
    )
    strings.finish()
  } catch (error) {
    strings.close()
    throw error
  }
  return strings
}
