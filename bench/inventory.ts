/**
 * The bench's inventory dataset: 25 columns shaped like a real device inventory's export, the kind the output
 * size target is set on. Timestamps with seconds that are not sorted and spread over months (an agent's last
 * check-in and last boot), dates (first seen, purchase, warranty end), two-decimal doubles over wide ranges
 * (uptime, cost, free disk), host names, IPv4 and MAC addresses, serial numbers, operating systems, a constant
 * column, low-cardinality ones (site, status, vendor) and sparse ones. Rows are in asset order, as exports are.
 */
import { addYears, instantBetween, isoDate, isoTimestampZ, money } from '../emulator/demo-format.ts'
import { HARDWARE, operatingSystemsFor } from '../emulator/demo-hardware.ts'
import { Random } from '../emulator/prng.ts'
import type { Row } from '../emulator/tables.ts'

export const INVENTORY_COLUMNS = [
  'Asset Tag',
  'Hostname',
  'Serial Number',
  'Vendor',
  'Model',
  'OS Name',
  'OS Version',
  'IP Address',
  'MAC Address',
  'Site',
  'Status',
  'Domain',
  'First Seen',
  'Purchase Date',
  'Warranty End',
  'Last Seen',
  'Last Boot',
  'Uptime (days)',
  'Cost',
  'Disk Free (GB)',
  'RAM (GB)',
  'CPU Cores',
  'Agent Version',
  'Assigned User',
  'Decommission Ticket',
] as const

const SITES = ['fra', 'muc', 'ber', 'ams', 'lon', 'nyc', 'sfo', 'sgp', 'tyo', 'syd', 'gru', 'jnb']
const STATUSES = ['active', 'active', 'active', 'active', 'active', 'active', 'active', 'in repair', 'in stock']
const AGENTS = ['7.4.1', '7.4.2', '7.5.0', '7.5.0', '7.5.0']
const GIVEN = ['anna', 'ben', 'chen', 'dana', 'emil', 'fatima', 'george', 'hana', 'ivan', 'julia', 'kofi', 'lea']
const FAMILY = ['meyer', 'smith', 'nguyen', 'kowalski', 'silva', 'tanaka', 'okafor', 'larsen', 'rossi', 'haddad']
const HEX = '0123456789abcdef'
const SERIAL = '0123456789BCDFGHJKLMNPQRSTVWXYZ'
/** The export's day: the agents' check-ins fall in the 120 days before it. */
const NOW_MS = Date.UTC(2026, 10, 20, 6, 0, 0)
const DAY_S = 86_400

const mac = (random: Random): string =>
  Array.from({ length: 6 }, (_, i) => (i < 3 ? ['00', '1a', '3c'][i]! : random.chars(HEX, 2))).join(':')

/** `count` rows of the inventory table. */
export function* inventoryRows(seed: number, count: number): Generator<Row> {
  const random = new Random(seed + 2)
  for (let index = 1; index <= count; index++) {
    const hardware = random.pick(HARDWARE)
    const os = random.pick(operatingSystemsFor(hardware))
    const siteIndex = random.int(0, SITES.length - 1)
    const site = SITES[siteIndex]!
    const purchased = instantBetween(random, '2017-01-01', '2026-10-01')
    const firstSeen = purchased + random.int(0, 40) * DAY_S * 1000
    const lastSeen = NOW_MS - random.int(0, 120 * DAY_S - 1) * 1000
    const lastBoot = lastSeen - random.int(60, 90 * DAY_S) * 1000
    const virtual = hardware.kind === 'vm'
    const diskGb = random.pick(hardware.disk)
    const ticket = index % 20 === 7 ? `RITM${String(2_000_000 + random.int(0, 899_999))}` : null
    yield [
      `A${String(100_000 + index)}`,
      `${site}-${hardware.kind}-${String(random.int(1, 99_999)).padStart(5, '0')}.corp.example.com`,
      random.chars(SERIAL, 10),
      hardware.manufacturer,
      hardware.model,
      os.name,
      random.pick(os.versions),
      `10.${siteIndex * 8 + random.int(0, 7)}.${random.int(0, 255)}.${random.int(1, 254)}`,
      mac(random),
      site.toUpperCase(),
      ticket === null ? random.pick(STATUSES) : 'retiring',
      'corp.example.com',
      isoDate(firstSeen),
      isoDate(purchased),
      virtual || random.chance(0.2) ? null : isoDate(addYears(purchased, hardware.kind === 'srv' ? 5 : 3)),
      isoTimestampZ(lastSeen),
      isoTimestampZ(lastBoot),
      ((lastSeen - lastBoot) / (DAY_S * 1000)).toFixed(2),
      virtual ? null : money(hardware.price * (0.8 + random.float() * 0.3)),
      (diskGb * random.float()).toFixed(2),
      String(random.pick(hardware.ram)),
      String(random.pick(hardware.cores)),
      random.pick(AGENTS),
      hardware.kind === 'lt' || random.chance(0.3)
        ? `${random.pick(GIVEN)}.${random.pick(FAMILY)}${random.int(1, 99)}@example.com`
        : null,
      ticket,
    ]
  }
}
