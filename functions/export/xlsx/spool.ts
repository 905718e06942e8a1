/**
 * A workbook's directory sits at the end of the zip, so the body is written to the ephemeral disk before it is
 * read. The first bytes tell a zip from what a service sends instead of one: an HTML page with status 200, or an
 * encrypted workbook (Office wraps those in a CFB/OLE compound file, never a zip).
 */
import { once } from 'node:events'
import { createWriteStream } from 'node:fs'
import { open } from 'node:fs/promises'
import { DataError, WorkbookError } from '../core/errors.ts'

const ZIP_LOCAL_HEADER = Buffer.from([0x50, 0x4b, 0x03, 0x04])
/** An empty zip is only its end-of-directory record. */
const ZIP_EMPTY = Buffer.from([0x50, 0x4b, 0x05, 0x06])
const CFB_SIGNATURE = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])
const HTML_START = /^\s*(<!doctype html|<html|<head|<body)/i
const TEXT_START = /^\s*[<{[]/
const SNIFF_BYTES = 512

/** Writes `body` to `file`; returns the bytes written. */
export const spoolBody = async (body: AsyncIterable<Buffer>, file: string): Promise<number> => {
  const out = createWriteStream(file)
  let bytes = 0
  try {
    for await (const chunk of body) {
      bytes += chunk.length
      if (!out.write(chunk)) await once(out, 'drain')
    }
    out.end()
    await once(out, 'finish')
  } finally {
    out.destroy()
  }
  return bytes
}

/** Throws the coded error for a spooled body that cannot be a workbook. */
export const checkWorkbookStart = async (file: string, bytes: number, tableId: string): Promise<void> => {
  if (bytes === 0) {
    throw new DataError('EMPTY_BODY', {
      tableId,
      reason: 'the service sent an empty workbook (0 bytes); even an empty table has a header row',
    })
  }
  const head = Buffer.alloc(Math.min(bytes, SNIFF_BYTES))
  const handle = await open(file, 'r')
  try {
    await handle.read(head, 0, head.length, 0)
  } finally {
    await handle.close()
  }
  if (head.subarray(0, 4).equals(ZIP_LOCAL_HEADER) || head.subarray(0, 4).equals(ZIP_EMPTY)) return
  if (head.subarray(0, 8).equals(CFB_SIGNATURE)) {
    throw new WorkbookError('XLSX_ENCRYPTED', {
      tableId,
      reason: 'the workbook is encrypted (a password-protected CFB/OLE file, not a zip), so its cells cannot be read',
    })
  }
  const text = head.toString('latin1').replace(/^\uFEFF|^ï»¿/, '')
  const found = HTML_START.test(text) ? 'an HTML page' : TEXT_START.test(text) ? 'a text document' : 'unknown bytes'
  throw new WorkbookError('NOT_XLSX', {
    tableId,
    reason: `the service sent ${found} (${bytes} bytes) instead of a workbook (a zip file)`,
  })
}
