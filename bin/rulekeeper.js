#!/usr/bin/env node
// Entry point of the `rulekeeper` command: runs the compiled CLI (built by `npm ci` via `prepare`).
import { main } from '../dist/cli/index.js'
main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code
  },
  (err) => {
    console.error(err instanceof Error ? err.message : String(err))
    process.exitCode = 1
  },
)
