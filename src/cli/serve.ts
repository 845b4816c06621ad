// `rulekeeper serve`: starts the service and stops it cleanly on SIGINT/SIGTERM.
import { startServer } from '../main.js'
import { parseArgs } from './args.js'

const HELP = `Usage: rulekeeper serve [--pretty | --json]

Runs the REST API, the reconciler and the HTTP log sources. With nothing configured it serves an
embedded rules repository under ./data, created from the template on first start.

Environment: RULEKEEPER_DATA_DIR, RULEKEEPER_HOST, RULEKEEPER_PORT, RULEKEEPER_CONFIG,
RULEKEEPER_BOOTSTRAP_TOKEN, RULEKEEPER_EDITOR_AUDIT_TOKEN, RULEKEEPER_BACKEND,
RULEKEEPER_GIT_WEBHOOK_SECRET (see README.md).

Logs are JSON lines on stdout (docs/operations.md); --pretty renders them for a person, as is the
default when stdout is a terminal (--json keeps JSON there too).
`

export async function serveCommand(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  const args = parseArgs(argv, [], ['pretty', 'json'])
  if (args.options.help) {
    process.stdout.write(HELP)
    return 0
  }
  // The banner (URL, data directory, where the tokens are) is logged by startServer, as JSON.
  const pretty = args.options.pretty === true || (args.options.json !== true && process.stdout.isTTY === true)
  const server = await startServer({ env, pretty })
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
  })
  server.logger.info({ signal }, 'signal received')
  await server.close()
  return 0
}
