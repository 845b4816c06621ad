// `rulekeeper plan --base REF --head REF [--backtest-days N] [--repo DIR] [--json] [--data-dir DIR]`:
// the plan of a change (plans/make-plan.ts) as POST /plans makes it, for any CI: the rules
// repository is the data directory's, or --repo (a bare repository or a checkout, e.g. the CI's
// own); the backtest reads the data directory's stored events when there are any. Exit 0 when the
// plan passes, 1 when it fails (an invalid file, a failed test, a broken reference), 2 on bad usage.
import fs from 'node:fs'
import path from 'node:path'
import { loadServiceConfig } from '../config-sections.js'
import { eventsLayoutOf } from '../ingest/events-layout.js'
import { stateSettings } from '../state/config.js'
import { pythonDetection, replayLimits } from '../detect/config.js'
import { closeEngines, createEngineRegistry } from '../engine/registry.js'
import { GitRepository } from '../git/repository.js'
import { planSettings } from '../plans/config.js'
import { makePlan } from '../plans/make-plan.js'
import { newPlanId } from '../plans/plan-store.js'
import { RuleIndex } from '../rules/rule-index.js'
import { loadFullRevision } from '../service/revision-sync.js'
import { parseArgs, UsageError } from './args.js'
import { dataDirOf } from './token.js'

const HELP = `Usage: rulekeeper plan --base REF --head REF [--backtest-days N] [--repo DIR] [--json] [--data-dir DIR]

What the change from --base to --head (commit ids or branch names) does: files and rules added,
changed, removed and left invalid, the unit tests of every changed, added and affected rule,
references broken, and a backtest of the changed rules over the last N days of stored events
(default plans.backtestDays). The repository is the data directory's, or --repo (bare, or a
checkout). Exit 0 when the plan passes, 1 when it fails.
`

function gitdirOf(dir: string): string {
  const dotGit = path.join(dir, '.git')
  return fs.existsSync(dotGit) ? dotGit : dir
}

export async function planCommand(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  const args = parseArgs(argv, ['base', 'head', 'backtest-days', 'repo', 'data-dir'], ['json'], {})
  if (args.options.help) {
    process.stdout.write(HELP)
    return 0
  }
  if (args.positionals.length > 0) throw new UsageError(`unexpected argument ${args.positionals[0]}`)
  const { base: baseRef, head: headRef } = args.options
  if (typeof baseRef !== 'string' || typeof headRef !== 'string')
    throw new UsageError('--base REF and --head REF are required')
  const config = loadServiceConfig(env)
  const settings = planSettings(config as Record<string, unknown>)
  const daysText = args.options['backtest-days']
  const days = daysText === undefined ? settings.backtestDays : Number(daysText)
  if (!Number.isInteger(days) || days < 0 || days > settings.maxBacktestDays)
    throw new UsageError(`--backtest-days must be a whole number from 0 to ${settings.maxBacktestDays}`)
  const dataDir = dataDirOf(args.options['data-dir'], env)
  const repoDir = typeof args.options.repo === 'string' ? gitdirOf(args.options.repo) : path.join(dataDir, 'repo.git')
  const repo = await GitRepository.open(repoDir, config.git.branch)
  const engines = createEngineRegistry({
    python: { ...config.python, serverEnv: env, detection: pythonDetection(config as Record<string, unknown>) },
  })
  try {
    const base = await repo.resolveRevision(baseRef)
    const head = await repo.resolveRevision(headRef)
    if (!base) throw new UsageError(`no commit or branch ${baseRef} in ${repoDir}`)
    if (!head) throw new UsageError(`no commit or branch ${headRef} in ${repoDir}`)
    const indexAt = (rev: string) =>
      loadFullRevision(repo, rev, RuleIndex.empty(), engines, undefined, { maxFileBytes: config.rules.maxFileBytes })
    const baseIndex = await indexAt(base)
    const events = eventsLayoutOf(dataDir, stateSettings(config as Record<string, unknown>, env))
    const plan = await makePlan(
      {
        repo,
        engines,
        served: () => baseIndex,
        indexAt,
        logsRoot: events.root,
        eachReplica: events.shared,
        limits: replayLimits(config as Record<string, unknown>),
        maxFileBytes: config.rules.maxFileBytes,
      },
      { id: newPlanId(), base, head, backtestDays: days, nowMs: Date.now(), content: true },
    )
    if (args.options.json) process.stdout.write(`${JSON.stringify(plan, null, 2)}\n`)
    else {
      const from = plan.mergeBase === base ? '' : ` (merge base ${plan.mergeBase.slice(0, 12)})`
      process.stdout.write(`plan ${base.slice(0, 12)}...${head.slice(0, 12)}${from}: ${plan.status}\n${plan.summary}\n`)
      for (const f of plan.files.invalid)
        for (const e of f.errors)
          process.stdout.write(
            `invalid ${f.path}${e.line ? `:${e.line}${e.column ? `:${e.column}` : ''}` : ''}: ${e.message}\n`,
          )
      for (const t of plan.tests.filter((x) => x.passed !== true))
        for (const r of t.results.filter((x) => x.passed !== true))
          process.stdout.write(
            `test ${t.ruleId} / ${r.name}: ${r.passed === false ? 'failed' : 'not run'}${r.error ? ` (${r.error})` : ''}\n`,
          )
      for (const b of plan.brokenReferences) process.stdout.write(`reference ${b.ruleId}: ${b.message}\n`)
      for (const r of plan.backtest.rules)
        process.stdout.write(
          `backtest ${r.ruleId}: ${r.base ? `${r.base.alerts} alerts` : 'new'} → ${r.head ? `${r.head.alerts} alerts` : 'removed'}\n`,
        )
    }
    return plan.status === 'pass' ? 0 : 1
  } finally {
    await closeEngines(engines)
    repo.close()
  }
}
