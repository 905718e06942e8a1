/** The values of the lineage columns (`lineage.ts` declares them) for the rows of one row group. */
import type { RunIdentity } from '../core/lineage.ts'
import { type ChunkValues, constantValues, int64Values, sequenceValues } from './chunk-values.ts'

/**
 * The lineage of the rows `firstRow` to `firstRow + rowCount - 1`, as builders of each lineage column's values in
 * LINEAGE_COLUMNS order.
 */
export const lineageValues = (
  firstRow: number,
  rowCount: number,
  sourceTableId: string,
  run: RunIdentity,
  fingerprints: () => BigInt64Array,
): (() => ChunkValues)[] => [
  () => constantValues(run.runId, rowCount),
  () => constantValues(run.exportedAt.getTime(), rowCount),
  () => constantValues(sourceTableId, rowCount),
  () => sequenceValues(firstRow, rowCount),
  () => int64Values(fingerprints()),
]
