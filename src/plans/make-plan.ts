// Makes a plan (plan.ts) for the change from `base` to `head`, as a pull request shows it: compared
// with their merge base (what the head changes, not what the base gained since), the head's rules
// indexed from the merge base's by the same incremental read the reconciler uses (only the files that differ, and the Python
// rules importing them), the rules compared, the tests of every changed, added and affected rule run
// as a save runs them, the references the head breaks, and the backtest (backtest.ts). Nothing is
// served, stored or delivered.
import type { EngineRegistry, LiveEngines } from '../engine/engine.js'
import type { ReplayLimits } from '../detect/config.js'
import { mergeBase } from '../git/merge-base.js'
import type { GitRepository } from '../git/repository.js'
import type { IndexedRule, RuleIndex } from '../rules/rule-index.js'
import { putBadNames, reindexPaths, syncPython } from '../service/revision-sync.js'
import { runTests } from '../service/rule-tests.js'
import { indexContext } from '../service/rule-views.js'
import { correlationReferenceIds } from '../engine/correlation/index.js'
import { kindDef } from '../rules/kinds/index.js'
import { runBacktest } from './backtest.js'
import type { AffectedRule, Plan, PlanRule, PlanTest } from './plan.js'

export interface PlanDeps {
  repo: GitRepository
  engines: EngineRegistry & LiveEngines
  /** The served rules (the base when the base is their revision). */
  served: () => RuleIndex
  /** The rules of another commit, read whole. */
  indexAt: (commit: string) => Promise<RuleIndex>
  logsRoot: string
  /** `logsRoot` is a shared events directory: every replica's folder is read. */
  eachReplica?: boolean
  durableLength?: (file: string) => number | undefined
  limits: ReplayLimits
  maxFileBytes?: number
}

export interface PlanRequest {
  id: string
  base: string
  head: string
  /** Days of stored events before `nowMs` the backtest replays. */
  backtestDays: number
  nowMs: number
  /** Keep alert samples (the caller may read alerts). */
  content: boolean
  signal?: AbortSignal
}

const sameContent = (a: IndexedRule, b: IndexedRule) =>
  a.file.pythonSource === b.file.pythonSource && JSON.stringify(a.file.data) === JSON.stringify(b.file.data)

/** A rule joining other rules' signals (correlation), by its kind's capability. */
const joinsSignals = (r: IndexedRule) => kindDef(r.kind).schedule === 'signals'

const brief = (r: IndexedRule): PlanRule => ({ id: r.id, kind: r.kind, path: r.path })

/** The head's rules, from the base's, reading only what differs (as a reconcile reads a new revision). */
async function headIndexOf(deps: PlanDeps, baseIndex: RuleIndex, base: string, head: string) {
  const diffs = await deps.repo.diff(base, head)
  // A draft's publish folds into its base's maps: drafted from a copy, the served index is untouched.
  const draft = baseIndex.copy().draft()
  putBadNames(
    draft,
    diffs.map((d) => ({ ...d, present: d.newOid !== null })),
  )
  const changed = diffs.filter((d) => !d.badName).map((d) => d.path)
  const reread = await reindexPaths(deps.repo, head, draft, changed, deps.engines, { maxFileBytes: deps.maxFileBytes })
  await syncPython(deps.repo, head, draft, reread, deps.engines, { before: baseIndex, maxFileBytes: deps.maxFileBytes })
  return { diffs, index: draft.publish(head) }
}

/** Log types whose data model the change touched. */
function changedModelLogTypes(baseIndex: RuleIndex, headIndex: RuleIndex, paths: ReadonlySet<string>): Set<string> {
  const out = new Set<string>()
  for (const idx of [baseIndex, headIndex])
    for (const s of idx.supports.values())
      if (s.analysisType === 'datamodel' && (paths.has(s.path) || (s.pythonPath && paths.has(s.pythonPath))))
        for (const lt of Array.isArray(s.data.LogTypes) ? s.data.LogTypes : []) out.add(String(lt))
  return out
}

function compareRules(baseIndex: RuleIndex, headIndex: RuleIndex, paths: ReadonlySet<string>) {
  const added: PlanRule[] = []
  const changed: PlanRule[] = []
  const removed: PlanRule[] = []
  const affected = new Map<string, AffectedRule>()
  for (const [id, h] of headIndex.rules) {
    const b = baseIndex.rules.get(id)
    if (!b) added.push(brief(h))
    else if (b !== h && !h.stale) {
      if (sameContent(b, h)) affected.set(id, { ...brief(h), because: 'a module it imports changed' })
      else changed.push(brief(h))
    }
  }
  for (const [id, b] of baseIndex.rules) if (!headIndex.rules.has(id)) removed.push(brief(b))
  const moved = new Set([...added, ...changed, ...removed].map((r) => r.id))
  const models = changedModelLogTypes(baseIndex, headIndex, paths)
  for (const [id, h] of headIndex.rules) {
    if (moved.has(id) || affected.has(id)) continue
    const logTypes = Array.isArray(h.file.data.LogTypes) ? h.file.data.LogTypes.map(String) : []
    const model = logTypes.find((lt) => models.has(lt))
    if (model) affected.set(id, { ...brief(h), because: `the data model of ${model} changed` })
    else if (joinsSignals(h)) {
      const member = correlationReferenceIds(h.file.data).find((ref) => moved.has(ref))
      if (member) affected.set(id, { ...brief(h), because: `its member ${member} changed` })
    }
  }
  const byId = (a: PlanRule, b: PlanRule) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  return {
    added: added.sort(byId),
    changed: changed.sort(byId),
    removed: removed.sort(byId),
    affected: [...affected.values()].sort(byId),
  }
}

