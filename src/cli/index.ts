// The `rulekeeper` command: dispatches to serve, init, token, test, validate, debug, replay and plan.
// Each command prints its own --help; usage errors exit with 2, failures with 1. The environment
// the commands and the configuration get is read here (beyond it, process.env is read only for
// child processes, git/git-binary.ts and the Python engine's default, and for NO_COLOR).
import fs from 'node:fs'
import { alertsCommand } from './alerts.js'
import { debugCommand } from './debug.js'
import { guardStdout } from './output.js'
import { planCommand } from './plan.js'
import { replayCommand } from './replay.js'
import { serveCommand } from './serve.js'
import { initCommand } from './init.js'
import { tokenCommand } from './token.js'
import { UsageError } from './args.js'
import { testCommand, validateCommand } from './test-validate.js'

export const USAGE = `Usage: rulekeeper <command> [options]

Commands:
  serve                 run the service (REST API, reconciler, log sources)
  init [DIR]            create a new rules repository from the template
  init --from SOURCE    seed the server's repository from an existing one (history kept)
  token create|list|revoke   manage API tokens in the data directory
  test [DIR]            run the unit tests of every rule under DIR
  validate [DIR]        check every rule file under DIR without running tests
  debug RULE_ID TEST_NAME [DIR]   run one test and show everything the rule produced
  alerts redeliver ID…  queue an alert's failed deliveries again (the server picks it up)
  replay --from T --to T  run the rules over stored records; print the alerts they give
  plan --base R --head R  what a change does: invalid files, tests, broken references, backtest

Run 'rulekeeper <command> --help' for the options of a command; 'rulekeeper --version'.
Environment: RULEKEEPER_DATA_DIR (default ./data), RULEKEEPER_HOST, RULEKEEPER_PORT, RULEKEEPER_CONFIG, …
`

/** The version of this installation (its package.json, found the same way from src/ and dist/). */
function version(): string {
  const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  return pkg.version
}

type Command = (argv: string[], env: Record<string, string | undefined>) => Promise<number>

export async function main(argv: string[], env: Record<string, string | undefined> = process.env): Promise<number> {
  guardStdout()
  const [cmd, ...rest] = argv
  if (cmd === '--version' || cmd === '-V' || cmd === 'version') {
    process.stdout.write(`rulekeeper ${version()}\n`)
    return 0
  }
  const commands: Record<string, Command> = {
    serve: serveCommand,
    init: initCommand,
    token: tokenCommand,
    test: testCommand,
    validate: validateCommand,
    debug: debugCommand,
    alerts: alertsCommand,
    replay: replayCommand,
    plan: planCommand,
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
