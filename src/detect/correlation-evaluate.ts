// One scheduled run of a correlation rule (alerts.md §5): the stored signals and matches of the
// rules it references with event time in [at − LookbackWindowMinutes, at) go through the unit
// tests' evaluator (engine/correlation: keepWindow, matchingJoinValues); each join value that
// matches is one correlation match — dedup = the join value, events = the signals of its present
// steps — grouped by the same Grouper as any match, counting each signal once per dedup string.
import { compileDetection, type CompiledDetection } from '../engine/correlation/index.js'
import { matchingJoinValues } from '../engine/correlation/evaluate-run.js'
import { keepWindow, type RawSignal } from '../engine/correlation/signals.js'
import type { IndexedRule, RuleIndex } from '../rules/rule-index.js'
import type { MatchLine, MatchReader, RuleErrorRecord } from './detection-ledger.js'
import { correlatedMatchIds, type Group, type Grouper, MAX_DEDUP, type MatchFields, type RuleMeta } from './grouping.js'
import { ruleMeta } from './live-rules.js'
import {
  type CorrelationWindow,
  countedKey,
  joinValue,
  readCorrelationWindow,
  type StoredSignal,
} from './correlation-signals.js'

/** What a run of one rule needs from the served index, taken synchronously (an index is no snapshot across awaits). */
export interface CorrelationPlan {
  meta: RuleMeta
  detection: CompiledDetection
  title: string
  severity: string
}

const str = (v: unknown) => (typeof v === 'string' ? v : '')

/** The plan of a served correlation rule, or why it cannot run. */
export function planCorrelation(rule: IndexedRule, index: RuleIndex): CorrelationPlan | { error: string } {
  const { detection, errors } = compileDetection(rule.file.data)
  if (detection === null)
    return { error: `the rule's Detection is invalid: ${errors[0]?.message ?? 'unknown problem'}` }
  const meta = ruleMeta(rule, index.revision)
  // Its log types: those of the rules it references (their union, sorted).
  const logTypes = new Set<string>()
  for (const step of detection.steps) {
    const lts = index.rules.get(step.ruleId)?.view.logTypes
    if (Array.isArray(lts)) for (const lt of lts) if (typeof lt === 'string') logTypes.add(lt)
  }
  meta.logTypes = [...logTypes].sort()
  return {
    meta,
    detection,
    title: str(rule.view.displayName) || rule.id,
    severity: (str(rule.view.severity) || 'INFO').toUpperCase(),
  }
}

export interface CorrelationOutput {
  matches: MatchLine[]
  groups: Group[]
  created: Array<{ group: Group; rule: RuleMeta; match: MatchFields }>
  errors: RuleErrorRecord[]
  /** Join values that matched in this run (each a correlation match, new events or not). */
  matched: number
  /** Signals counted for the first time. */
  counted: number
}

/** Whether a join field or a summary needs the records' own fields (not only p_alert_context). */
function needsRecords(plan: CorrelationPlan): boolean {
  if (plan.meta.summaryAttributes.length > 0) return true
  for (const step of plan.detection.steps)
    for (const f of step.joinFields) if (f !== 'p_alert_context' && !f.startsWith('p_alert_context.')) return true
  return false
}

/** The window of a run at `atMs`: [atMs − LookbackWindowMinutes, atMs), as stored (committed). */
export function readWindowFor(
  o: { store: MatchReader; logsRoot: string },
  plan: CorrelationPlan,
  atMs: number,
): Promise<CorrelationWindow> {
  return readCorrelationWindow({
    store: o.store,
    logsRoot: o.logsRoot,
    ruleId: plan.meta.id,
    members: new Set(plan.detection.steps.map((s) => s.ruleId)),
    fromMs: atMs - plan.detection.lookbackMinutes * 60_000,
    toMs: atMs,
    withRecords: needsRecords(plan),
  })
}

/**
 * Evaluates the window and groups what matched, synchronously: the caller commits the output
 * before anything else can see the groups it changed (AlertBook.commitOutput).
 */
