// `rulekeeper replay [--rule ID]… --from T --to T [--revision REV] [--json]`: the rules of the
// served branch's tip (or REV) over the data directory's stored records of [from, to), as
// `POST /replay` answers (written as it is built); reads only, so the server may be running or not
// (detect/replay.ts).
import path from 'node:path'
import { loadServiceConfig } from '../config-sections.js'
import { eventsLayoutOf } from '../ingest/events-layout.js'
import { stateSettings } from '../state/config.js'
import { rfc3339Ms } from '../rfc3339.js'
import { replay, ReplayRequestError } from '../detect/replay.js'
import { replayJsonChunks } from '../detect/replay-json.js'
import { pythonDetection } from '../detect/config.js'
import { closeEngines, createEngineRegistry } from '../engine/registry.js'
import { GitRepository } from '../git/repository.js'
import { RuleIndex } from '../rules/rule-index.js'
import { loadFullRevision } from '../service/revision-sync.js'
import { parseArgs, UsageError } from './args.js'
import { dataDirOf } from './token.js'

const HELP = `Usage: rulekeeper replay [--rule ID]... --from TIME --to TIME [--revision REV] [--json] [--data-dir DIR]

Runs the rules (each --rule, enabled or not; else every enabled rule) over the stored records whose
event time is in [--from, --to) (RFC 3339), in stored order, with the rules of the served branch's
tip or of commit REV, and prints the records, matches, each rule's matches, alerts and errors, and
the alerts that would exist (the same ids as live detection). Stores and delivers nothing; the server may be running.
The data directory is the server's: --data-dir, else $RULEKEEPER_DATA_DIR, else dataDir of
$RULEKEEPER_CONFIG, else ./data.
`

export async function replayCommand(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  const args = parseArgs(argv, ['from', 'to', 'revision', 'data-dir'], ['json'], { rule: null })
  if (args.options.help) {
    process.stdout.write(HELP)
    return 0
  }
  if (args.positionals.length > 0) throw new UsageError(`unexpected argument ${args.positionals[0]}`)
  const fromMs = rfc3339Ms(args.options.from)
  const toMs = rfc3339Ms(args.options.to)
  if (fromMs === undefined) throw new UsageError('--from TIME is required (RFC 3339, e.g. 2026-11-20T00:00:00Z)')
  if (toMs === undefined) throw new UsageError('--to TIME is required (RFC 3339, e.g. 2026-11-21T00:00:00Z)')
  const rev = args.options.revision
  if (rev !== undefined && (typeof rev !== 'string' || !/^[0-9a-f]{40}$/.test(rev)))
    throw new UsageError('--revision must be a full commit id (40 hex digits)')
  const dataDir = dataDirOf(args.options['data-dir'], env)
  const config = loadServiceConfig(env)
  const repo = await GitRepository.open(path.join(dataDir, 'repo.git'), config.git.branch)
  // Python streaming rules run in this process's own sandboxed pool, with the server's settings
  // (`python` and `detection.python`: isolation, budget, quarantine), as POST /replay runs them.
  const engines = createEngineRegistry({
    python: { ...config.python, serverEnv: env, detection: pythonDetection(config as Record<string, unknown>) },
  })
  try {
    const commit = typeof rev === 'string' ? rev : await repo.head()
    if (commit === null) throw new Error('the rules repository has no commit yet')
    if (!(await repo.hasCommit(commit))) throw new Error(`no commit ${commit} in the rules repository`)
    const index = await loadFullRevision(repo, commit, RuleIndex.empty(), engines)
    // The events as the server stores them: the data directory's, or every replica's of a shared directory.
    const events = eventsLayoutOf(dataDir, stateSettings(config as Record<string, unknown>, env))
    const result = await replay({
      logsRoot: events.root,
      eachReplica: events.shared,
      index,
      engines,
      ruleIds: args.lists.rule,
      fromMs,
      toMs,
    }).catch((err: unknown) => {
      throw err instanceof ReplayRequestError ? new UsageError(err.message) : err
    })
    // Written as it is built (an answer of many alerts never exists whole), waiting for stdout to drain.
    const write = async (text: string) => {
      if (!process.stdout.write(text)) await new Promise((resolve) => process.stdout.once('drain', resolve))
    }
    if (args.options.json) {
      for (const chunk of replayJsonChunks(result, { alerts: true, indent: 2 })) await write(chunk)
      await write('\n')
      return 0
    }
    await write(
      `revision ${commit}: ${result.records} records, ${result.matches} matches, ${result.alertCount} alerts\n`,
    )
    for (const r of result.rules)
      await write(`${r.ruleId}: ${r.matches} matches, ${r.alerts} alerts, ${r.errors} errors\n`)
    for (const a of result.alerts())
      await write(
        `${a.id}  ${a.ruleId}  ${a.severity}  ${a.eventCount} event(s)  ${a.firstEventTime} – ${a.lastEventTime}  ${a.title}\n`,
      )
    return 0
  } finally {
    await closeEngines(engines)
    repo.close()
  }
}
