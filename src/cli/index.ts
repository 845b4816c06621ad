// The `rulekeeper` command: dispatches to serve, init, token, test and validate. Each command
// prints its own --help; usage errors exit with 2, failures with 1. Reads process.env here only.
import { serveCommand } from './serve.js'
import { initCommand } from './init.js'
import { tokenCommand } from './token.js'
import { UsageError } from './args.js'
import { testCommand, validateCommand } from './test-validate.js'

export const USAGE = `Usage: rulekeeper <command> [options]

Commands:
  serve                 run the service (REST API, reconciler, log sources)
  init [DIR]            create a new rules repository from the template
  token create|list|revoke   manage API tokens in the data directory
  test [DIR]            run the unit tests of every rule under DIR
  validate [DIR]        check every rule file under DIR without running tests

Run 'rulekeeper <command> --help' for the options of a command.
Environment: RULEKEEPER_DATA_DIR (default ./data), RULEKEEPER_HOST, RULEKEEPER_PORT, RULEKEEPER_CONFIG, …
`

type Command = (argv: string[], env: Record<string, string | undefined>) => Promise<number>

export async function main(argv: string[], env: Record<string, string | undefined> = process.env): Promise<number> {
  const [cmd, ...rest] = argv
  const commands: Record<string, Command> = {
    serve: serveCommand,
    init: initCommand,
    token: tokenCommand,
    test: testCommand,
    validate: validateCommand,
  }
  if (!cmd || cmd === '--help' || cmd === '-h' || cmd === 'help') {
    process.stdout.write(USAGE)
    return cmd ? 0 : 2
  }
  const run = commands[cmd]
  if (!run) {
    process.stderr.write(`rulekeeper: unknown command ${JSON.stringify(cmd)}\n\n${USAGE}`)
    return 2
  }
  try {
    return await run(rest, env)
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`rulekeeper ${cmd}: ${err.message}\nRun 'rulekeeper ${cmd} --help' for usage.\n`)
      return 2
    }
    process.stderr.write(`rulekeeper ${cmd}: ${err instanceof Error ? err.message : String(err)}\n`)
    return 1
  }
}
