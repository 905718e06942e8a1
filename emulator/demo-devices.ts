/** Rows of the demo "Devices" table. */

import { dice, eventDay, OS_UPGRADES, rowsAddedBy } from './demo-changes.ts'
import { addYears, instantBetween, instantWithinDays, isoDate, isoTimestampZ, money, paddedId } from './demo-format.ts'
import { HARDWARE, type HardwareModel, operatingSystemsFor } from './demo-hardware.ts'
import { DEVICE_NOTES } from './demo-notes.ts'
import { LOCATIONS, randomPerson } from './demo-people.ts'
import { Random } from './prng.ts'
import type { Row } from './tables.ts'

export const DEVICE_COLUMNS = [
  'Device ID',
  'Hostname',
  'Serial Number',
  'Manufacturer',
  'Model',
  'Operating System',
  'OS Version',
  'RAM (GB)',
  'Disk (GB)',
  'CPU Cores',
  'IP Address',
  'MAC Address',
  'Purchase Date',
  'Warranty Until',
  'Last Seen',
  'Price (EUR)',
  'Virtual?',
  'Location',
  'Owner',
  'Notes',
] as const

const TAG_ALPHABET = '0123456789BCDFGHJKLMNPQRSTVWXYZ'
const DIGITS = '0123456789'
const HEX = '0123456789ABCDEF'

const serialNumber = (random: Random, hardware: HardwareModel): string => {
  if (hardware.serial === 'tag') return random.chars(TAG_ALPHABET, 7)
  if (hardware.serial === 'digits')
    return random.chance(0.5) ? `00${random.chars(DIGITS, 10)}` : random.chars(DIGITS, 12)
  const bytes = Array.from({ length: 16 }, () => random.chars(HEX, 2).toLowerCase())
  return `VMware-${bytes.slice(0, 8).join(' ')}-${bytes.slice(8).join(' ')}`
}

const macAddress = (random: Random, hardware: HardwareModel): string => {
  const prefix =
    hardware.kind === 'vm' ? ['00', '50', '56'] : [random.chars(HEX, 2), random.chars(HEX, 2), random.chars(HEX, 2)]
  return [...prefix, random.chars(HEX, 2), random.chars(HEX, 2), random.chars(HEX, 2)].join(':')
}

const deviceRow = (random: Random, index: number): Row => {
  const hardware = random.pick(HARDWARE)
  const os = random.pick(operatingSystemsFor(hardware))
  const siteIndex = random.int(0, LOCATIONS.length - 1)
  const [location, site] = LOCATIONS[siteIndex]!
  const virtual = hardware.kind === 'vm'
  const purchased = instantBetween(random, '2018-01-01', '2026-07-01')
  const warrantyYears = hardware.kind === 'srv' ? 5 : 3
  const hasWarranty = !virtual && random.chance(0.85)
  const personal = hardware.kind === 'lt' || hardware.kind === 'pc'
  const id = paddedId(index)
  return [
    id,
    `${site}-${hardware.kind}-${id}`.toUpperCase(),
    serialNumber(random, hardware),
    hardware.manufacturer,
    hardware.model,
    os.name,
    random.pick(os.versions),
    String(random.pick(hardware.ram)),
    String(random.pick(hardware.disk)),
    String(random.pick(hardware.cores)),
    random.chance(0.95) ? `10.${siteIndex}.${random.int(0, 255)}.${random.int(1, 254)}` : null,
    macAddress(random, hardware),
    isoDate(purchased),
    hasWarranty ? isoDate(addYears(purchased, warrantyYears)) : null,
    isoTimestampZ(instantWithinDays(random, 60)),
    virtual ? null : money(hardware.price * (0.85 + random.float() * 0.25)),
    String(virtual),
    location,
    personal ? randomPerson(random).displayName : null,
    random.chance(0.3) ? random.pick(DEVICE_NOTES) : null,
  ]
}

/** Devices retired within CHANGE_DAYS: one in RETIRE_ONE_IN; one in UPGRADE_ONE_IN moves to a newer OS. */
const RETIRE_ONE_IN = 20
const UPGRADE_ONE_IN = 12

/**
 * `count` device rows as of `day` (see demo-changes.ts); ids run 000001, 000002, ... so other tables can refer to
 * them. Devices bought after day 0 get the ids after `count`.
 */
export function* deviceRows(seed: number, count: number, day = 0): Generator<Row> {
  const random = new Random(seed)
  for (let index = 1; index <= count; index++) {
    const row = deviceRow(random, index)
    const retired = eventDay(seed, `retire-${index}`, RETIRE_ONE_IN)
    if (retired !== undefined && retired <= day) continue
    const upgraded = eventDay(seed, `upgrade-${index}`, UPGRADE_ONE_IN)
    const upgrade = OS_UPGRADES[row[5]!]
    yield upgraded !== undefined && upgraded <= day && upgrade ? [...row.slice(0, 5), ...upgrade, ...row.slice(7)] : row
  }
  const bought = rowsAddedBy(seed, 'bought', day, 1, 3)
  for (let index = count + 1; index <= count + bought; index++) {
    yield deviceRow(new Random(dice(seed, `device-${index}`)), index)
  }
}
