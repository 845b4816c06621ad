// Entry of a child `rulekeeper serve` for tests that kill the server: runs the real CLI command
// (`main(['serve'])`) with the environment it was given and exits with its code. Started by
// child-server.ts with `node --import tsx`.
import { main } from '../../src/cli/index.js'

process.exitCode = await main(['serve'])
