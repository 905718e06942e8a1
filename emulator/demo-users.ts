/** Rows of the demo "Users" table. */
import { DEMO_NOW_MS, instantBetween, isoTimestampZ, paddedId } from './demo-format.ts'
import { DEPARTMENTS, MAIL_DOMAIN, randomPerson } from './demo-people.ts'
import { Random } from './prng.ts'
import type { Row } from './tables.ts'

export const USER_COLUMNS = [
  'User ID',
  'Display Name',
  'E-mail',
  'Department',
  'Cost Center',
  'Admin',
  'Created At',
  'Last Login',
] as const

const userRow = (random: Random, index: number): Row => {
  const person = randomPerson(random)
  const created = instantBetween(random, '2019-01-01', '2026-11-01')
  const neverLoggedIn = random.chance(0.12)
  return [
    String(10_000 + index),
    person.displayName,
    `${person.mailbox}@${MAIL_DOMAIN}`,
    random.pick(DEPARTMENTS),
    // Cost centres are numbers with leading zeros that must stay text.
    paddedId(random.int(1, 9_999), 6),
    String(random.chance(0.05)),
    isoTimestampZ(created),
    neverLoggedIn
      ? null
      : isoTimestampZ(created + Math.floor((random.float() * (DEMO_NOW_MS - created)) / 1000) * 1000),
  ]
}

/** `count` user rows with ids 10001, 10002, ... */
export function* userRows(seed: number, count: number): Generator<Row> {
  const random = new Random(seed)
  for (let index = 1; index <= count; index++) yield userRow(random, index)
}
