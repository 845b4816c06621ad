// `rulekeeper serve`: starts the service and stops it cleanly on SIGINT/SIGTERM.
import { startServer } from '../main.js'
import { parseArgs } from './args.js'

const HELP = `Usage: rulekeeper serve

Runs the REST API, the reconciler and the HTTP log sources. With nothing configured it serves an
embedded rules repository under ./data, created from the template on first start.

Environment: RULEKEEPER_DATA_DIR, RULEKEEPER_HOST, RULEKEEPER_PORT, RULEKEEPER_CONFIG,
RULEKEEPER_BOOTSTRAP_TOKEN, RULEKEEPER_EDITOR_AUDIT_TOKEN, RULEKEEPER_BACKEND,
RULEKEEPER_GIT_WEBHOOK_SECRET (see README.md).
`

export async function serveCommand(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  const args = parseArgs(argv, [], [])
  if (args.options.help) {
    process.stdout.write(HELP)
    return 0
  }
  const server = await startServer({ env })
  process.stdout.write(`rulekeeper serving on ${server.url} (data: ${server.dataDir})\n`)
  for (const line of server.bannerLines) process.stdout.write(`  ${line}\n`)
  await new Promise<void>((resolve) => {
    const stop = () => resolve()
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
  })
  await server.close()
  return 0
}
