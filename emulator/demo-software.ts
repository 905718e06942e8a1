/** Rows of the demo "Installed Software" table: one row per install found on a device. */

import { dice, eventDay, rowsAddedBy } from './demo-changes.ts'
import { instantBetween, instantWithinDays, isoDate, isoTimestampWithOffset, paddedId } from './demo-format.ts'
import { AGENT_OFFSETS, SOFTWARE } from './demo-software-catalog.ts'
import { Random } from './prng.ts'
import type { Row } from './tables.ts'

export const SOFTWARE_COLUMNS = [
  'Device ID',
  'Software Name',
  'Vendor',
  'Version',
  'Install Path',
  'Install Date',
  'Size (MB)',
  'Licensed',
  'Detected At',
] as const

const softwareRow = (random: Random, deviceCount: number): Row => {
  const title = random.pick(SOFTWARE)
  return [
    paddedId(random.int(1, Math.max(1, deviceCount))),
    title.name,
    title.vendor,
    random.pick(title.versions),
    title.path,
    // Some agents cannot tell when a program was installed.
    random.chance(0.08) ? null : isoDate(instantBetween(random, '2022-01-01', '2026-11-20')),
    (title.sizeMb * (0.9 + random.float() * 0.2)).toFixed(1),
    String(title.licensed),
    isoTimestampWithOffset(instantWithinDays(random, 30), random.pick(AGENT_OFFSETS)),
  ]
}

/** Installs removed within CHANGE_DAYS: one in REMOVE_ONE_IN. */
const REMOVE_ONE_IN = 25

/**
 * `count` install rows as of `day` (see demo-changes.ts) referring to devices 000001..`deviceCount`; installs
 * found after day 0 follow.
 */
export function* softwareRows(seed: number, count: number, deviceCount: number, day = 0): Generator<Row> {
  const random = new Random(seed)
  for (let index = 0; index < count; index++) {
    const row = softwareRow(random, deviceCount)
    const removed = eventDay(seed, `remove-${index}`, REMOVE_ONE_IN)
    if (removed === undefined || removed > day) yield row
  }
  const installed = rowsAddedBy(seed, 'installed', day, 3, 4)
  for (let index = 0; index < installed; index++) {
    yield softwareRow(new Random(dice(seed, `install-${index}`)), deviceCount)
  }
}
