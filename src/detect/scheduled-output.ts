// Scheduled rules over the rows of one scheduled query run (issue 29; detections.md): every enabled
// scheduled rule naming the query, compiled by the Python engine's `live` member (the batch
// evaluator live detection uses: warm workers, InlineFilters, quarantine), gets every row as its
// event. Its answers become output exactly as a streaming rule's do — rule errors per row, alert
// functions that raised as rule errors beside the match, the alert limit, grouping by dedup string
// and threshold, the Python destinations() — committed through the alert book's outside path
// (alert-book.ts `commitOutput`). A row has no stored record: its match line carries the row itself.
import { createHash } from 'node:crypto'
import type { EngineContext, LiveCompiler } from '../engine/engine.js'
import type { BatchEvaluator, Evaluation } from '../engine/live.js'
import type { IndexedRule, RuleIndex } from '../rules/rule-index.js'
import { indexContext } from '../service/rule-views.js'
import type { AlertBook, OutsideOutput } from './alert-book.js'
import type { MatchLine, RuleErrorRecord } from './detection-ledger.js'
import type { Group, MatchFields, RuleMeta } from './grouping.js'
import { ruleMeta } from './live-rules.js'
import { cappedContext, capMatch } from './output-caps.js'

/** A scheduled rule of a run: its meta, and its batch evaluator or why it cannot run. */
export interface ScheduledRulePlan {
  meta: RuleMeta
  compiled: { batch: BatchEvaluator } | { error: string }
}

export interface ScheduledOutput extends OutsideOutput {
  /** Rows matched (over all rules), alerts created. */
  matched: number
  alertsCreated: string[]
  alertsUpdated: string[]
}

const contexts = new WeakMap<RuleIndex, EngineContext>()
const errorText = (err: unknown) => (err instanceof Error ? `${err.name}: ${err.message}` : String(err))
const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])

/** The enabled scheduled rules of the index naming the query (sorted by id). */
export function rulesNaming(index: RuleIndex, queryName: string): IndexedRule[] {
  const out: IndexedRule[] = []
  // The rules whose kind names queries (the `ScheduledQueries` field: scheduled rules).
  for (const rule of index.rules.values())
    if (rule.view.enabled !== false && strings(rule.view.scheduledQueries).includes(queryName)) out.push(rule)
  return out.sort((a, b) => (a.id < b.id ? -1 : 1))
}

/**
 * The plans of the rules naming the query, taken synchronously from the served index (one
 * engine context per index, so a revision's warm workers are reused run after run).
 */
export function planScheduledRules(
  index: RuleIndex,
  queryName: string,
  compile: LiveCompiler | undefined,
): ScheduledRulePlan[] {
  let ctx = contexts.get(index)
  if (!ctx) contexts.set(index, (ctx = indexContext(index)))
  return rulesNaming(index, queryName).map((rule) => {
    const meta = ruleMeta(rule, index.revision)
    if (!compile) return { meta, compiled: { error: 'the Python engine is not available in this build' } }
    let compiled: ReturnType<LiveCompiler>
    try {
      compiled = compile(rule, ctx)
    } catch (err) {
      compiled = { error: errorText(err) }
    }
    if ('error' in compiled) return { meta, compiled }
    if (!('batch' in compiled)) return { meta, compiled: { error: 'the rule does not compile to a batch evaluator' } }
    return { meta, compiled: { batch: compiled.batch } }
  })
}

/** Every plan over the rows, side by side: per rule, one Evaluation per row or why it could not run. */
export function evaluateRows(
  plans: readonly ScheduledRulePlan[],
  rows: readonly Record<string, unknown>[],
): Promise<Array<Evaluation[] | { error: string }>> {
  return Promise.all(
    plans.map(async (p) => {
      if ('error' in p.compiled) return p.compiled
      if (rows.length === 0) return []
      try {
        return await p.compiled.batch(rows)
      } catch (err) {
        return { error: errorText(err) }
      }
    }),
  )
}

