/**
 * Preloaded (`--import`) into a child process: at exit, writes the names of the npm packages the process loaded,
 * one per line, to the file named by LOADED_PACKAGES_FILE (worker threads included: each appends its own).
 */
import { appendFileSync } from 'node:fs'
import { registerHooks } from 'node:module'

const packages = new Set()
registerHooks({
  load(url, context, next) {
    const name = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1]
    if (name) packages.add(name)
    return next(url, context)
  },
})
process.on('exit', () => appendFileSync(process.env.LOADED_PACKAGES_FILE, [...packages].map((p) => `${p}\n`).join('')))
