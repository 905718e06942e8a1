/** A small seeded PRNG so demo data is stable for a seed; Math.random would make every run differ. */

/** mulberry32: 32-bit state, good enough spread for demo data, and trivially reproducible. */
export const mulberry32 = (seed: number): (() => number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Mixes the user's seed with a salt (the table id) so tables of one seed do not share a sequence. */
export const mixSeed = (seed: number, salt: string): number => {
  let hash = (seed ^ 0x9e3779b9) >>> 0
  for (const char of salt) {
    hash = Math.imul(hash ^ (char.codePointAt(0) ?? 0), 0x01000193) >>> 0
  }
  return hash
}

/** Convenience draws over one PRNG stream. */
export class Random {
  readonly #next: () => number

  constructor(seed: number) {
    this.#next = mulberry32(seed)
  }

  /** A float in [0, 1). */
  float(): number {
    return this.#next()
  }

  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.#next() * (max - min + 1))
  }

  /** True with the given probability. */
  chance(probability: number): boolean {
    return this.#next() < probability
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.#next() * items.length)]
    if (item === undefined) throw new RangeError('pick() needs a non-empty list')
    return item
  }

  /** `count` characters drawn from `alphabet`. */
  chars(alphabet: string, count: number): string {
    let out = ''
    for (let i = 0; i < count; i++) out += alphabet[Math.floor(this.#next() * alphabet.length)]
    return out
  }
}