/**
 * The output of one run, grouped synchronously (the caller commits it before anything else can see
 * the groups it changed). `runKey` names the run (slot or manual time) in the match ids.
 */
export function scheduledOutput(o: {
  query: string
  atMs: number
  runKey: string
  rows: readonly Record<string, unknown>[]
  plans: readonly ScheduledRulePlan[]
  evaluations: ReadonlyArray<Evaluation[] | { error: string }>
  book: Pick<AlertBook, 'addEvents' | 'limiter'>
  nowMs: number
}): ScheduledOutput {
  const at = new Date(o.atMs).toISOString()
  const time = new Date(o.nowMs).toISOString()
  const matches: MatchLine[] = []
  const errors: RuleErrorRecord[] = []
  const groups = new Map<string, Group>()
  const created: Array<{ group: Group; rule: RuleMeta; match: MatchFields }> = []
  let matched = 0
  const error = (meta: RuleMeta, text: string): RuleErrorRecord => ({
    ruleId: meta.id,
    revision: meta.revision,
    time,
    record: null,
    error: text,
  })
  o.plans.forEach((plan, r) => {
    const { meta } = plan
    const answers = o.evaluations[r]!
    if (!Array.isArray(answers)) {
      // A rule that cannot run is an error of each run that had rows for it (no rows: nothing ran).
      if (o.rows.length > 0) errors.push(error(meta, `scheduled query ${o.query}: ${answers.error}`))
      return
    }
    o.rows.forEach((row, i) => {
      const answer = answers[i] ?? { error: 'the rule reported nothing for this row' }
      if ('error' in answer) {
        errors.push(error(meta, `scheduled query ${o.query}, row ${i + 1}: ${answer.error}`))
        return
      }
      if (!answer.matched) return
      matched++
      for (const e of answer.errors ?? []) errors.push(error(meta, `scheduled query ${o.query}, row ${i + 1}: ${e}`))
      const { matched: _m, errors: _e, destinations, ...fields } = answer
      // Texts and context capped as a streaming match's are (output-caps.ts).
      const { match } = capMatch<MatchFields>(fields)
      // Over the rule's alert limit this hour: a signal only, as for a streaming match.
      const limited = meta.createAlert && !o.book.limiter.admit(meta.id, o.nowMs)
      let alertId: string | null = null
      if (meta.createAlert && !limited) {
        const outcome = o.book.addEvents(meta, match, o.atMs, [{ eventMs: o.atMs, event: row }], o.nowMs)
        alertId = outcome.group.id
        groups.set(outcome.group.id, outcome.group)
        if (outcome.created) {
          o.book.limiter.created(meta.id, o.nowMs)
          // The Python destinations() routes it (alert-hook.ts), as a streaming match's does.
          const routed: MatchFields & { destinations?: unknown } = { ...match }
          if (destinations !== undefined) routed.destinations = destinations
          created.push({ group: outcome.group, rule: meta, match: routed })
        }
      }
      const id = createHash('sha256')
        .update(['scheduled', meta.id, o.query, o.runKey, String(i)].join('\u0000'))
        .digest('hex')
        .slice(0, 32)
      matches.push([
        at,
        {
          ...(limited ? { alertLimited: true } : {}),
          id,
          ruleId: meta.id,
          ruleKind: meta.kind,
          revision: meta.revision,
          logType: null,
          eventTime: at,
          record: null,
          query: o.query,
          // The row as the rule saw it (a long one as the capped context's `_error` says).
          event: cappedContext(row).context,
          dedup: match.dedup,
          title: match.title,
          severity: match.severity,
          alertContext: match.alertContext,
          signal: alertId === null,
          alertId,
        },
      ])
    })
  })
  const createdIds = new Set(created.map((c) => c.group.id))
  const alerts = [...groups.values()].filter((g) => g.alert)
  return {
    matches,
    groups: [...groups.values()],
    created,
    errors,
    matched,
    alertsCreated: [...createdIds],
    alertsUpdated: alerts.map((g) => g.id).filter((id) => !createdIds.has(id)),
  }
}
