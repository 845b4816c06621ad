// Entry of a child `rulekeeper serve` for tests that kill the server: runs the real CLI command
// (`main(['serve'])`) with the environment it was given and exits with its code. Started by
// child-server.ts with `node --import tsx` on port 0; the port the kernel chose is reported on
// stderr (LISTENING_MARK), so the parent never polls a port another process may hold.
import http from 'node:http'
import { main } from '../../src/cli/index.js'
import { LISTENING_MARK } from './listening-mark.js'

const listen = http.Server.prototype.listen
http.Server.prototype.listen = function (this: http.Server, ...args: unknown[]) {
  this.once('listening', () => {
    const addr = this.address()
    if (addr && typeof addr === 'object') process.stderr.write(`${LISTENING_MARK}${addr.port}\n`)
  })
  return (listen as (...a: unknown[]) => http.Server).apply(this, args)
} as typeof http.Server.prototype.listen

process.exitCode = await main(['serve'])
