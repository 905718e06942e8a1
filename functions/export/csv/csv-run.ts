/**
 * One csv-parse instance over a run of the body whose records all end alike. Given one record delimiter instead of
 * three, csv-parse compares each byte with one line ending instead of three. The record
 * guard sees how each record ends before csv-parse does; where that changes, parse.ts ends the run at the record
 * boundary and starts another (see `terminate`), so a file that mixes endings parses exactly as with all three.
 */
import { type Info, type Parser, parse } from 'csv-parse'
import type { RecordEnding } from './record-guard.ts'

/** Every ending: for a run whose records end in more ways than it pays to follow. */
const ANY_ENDING = ['\r\n', '\n', '\r']

/** What every run of one body shares. */
export interface RunSetup {
  readonly delimiter: string
  readonly fieldsAsBytes: boolean
  readonly padShortRows: boolean
  readonly skipEmptyLines: boolean
  /**
   * Called with each record csv-parse completes, the offset in the body where it ends (its line break included),
   * csv-parse's line number of the record's end, and whether it is the stand-in header.
   */
  readonly onRecord: (record: string[], end: number, line: number, standIn: boolean) => void
}

/** Where a run starts. */
export interface RunStart {
  /** Offset in the body of the run's first byte. */
  readonly offset: number
  /** csv-parse's line number of that byte. */
  readonly line: number
  /**
   * Fields of the header the records are held to: csv-parse reads first a stand-in header of this many empty
   * fields. Absent when the run starts the body (its first record is the header).
   */
  readonly standInFields?: number | undefined
}

export class CsvRun {
  /** The run's record delimiter; undefined for all three. */
  readonly ending: RecordEnding | undefined
  /** Added to csv-parse's line numbers to make the body's. */
  readonly lineOffset: number
  readonly #parser: Parser
  readonly #standIn: Buffer | undefined
  /** Bytes given to csv-parse, the stand-in header included. */
  #written = 0
  /** csv-parse's byte count where the run was terminated, and the body offset it stands for. */
  #terminated = { at: -1, end: 0 }
  #failure: unknown

  constructor(setup: RunSetup, ending: RecordEnding | undefined, start: RunStart) {
    this.ending = ending
    const terminator = ending ?? '\n'
    // One field is written "": a blank line would be skipped in a table that csv-parse reads as wider.
    const fields = start.standInFields
    this.#standIn =
      fields === undefined
        ? undefined
        : Buffer.from(`${fields === 1 ? '""' : setup.delimiter.repeat(fields - 1)}${terminator}`)
    // csv-parse counts lines from 1 at the stand-in header, if any, and from `start.line` here.
    this.lineOffset = start.line - (this.#standIn ? 2 : 1)
    const base = start.offset - (this.#standIn?.length ?? 0)
    this.#parser = parse({
      delimiter: setup.delimiter,
      encoding: setup.fieldsAsBytes ? 'latin1' : 'utf8',
      record_delimiter: ending ?? ANY_ENDING,
      relax_column_count_less: setup.padShortRows,
      skip_empty_lines: setup.skipEmptyLines,
      // No max_record_size: csv-parse would recount each character of a record, which the guard has counted in
      // bytes, by the same quoting rules, before csv-parse sees them (record-guard.ts).
      // A stray quote is kept as text, as DuckDB, pandas and Python's csv do; an unclosed quote still fails.
      relax_quotes: true,
      on_record: (record: string[], info: Info) => {
        const standIn = this.#standIn !== undefined && info.records === 1
        const end = info.bytes === this.#terminated.at ? this.#terminated.end : base + info.bytes
        setup.onRecord(record, end, info.lines + this.lineOffset, standIn)
        return null
      },
    })
    this.#parser.on('error', (error) => {
      this.#failure ??= error
    })
    this.#parser.resume()
  }

  /** Reads the stand-in header, if any. */
  async start(): Promise<void> {
    if (this.#standIn) await this.write(this.#standIn)
  }

  /** Gives csv-parse the next bytes of the run; its records are handed over before this settles. */
  write(bytes: Buffer): Promise<void> {
    this.#written += bytes.length
    return this.#settle((done) => this.#parser.write(bytes, done))
  }

  /**
   * Ends the run's last record where the body's next record ending (of another kind, at body offset `end` after
   * it) is: csv-parse gets the run's own line break instead, which ends the record just as the other would.
   */
  async terminate(end: number): Promise<void> {
    const terminator = Buffer.from(this.ending ?? '\n')
    this.#terminated = { at: this.#written + terminator.length, end }
    await this.write(terminator)
  }

  /** Ends the run: a record still open is completed, or an unclosed quote fails. */
  end(): Promise<void> {
    return this.#settle((done) => this.#parser.end(done))
  }

  /** csv-parse's line number after the last byte given, in the body's numbering. */
  get nextLine(): number {
    return this.#parser.info.lines + this.lineOffset
  }

  destroy(): void {
    this.#parser.destroy()
  }

  #settle(write: (done: (error?: Error | null) => void) => void): Promise<void> {
    return new Promise<void>((resolve, reject) =>
      write((error) => (error || this.#failure ? reject(error ?? this.#failure) : resolve())),
    )
  }
}
