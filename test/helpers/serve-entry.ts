// Entry of a child `rulekeeper serve` for tests that kill the server: runs the real CLI command
// (`main(['serve'])`) with the environment it was given and exits with its code. Started by
// child-server.ts with `node --import tsx` on port 0; the port the kernel chose is reported on
// stderr (LISTENING_MARK), so the parent never polls a port another process may hold.
// With RULEKEEPER_TEST_START_OPTIONS (JSON: start options only tests set, e.g. a short schedule
// minute) it starts the server as `serve` does, with those options layered in.
import http from 'node:http'
import { main } from '../../src/cli/index.js'
import { type StartOptions, startServer } from '../../src/main.js'
import { LISTENING_MARK } from './listening-mark.js'

const listen = http.Server.prototype.listen
http.Server.prototype.listen = function (this: http.Server, ...args: unknown[]) {
  this.once('listening', () => {
    const addr = this.address()
    if (addr && typeof addr === 'object') process.stderr.write(`${LISTENING_MARK}${addr.port}\n`)
  })
  return (listen as (...a: unknown[]) => http.Server).apply(this, args)
} as typeof http.Server.prototype.listen

/** Test-only start options: the JSON-expressible ones (numbers), never the environment or a logger. */
type TestStartOptions = Pick<StartOptions, 'correlationSchedule' | 'scheduledQueries'>

const testOptions = process.env.RULEKEEPER_TEST_START_OPTIONS
if (testOptions === undefined) process.exitCode = await main(['serve'])
else {
  const extra = JSON.parse(testOptions) as TestStartOptions
  const server = await startServer({ env: process.env, ...extra })
  await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
  })
  await server.close()
  process.exitCode = 0
}