async function testsOf(rules: readonly PlanRule[], headIndex: RuleIndex, engines: EngineRegistry): Promise<PlanTest[]> {
  const ctx = indexContext(headIndex)
  const out: PlanTest[] = []
  for (const r of rules) {
    const rule = headIndex.rules.get(r.id)
    if (!rule || !Array.isArray(rule.file.data.Tests) || rule.file.data.Tests.length === 0) continue
    const outcomes = await runTests(rule.file, ctx, engines)
    const passed = outcomes.some((o) => o.passed === false)
      ? false
      : outcomes.every((o) => o.passed === true)
        ? true
        : null
    out.push({
      ruleId: r.id,
      kind: r.kind,
      passed,
      results: outcomes.map((o) => ({ name: o.name, passed: o.passed, ...(o.error ? { error: o.error } : {}) })),
    })
  }
  return out
}

/** The names a rule needs from others: a correlation rule's members, a scheduled rule's queries. */
function namesNeeded(rule: IndexedRule): Array<{ name: string; of: 'rule' | 'query' }> {
  if (joinsSignals(rule)) return correlationReferenceIds(rule.file.data).map((name) => ({ name, of: 'rule' }))
  const queries = rule.file.data.ScheduledQueries
  return Array.isArray(queries) ? queries.map((q) => ({ name: String(q), of: 'query' as const })) : []
}

/** References the head breaks: a rule naming a rule or query that the base has and the head lacks. */
function brokenReferences(baseIndex: RuleIndex, headIndex: RuleIndex): Plan['brokenReferences'] {
  const out: Plan['brokenReferences'] = []
  const has = (idx: RuleIndex, n: { name: string; of: 'rule' | 'query' }) =>
    n.of === 'rule' ? idx.rules.has(n.name) : idx.supports.has(n.name)
  for (const [id, h] of headIndex.rules)
    for (const n of namesNeeded(h))
      if (!has(headIndex, n) && has(baseIndex, n))
        out.push({ ruleId: id, message: `names the ${n.of} ${n.name}, which this change removes` })
  return out
}

function summaryOf(p: Omit<Plan, 'summary' | 'status' | 'id' | 'createdAt'>): string {
  const parts: string[] = []
  const { rules, tests, files } = p
  parts.push(
    `${rules.changed.length} rule(s) changed, ${rules.added.length} added, ${rules.removed.length} removed, ${rules.affected.length} affected`,
  )
  if (files.invalid.length) parts.push(`${files.invalid.length} invalid file(s)`)
  const failed = tests.filter((t) => t.passed === false).length
  parts.push(`tests: ${tests.filter((t) => t.passed === true).length} rule(s) passed, ${failed} failed`)
  if (p.brokenReferences.length) parts.push(`${p.brokenReferences.length} broken reference(s)`)
  if (p.backtest.skipped) parts.push(`backtest skipped: ${p.backtest.skipped}`)
  else {
    const sum = (side: 'base' | 'head') => p.backtest.rules.reduce((n, r) => n + (r[side]?.alerts ?? 0), 0)
    parts.push(`backtest: ${sum('base')} → ${sum('head')} alerts`)
  }
  return parts.join('; ')
}

export async function makePlan(deps: PlanDeps, req: PlanRequest): Promise<Plan> {
  // No common ancestor (unrelated histories): the head is compared with the base itself.
  const from = (await mergeBase(deps.repo, req.base, req.head)) ?? req.base
  // Copied before any await: a publish folds into the served index's maps, and a plan takes seconds.
  const served = deps.served()
  const baseIndex = served.revision === from ? served.copy() : await deps.indexAt(from)
  const { diffs, index: headIndex } = await headIndexOf(deps, baseIndex, from, req.head)
  const paths = new Set(diffs.map((d) => d.path))
  const files = {
    added: diffs.filter((d) => d.oldOid === null && d.newOid !== null).map((d) => d.path),
    changed: diffs.filter((d) => d.oldOid !== null && d.newOid !== null).map((d) => d.path),
    removed: diffs.filter((d) => d.newOid === null).map((d) => d.path),
    invalid: headIndex
      .invalidFiles()
      .filter((f) => paths.has(f.path))
      .map((f) => ({
        path: f.path,
        ...(f.ruleId ? { ruleId: f.ruleId } : {}),
        errors: f.errors.map((e) => ({
          message: e.message,
          ...(e.line ? { line: e.line } : {}),
          ...(e.column ? { column: e.column } : {}),
        })),
      })),
  }
  const rules = compareRules(baseIndex, headIndex, paths)
  const tests = await testsOf([...rules.changed, ...rules.added, ...rules.affected], headIndex, deps.engines)
  const broken = brokenReferences(baseIndex, headIndex)
  const backtest = await runBacktest({
    ...deps,
    baseIndex,
    headIndex,
    headIds: [...rules.changed, ...rules.added, ...rules.affected].map((r) => r.id),
    baseIds: [...rules.changed, ...rules.removed, ...rules.affected].map((r) => r.id),
    days: req.backtestDays,
    fromMs: req.nowMs - req.backtestDays * 86_400_000,
    toMs: req.nowMs,
    content: req.content,
    signal: req.signal,
  })
  const body = {
    base: req.base,
    mergeBase: from,
    head: req.head,
    files,
    rules,
    tests,
    brokenReferences: broken,
    backtest,
  }
  const failing = files.invalid.length > 0 || tests.some((t) => t.passed === false) || broken.length > 0
  return {
    id: req.id,
    createdAt: new Date(req.nowMs).toISOString(),
    status: failing ? 'fail' : 'pass',
    summary: summaryOf(body),
    ...body,
  }
}
