#!/usr/bin/env -S node --max-semi-space-size=64
// Entry point of the `rulekeeper` command: runs the compiled CLI (built by `npm ci` via `prepare`).
// A young generation of up to 64 MiB per semi-space (V8 reads it only from the command line; see
// docs/operations.md, "Memory and GC"): ingest makes a lot of short-lived garbage.
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
