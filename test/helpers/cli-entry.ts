// Child-process entry of the CLI for tests: the same main() as bin/rulekeeper.js, from sources.
import { main } from '../../src/cli/index.js'

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (err) => {
    console.error(err)
    process.exitCode = 1
  },
)
