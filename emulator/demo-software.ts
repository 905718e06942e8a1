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

/**
 * A device lists a title once, as the demo's key (device_id, software_name) says. A drawn install that repeats one
 * becomes the next title that device lacks (or, when it has them all, goes to the next device); the draws stay as
 * they were, so the rows do not depend on the day and every other row is unchanged.
 */
class DistinctInstalls {
  readonly #taken = new Set<string>()
  readonly #deviceCount: number
  constructor(deviceCount: number) {
    this.#deviceCount = deviceCount
  }

  place(row: Row): Row {
    const device = Number(row[0])
    const title = SOFTWARE.findIndex((t) => t.name === row[1])
    const devices = Math.max(1, this.#deviceCount)
    for (let d = 0; d < devices; d++) {
      const id = paddedId(((device - 1 + d) % devices) + 1)
      for (let t = 0; t < SOFTWARE.length; t++) {
        const index = (title + t) % SOFTWARE.length
        if (this.#taken.has(`${id}\t${index}`)) continue
        this.#taken.add(`${id}\t${index}`)
        return d === 0 && t === 0 ? row : retitled(row, id, index)
      }
    }
    return row // More installs than devices times titles: a repeat cannot be avoided.
  }
}

/** `row` as an install of title `index` on device `id`, its version and size drawn as before. */
const retitled = (row: Row, id: string, index: number): Row => {
  const before = SOFTWARE.find((t) => t.name === row[1])!
  const title = SOFTWARE[index]!
  const version = title.versions[Math.max(0, before.versions.indexOf(row[3] as string)) % title.versions.length]!
  const size = ((Number(row[6]) / before.sizeMb) * title.sizeMb).toFixed(1)
  return [
    id,
    title.name,
    title.vendor,
    version,
    title.path,
    row[5] ?? null,
    size,
    String(title.licensed),
    row[8] ?? null,
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
  const installs = new DistinctInstalls(deviceCount)
  for (let index = 0; index < count; index++) {
    const row = installs.place(softwareRow(random, deviceCount))
    const removed = eventDay(seed, `remove-${index}`, REMOVE_ONE_IN)
    if (removed === undefined || removed > day) yield row
  }
  const installed = rowsAddedBy(seed, 'installed', day, 3, 4)
  for (let index = 0; index < installed; index++) {
    yield installs.place(softwareRow(new Random(dice(seed, `install-${index}`)), deviceCount))
  }
}
