/**
 * "Did you mean ...?" for a misspelt name: configuration keys, flags and commands of every command, the stand-in's
 * included. It imports nothing, so the stand-in (which imports nothing else of the export) can use it too.
 */

/** Edit distance (insertions, deletions, substitutions) between two keys. */
export const editDistance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase() ? 0 : 1
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost)
    }
    previous = current
  }
  return previous[b.length]!
}

/** The known key closest to `key`, when it is close enough to be a typo of it. */
export const closestKey = (key: string, known: readonly string[]): string | undefined => {
  let best: { key: string; distance: number } | undefined
  for (const candidate of known) {
    const distance = editDistance(key, candidate)
    if (best === undefined || distance < best.distance) best = { key: candidate, distance }
  }
  return best !== undefined && best.distance <= Math.max(2, Math.floor(best.key.length / 3)) ? best.key : undefined
}
