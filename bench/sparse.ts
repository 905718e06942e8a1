/**
 * The bench's sparse dataset: the device table widened to 25 columns the way real inventories are, with columns
 * that are mostly empty (one 25% empty, one 90% empty, both in repeating patterns, as exports sorted by site or
 * by type have them) and low-cardinality two-decimal doubles (uptimes, utilisation). It is where a writer's
 * handling of NULLs and numeric dictionaries shows in the file size.
 */
import { DEVICE_COLUMNS, deviceRows } from '../emulator/demo-devices.ts'
import { Random } from '../emulator/prng.ts'
import type { Row } from '../emulator/tables.ts'

export const SPARSE_COLUMNS = [
  ...DEVICE_COLUMNS,
  'Cost Center',
  'Decommission Ticket',
  'Uptime (days)',
  'CPU Load (%)',
  'Patch Ring',
] as const

const COST_CENTERS = ['CC-1010', 'CC-1020', 'CC-2040', 'CC-3300', 'CC-4100', 'CC-5120']
const RINGS = ['pilot', 'broad', 'late']

/** `count` rows of the sparse table. */
export function* sparseRows(seed: number, count: number): Generator<Row> {
  const random = new Random(seed + 1)
  let index = 0
  for (const device of deviceRows(seed, count)) {
    // Every fourth row has no cost center; nine rows in ten have no decommission ticket.
    const costCenter = index % 4 === 3 ? null : COST_CENTERS[Math.floor(index / 16) % COST_CENTERS.length]!
    const ticket = index % 10 === 0 ? `RITM${String(1_000_000 + random.int(0, 99_999))}` : null
    // Two decimals over a small range: a few thousand distinct values in the whole table.
    const uptime = (random.int(0, 4_000) / 100).toFixed(2)
    const load = (random.int(0, 400) / 4).toFixed(2)
    yield [...device, costCenter, ticket, uptime, load, RINGS[index % 3]!]
    index++
  }
}
