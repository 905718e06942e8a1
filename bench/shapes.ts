/**
 * Generated tables of shapes the writer was not tuned on, for the per-column comparison with DuckDB
 * (bench/shapes-run.ts). Each table is drawn from a seed and a distinct-value count the bench varies (tens to tens
 * of thousands): values repeating in random order (timestamps, two-decimal doubles, dates, integers, quoted
 * strings), some uniform and some skewed; sorted and cycling values; constant and nearly-empty columns; long free
 * text; strings of mixed widths; unique host names. A shape that one writer's rules happen to fit is then one
 * row of many, not the whole verdict.
 */
import { isoDate, isoTimestampZ } from '../emulator/demo-format.ts'
import { mixSeed, Random } from '../emulator/prng.ts'
import type { Row } from '../emulator/tables.ts'

export const SHAPE_COLUMNS = [
  'Seen At',
  'Amount',
  'Seen On',
  'Count',
  'Model',
  'Cycling Model',
  'Sorted At',
  'Constant',
  'Nearly Empty',
  'Free Text',
  'Mixed Widths',
  'Hostname',
] as const

/** One generated table's parameters, all drawn from the bench's seed. */
export interface ShapeTable {
  readonly name: string
  /** Distinct values of each randomly repeating column. */
  readonly distinct: number
  /** Values a cycling column goes through, in order. */
  readonly cycle: number
  /** Whether the repeating values are drawn skewed (a few common, a long tail) rather than uniformly. */
  readonly skewed: boolean
  readonly seed: number
}

const DAY_MS = 86_400_000
const START_MS = Date.UTC(2025, 0, 1)
const WORDS = [
  'disk',
  'replaced',
  'after',
  'the',
  'user',
  'reported',
  'slow',
  'boot',
  'battery',
  'swollen',
  'keyboard',
  'screen',
  'flicker',
  'reimaged',
  'warranty',
  'claim',
  'opened',
  'vendor',
  'courier',
  'returned',
  'to',
  'stock',
  'pending',
  'approval',
  'from',
  'site',
  'manager',
  'ticket',
  'closed',
  'fan',
  'noise',
  'BIOS',
  'updated',
  'on',
  'remote',
  'session',
]

/**
 * The bench's generated tables for `seed`: one per decade of distinct values (tens, hundreds, thousands, tens of
 * thousands), each count drawn within its decade, uniform and skewed by turns.
 */
export const shapeTables = (seed: number): ShapeTable[] => {
  const random = new Random(mixSeed(seed, 'shapes'))
  const start = random.int(0, 1)
  return [1, 2, 3, 4].map((decade) => {
    const distinct = Math.round(10 ** (decade + random.float()))
    // Alternately, from a drawn start: every run has both kinds.
    const skewed = (decade + start) % 2 === 0
    return {
      name: `shapes_${decade}`,
      distinct,
      cycle: random.int(3, 2000),
      skewed,
      seed: mixSeed(seed, `shapes-${decade}`),
    }
  })
}

/** `size` values made by `make`, shuffled (Fisher-Yates), so a value's place in the pool says nothing of it. */
const pool = <T>(random: Random, size: number, make: (i: number) => T): T[] => {
  const values = Array.from({ length: size }, (_, i) => make(i))
  for (let i = size - 1; i > 0; i--) {
    const j = random.int(0, i)
    ;[values[i], values[j]] = [values[j]!, values[i]!]
  }
  return values
}

/** `count` rows of `table`. */
export function* shapeRows(table: ShapeTable, count: number): Generator<Row> {
  const random = new Random(table.seed)
  const { distinct } = table
  // Skewed: the square of a uniform draw puts half the rows on the first 29% of the pool.
  const draw = () => {
    const u = random.float()
    return Math.floor((table.skewed ? u * u : u) * distinct)
  }
  const spanMs = 180 * DAY_MS
  const instants = pool(random, distinct, () => START_MS + random.int(0, spanMs / 1000) * 1000)
  const amounts = pool(random, distinct, () => (random.int(0, 5_000_000) / 100).toFixed(2))
  // Dates: distinct days over as many days (up to ten years), so the shape holds for small counts too.
  const days = Math.min(distinct, 3650)
  const dates = pool(random, days, (i) => isoDate(START_MS + i * DAY_MS))
  const counts = pool(random, distinct, () => String(random.int(0, 2_000_000_000)))
  const models = pool(random, distinct, (i) => `Model ${i % 97}, rev "${Math.floor(i / 97)}"`)
  const widths = pool(random, Math.min(distinct, 5000), (i) =>
    random.chars('abcdefghijklmnopqrstuvwxyz ', 1 + ((i * 7919) % (random.chance(0.1) ? 400 : 24))),
  )
  let sorted = START_MS
  for (let i = 0; i < count; i++) {
    sorted += random.int(0, 120) * 1000
    const words = random.int(8, 30)
    let text = ''
    for (let w = 0; w < words; w++) text += `${w === 0 ? '' : ' '}${random.pick(WORDS)}`
    yield [
      isoTimestampZ(instants[draw()]!),
      amounts[draw()]!,
      dates[draw() % days]!,
      counts[draw()]!,
      models[draw()]!,
      `Model ${i % table.cycle}, rev ${(i % table.cycle) % 7}`,
      isoTimestampZ(sorted),
      'managed',
      random.chance(0.02) ? `RITM${random.int(1_000_000, 9_999_999)}` : null,
      `${text}. Ref ${random.int(10_000, 99_999)}`,
      widths[draw() % widths.length]!,
      `host-${String(i).padStart(7, '0')}.${random.pick(['corp', 'lab', 'dmz'])}.example.com`,
    ]
  }
}
