// Entry of the `rulekeeper serve` that bench/attack-lag.ts measures: runs the CLI of the checkout
// named by $ATTACK_LAG_CHECKOUT (its own src/cli/index.ts, so an older commit runs its own code) and
// reports on stderr the port the kernel chose (the server is given port 0, or a free port when the
// checkout refuses 0), so one script can start either checkout the same way.
import http from 'node:http'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

const PORT_MARK = 'attack-lag-listening-on-port ' // read by attack-lag-server.ts

const checkout = process.env.ATTACK_LAG_CHECKOUT
if (!checkout) throw new Error('ATTACK_LAG_CHECKOUT is not set')
const listen = http.Server.prototype.listen
http.Server.prototype.listen = function (this: http.Server, ...args: unknown[]) {
  this.once('listening', () => {
    const addr = this.address()
    if (addr && typeof addr === 'object') process.stderr.write(`${PORT_MARK}${addr.port}\n`)
  })
  return (listen as (...a: unknown[]) => http.Server).apply(this, args)
} as typeof http.Server.prototype.listen

const cli = (await import(pathToFileURL(path.join(path.resolve(checkout), 'src/cli/index.ts')).href)) as {
  main(argv: string[]): Promise<number>
}
// `serve` unless other CLI arguments are given (attack-lag-server.ts runs `token create` this way too)
const argv = process.argv.slice(2)
process.exitCode = await cli.main(argv.length > 0 ? argv : ['serve'])
