// Issue 31's plan target: a plan of a pull request changing 10 rules of a 1,000-rule repository,
// with one day of stored events (1M records), in <= 10 s. The repository is made with git
// fast-import (1,000 simple Editor.Audit rules, each with a test; a branch changing 10 of them), the
// day written straight in the stored format; the plan is made as `rulekeeper plan` makes it (the base
// read whole, the head drafted from it, the tests, the backtest of the 10 rules at both revisions).
// The baseline is the base revision's full read alone, measured in the same run.
import { spawnSync } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { DEFAULT_REPLAY_LIMITS } from '../src/detect/config.js'
import { closeEngines, createEngineRegistry, DEFAULT_PYTHON } from '../src/engine/registry.js'
import { GitRepository } from '../src/git/repository.js'
import { makePlan } from '../src/plans/make-plan.js'
import { RuleIndex } from '../src/rules/rule-index.js'
import { loadFullRevision } from '../src/service/revision-sync.js'
import type { BenchContext, BenchResult } from './lib.js'
import { writeStoredDay } from './stored-events.js'

const RULES = 1000
const CHANGED = 10

function ruleYaml(i: number, user: string): string {
  return `AnalysisType: rule
RuleID: Bench.Rule${i}
Enabled: true
LogTypes:
  - Editor.Audit
Severity: Medium
DedupPeriodMinutes: 60
Detection:
  - KeyPath: user_email
    Condition: Equals
    Value: ${user}
Tests:
  - Name: matches its user
    ExpectedResult: true
    Log: { user_email: ${user} }
`
}

function fastImport(gitdir: string, input: string): void {
  const r = spawnSync('git', ['--git-dir', gitdir, 'fast-import', '--quiet'], {
    input,
    env: { ...process.env, GIT_COMMITTER_NAME: 'Bench', GIT_COMMITTER_EMAIL: 'bench@example.com' },
    maxBuffer: 64 << 20,
  })
  if (r.status !== 0) throw new Error(`fast-import: ${r.stderr}`)
}

const commit = (ref: string, from: string | null, files: Array<[string, string]>) =>
  [
    `commit ${ref}\ncommitter Bench <bench@example.com> 1700000000 +0000\ndata 5\nbench\n`,
    from ? `from ${from}\n` : '',
    ...files.map(([p, text]) => `M 100644 inline ${p}\ndata ${Buffer.byteLength(text)}\n${text}\n`),
  ].join('')

async function bench(ctx: BenchContext): Promise<BenchResult[]> {
  const records = Math.max(10_000, Math.round(1_000_000 * ctx.scale))
  const gitdir = path.join(ctx.tmpDir, 'repo.git')
  spawnSync('git', ['init', '-q', '--bare', '-b', 'main', gitdir])
  const users = (i: number) => `user${i % 200}@example.com`
  fastImport(
    gitdir,
    commit(
      'refs/heads/main',
      null,
      Array.from({ length: RULES }, (_, i) => [`simple_rules/bench/Bench.Rule${i}.yml`, ruleYaml(i, users(i))]),
    ),
  )
  fastImport(
    gitdir,
    commit(
      'refs/heads/pr',
      'refs/heads/main',
      Array.from({ length: CHANGED }, (_, i) => [`simple_rules/bench/Bench.Rule${i}.yml`, ruleYaml(i, users(i + 1))]),
    ),
  )
  // Yesterday, whole: the backtest's two days before now cover it.
  const day = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)
  const logsRoot = path.join(ctx.tmpDir, 'logs')
  const t0 = performance.now()
  const bytes = writeStoredDay(logsRoot, day, records)
  ctx.progress(
    `wrote ${records} records (${Math.round(bytes / 1024 ** 2)} MiB) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  )

  const repo = await GitRepository.open(gitdir, 'main')
  const engines = createEngineRegistry({ python: DEFAULT_PYTHON })
  try {
    const base = (await repo.resolveRevision('main'))!
    const head = (await repo.resolveRevision('pr'))!
    const indexAt = (rev: string) => loadFullRevision(repo, rev, RuleIndex.empty(), engines)
    const started = performance.now()
    const baseIndex = await indexAt(base)
    const readMs = performance.now() - started
    const plan = await makePlan(
      { repo, engines, served: () => baseIndex, indexAt, logsRoot, limits: DEFAULT_REPLAY_LIMITS },
      { id: 'plan_bench', base, head, backtestDays: 2, nowMs: Date.now(), content: true },
    )
    const totalMs = performance.now() - started
    if (plan.rules.changed.length !== CHANGED) throw new Error(`expected ${CHANGED} changed rules: ${plan.summary}`)
    if (plan.backtest.skipped) throw new Error(`the backtest was skipped: ${plan.backtest.skipped}`)
    const notes = `${plan.summary}; ${plan.backtest.records} records replayed per side; the base read ${readMs.toFixed(0)} ms of it; load average ${os.loadavg()[0]!.toFixed(1)}`
    ctx.progress(notes)
    return [
      {
        name: `a plan of a pull request changing ${CHANGED} of ${RULES} rules, with one day of stored events (${records} records): tests and backtest`,
        target: '<= 10 s',
        value: Math.round(totalMs),
        unit: 'ms',
        baseline: { name: 'the base revision read whole (part of the plan)', value: Math.round(readMs), unit: 'ms' },
        pass: totalMs <= 10_000,
        notes,
      },
    ]
  } finally {
    await closeEngines(engines)
    repo.close()
  }
}

export default bench
