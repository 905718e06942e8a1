/**
 * An in-memory TableSource for tests that need a table's bytes but not the service's HTTP behaviour: the bytes
 * are the ones the stand-in would send (the emulator's CSV rendering), handed over without a server or a token.
 */
import { csvChunks } from '../../emulator/csv.ts'
import type { GeneratedTable } from '../../emulator/index.ts'
import type { TableConfig } from '../../functions/export/core/config.ts'
import { RunMode } from '../../functions/export/core/constants.ts'
import { TableNotFoundError } from '../../functions/export/core/errors.ts'
import type { TableBytes, TableSource } from '../../functions/export/source/table-source.ts'

/** A table's content: a generated table (rendered as the service's CSV), or the exact bytes. */
export type MemoryTable = GeneratedTable | string | Uint8Array

export class MemorySource implements TableSource {
  readonly mode = RunMode.EXPORT
  readonly warnings: readonly string[] = []
  /** Table ids in the order they were opened, one entry per attempt. */
  readonly opened: string[] = []
  readonly #tables = new Map<string, MemoryTable>()
  readonly #tokenOwner: string

  constructor(
    tables: readonly (GeneratedTable | { id: string; bytes: string | Uint8Array })[] = [],
    tokenOwner = 'api-export',
  ) {
    for (const table of tables) this.set(table.id, 'bytes' in table ? table.bytes : table)
    this.#tokenOwner = tokenOwner
  }

  /** Replaces what the table holds from now on, as an administrator editing the saved table would. */
  set(id: string, table: MemoryTable): void {
    this.#tables.set(id, table)
  }

  async check() {
    return { tokenOwner: this.#tokenOwner }
  }

  async open(table: TableConfig): Promise<TableBytes> {
    this.opened.push(table.id)
    const content = this.#tables.get(table.id)
    if (content === undefined) {
      throw new TableNotFoundError({ tableId: table.id, status: 404, what: `table ${table.id} (in memory)` })
    }
    const chunks = (): Iterable<Uint8Array> =>
      typeof content === 'string'
        ? [Buffer.from(content)]
        : content instanceof Uint8Array
          ? [content]
          : csvChunks(content)
    let received = 0
    async function* body() {
      for (const chunk of chunks()) {
        received += chunk.length
        yield Buffer.from(chunk)
      }
    }
    return {
      httpStatus: 200,
      body: body(),
      received: () => received,
      cancel: () => undefined,
      archive: table.archiveRaw,
    }
  }
}
