// `rulekeeper alerts redeliver ID…`: asks the server of a data directory to queue an alert's failed
// deliveries again (same idempotency key). Writes a request file beside the server's data (as
// `token` does); a running server picks it up within a second or two, a stopped one at its start.
import { ALERT_ID, writeRedeliverRequest } from '../destinations/redeliver-requests.js'
import { restrictUmask } from '../data-dir/data-dir-privacy.js'
import { parseArgs, UsageError } from './args.js'
import { dataDirOf } from './token.js'

const HELP = `Usage:
  rulekeeper alerts redeliver ALERT_ID… [--data-dir DIR] [--json]

Queues the failed deliveries of each alert again, with the same Idempotency-Key. The server running
on the data directory picks the request up within 5 s (a stopped server at its next start).
The same as POST /alerts/{id}/deliveries/retry.
`

export async function alertsCommand(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  const [sub, ...rest] = argv
  const args = parseArgs(rest, ['data-dir'], ['json'])
  if (!sub || sub === '--help' || sub === '-h' || args.options.help) {
    process.stdout.write(HELP)
    return sub ? 0 : 2
  }
  if (sub !== 'redeliver') throw new UsageError(`unknown alerts subcommand ${JSON.stringify(sub)}; use redeliver`)
  if (args.positionals.length === 0) throw new UsageError('name at least one alert id')
  for (const id of args.positionals)
    if (!ALERT_ID.test(id))
      throw new UsageError(`${JSON.stringify(id.slice(0, 100))} is not an alert id (32 hex digits)`)
  restrictUmask()
  const dir = dataDirOf(args.options['data-dir'], env)
  for (const id of args.positionals) await writeRedeliverRequest(dir, id)
  if (args.options.json) process.stdout.write(`${JSON.stringify({ queued: args.positionals })}\n`)
  else for (const id of args.positionals) process.stdout.write(`redelivery of ${id} requested\n`)
  return 0
}