export function correlate(
  plan: CorrelationPlan,
  window: CorrelationWindow,
  atMs: number,
  grouper: Pick<Grouper, 'addEvents'>,
  nowMs: number,
): CorrelationOutput {
  const { meta, detection } = plan
  const fromMs = atMs - detection.lookbackMinutes * 60_000
  // Every (step, signal) pair: a rule may back several steps; a joined step needs its join value.
  const raw: RawSignal[] = []
  const bySignal: StoredSignal[] = []
  for (const step of detection.steps) {
    const fields = [...step.joinFields]
    for (const s of window.signals) {
      if (s.ruleId !== step.ruleId) continue
      let value = ''
      if (fields.length > 0) {
        const v = joinValue(s.view, fields)
        if (v === null) continue
        value = v
      }
      raw.push({ step: step.index, value, time: s.eventMs })
      bySignal.push(s)
    }
  }
  // The window ends before `at` (readCorrelationWindow keeps [from, at)), so `latest` is only a bound.
  const run = keepWindow(detection, raw, 'rfc3339', fromMs, atMs)
  // The positions in `raw` of present steps' signals: per join value, and those of unjoined steps.
  const present = new Map<string, number[]>()
  const unjoined: number[] = []
  raw.forEach((r, i) => {
    const step = detection.steps[r.step]!
    if (step.absent) return
    if (step.joinFields.size === 0) {
      unjoined.push(i)
      return
    }
    let list = present.get(r.value)
    if (!list) present.set(r.value, (list = []))
    list.push(i)
  })
  const out: CorrelationOutput = { matches: [], groups: [], created: [], errors: [], matched: 0, counted: 0 }
  for (const value of matchingJoinValues(detection, run)) {
    out.matched++
    // null: unjoined steps alone matched; the dedup string falls back to the rule id (alerts.md §2).
    const dedup = (value ?? meta.id).slice(0, MAX_DEDUP)
    // The signals that formed the match: those of its present steps with its join value (an
    // unjoined step's count for every value), in the window; a signal backing two steps is one event.
    const formed = new Map<string, StoredSignal>()
    const perStep: Record<string, number> = {}
    for (const i of [...(value === null ? [] : (present.get(value) ?? [])), ...unjoined]) {
      const step = detection.steps[raw[i]!.step]!
      formed.set(bySignal[i]!.id, bySignal[i]!)
      perStep[step.id] = (perStep[step.id] ?? 0) + 1
    }
    const events = [...formed.values()].sort((a, b) => a.eventMs - b.eventMs)
    const fresh = events.filter((s) => !window.counted.has(countedKey(dedup, s.id)))
    if (fresh.length === 0) continue
    const fields: MatchFields = {
      title: plan.title,
      dedup,
      severity: plan.severity,
      alertContext: { joinValue: value, signals: perStep },
    }
    let alertId: string | null = null
    if (meta.createAlert) {
      const { group, created } = grouper.addEvents(
        meta,
        fields,
        events[0]!.eventMs,
        fresh.map((s) => ({ eventMs: s.eventMs, event: s.view })),
        nowMs,
      )
      alertId = group.id
      out.groups.push(group)
      if (created) out.created.push({ group, rule: meta, match: fields })
    }
    const idOf = correlatedMatchIds(meta.id, dedup)
    for (const s of fresh) {
      window.counted.add(countedKey(dedup, s.id))
      out.counted++
      out.matches.push([
        s.eventTime,
        {
          id: idOf(s.id),
          ruleId: meta.id,
          ruleKind: meta.kind,
          revision: meta.revision,
          logType: s.logType,
          eventTime: s.eventTime,
          record: s.record,
          dedup,
          title: fields.title,
          severity: fields.severity,
          alertContext: fields.alertContext,
          signal: !meta.createAlert,
          alertId,
          signalId: s.id,
        },
      ])
    }
  }
  return out
}
