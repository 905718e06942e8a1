// Drops optional dependencies the lockfile has no entry for: platform builds (macOS, Windows, musl) that the
// registry this project installs from does not serve. Without this, `npm ci` refuses a lockfile made here.
// Run it after any `npm install` that rewrites package-lock.json: node .ci/prune-lockfile.mjs
import { readFileSync, writeFileSync } from 'node:fs'

const file = process.argv[2] ?? 'package-lock.json'
const lock = JSON.parse(readFileSync(file, 'utf8'))
const present = new Set(Object.keys(lock.packages).map((key) => key.replace(/^.*node_modules\//, '')))
let dropped = 0
for (const entry of Object.values(lock.packages)) {
  if (!entry.optionalDependencies) continue
  for (const name of Object.keys(entry.optionalDependencies)) {
    if (!present.has(name)) {
      delete entry.optionalDependencies[name]
      dropped++
    }
  }
}
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`)
console.log(`dropped ${dropped} optional dependencies the registry does not serve`)
