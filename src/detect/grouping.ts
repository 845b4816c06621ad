// Alert grouping (alerts.md §2), pure and in memory: matches taken in stored order join the group
// of their rule and dedup string with the latest start t0 ≤ their event time whose window
// [t0, t0 + DedupPeriodMinutes) covers them, else open one at their own event time; a group is an
// alert once it has Threshold matches. Live detection and replay run the same code.
import { createHash } from 'node:crypto'
import { compileKeySpec, MISSING, parseKeyPath, type Resolver } from '../engine/simple/index.js'
import type { MatchFields } from '../engine/live.js'
import type { AlertStatus } from './alert-status.js'
import type { Triage } from './alert-triage.js'
import { copyGroup, restoreGroup, type UndoLog } from './group-undo.js'

/** What a match contributes to its alert, and the longest dedup string it keeps (engine/live.ts). */
export { MAX_DEDUP, type MatchFields } from '../engine/live.js'

export { STATUSES, type AlertStatus } from './alert-status.js'

/** What a rule contributes to its alerts (its effective API fields at the revision evaluated). */
export interface RuleMeta {
  id: string
  kind: string
  revision: string | null
  logTypes: string[]
  threshold: number
  dedupPeriodMinutes: number
  createAlert: boolean
  summaryAttributes: string[]
  description: string
  runbook: string
  reference: string
  outputIds: string[]
}

/** A group of matches; an alert once `alert` is true. Stored whole, one line per change; triage fields optional (alert-triage.ts). */
export interface Group extends Pick<Triage, 'assignee' | 'comments' | 'history'> {
  id: string
  ruleId: string
  ruleKind: string
  revision: string | null
  severity: string
  title: string
  dedup: string
  /**
   * The first match's alert context; null once it is durable at `contextAt` (the alert book keeps
   * only the compact part of an alert in memory and reads the context back when it is asked).
   */
  alertContext: Record<string, unknown> | null
  /** Where the context is stored (detection-store.ts): a JSON line holding `alertContext`. */
  contextAt?: ContextRef
  logTypes: string[]
  windowStart: string
  eventCount: number
  firstEventTime: string
  lastEventTime: string
  alert: boolean
  createdAt: string | null
  updatedAt: string
  status: AlertStatus
  description: string
  runbook: string
  reference: string
  destinations: Array<{
    id: string
    state: 'pending' | 'delivered' | 'failed'
    attempts: number
    lastError: string | null
  }>
  /**
   * attribute → JSON text of a value → count, over every match of the group: at most
   * MAX_SUMMARY_VALUES distinct values per attribute, later new values counted under OTHERS.
   */
  summaryCounts: Record<string, Record<string, number>>
}

/** A stored JSON line: its file (relative to `detections/`), byte offset and length. */
export interface ContextRef {
  file: string
  offset: number
  length: number
}

/** Distinct values counted per summary attribute and group (docs/decisions.md, "Alerts in bounded memory"). */
export const MAX_SUMMARY_VALUES = 100
/** The key of summaryCounts that counts the values past MAX_SUMMARY_VALUES (not JSON: never a value's key). */
export const OTHERS = '\u0000others'

const hash = (...parts: string[]) => createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 32)

/** The alert id: the same rule, dedup string and window start always give the same id. */
export const alertId = (ruleId: string, dedup: string, windowStartMs: number) =>
  hash('alert', ruleId, dedup, new Date(windowStartMs).toISOString())

/** The match id: one rule on one stored line. */
export const matchId = (ruleId: string, file: string, offset: number) => hash('match', ruleId, file, String(offset))

/**
 * The match ids of a correlation rule counting signals for one dedup string (each once, ever): half
 * a hash of (rule, dedup string), half the signal's own match id (itself a hash), so a run counting
 * 100k signals hashes once per dedup string, not once per signal.
 */
export const correlatedMatchIds = (ruleId: string, dedup: string) => {
  const prefix = hash('correlation', ruleId, dedup).slice(0, 16)
  return (signalId: string) => `${prefix}${signalId.slice(0, 16)}`
}

const iso = (ms: number) => new Date(ms).toISOString()

const resolvers = new Map<string, Resolver | null>()
function summaryResolver(attr: string): Resolver | null {
  let r = resolvers.get(attr)
  if (r === undefined) {
    const parsed = parseKeyPath(attr, 64)
    r = parsed.ok ? compileKeySpec({ kind: 'keyPath', text: attr, segments: parsed.segments }) : null
    if (resolvers.size < 10_000) resolvers.set(attr, r)
  }
  return r
}

function countSummary(group: Group, attrs: readonly string[], event: unknown): void {
  for (const attr of attrs) {
    const v = summaryResolver(attr)?.(event)
    if (v === undefined || v === MISSING || v === null) continue
    const counts = (group.summaryCounts[attr] ??= {})
    for (const item of Array.isArray(v) ? v : [v]) {
      if (item === null) continue
      const k = JSON.stringify(item)
      if (counts[k] !== undefined) counts[k]++
      else if (countedValues(counts) < MAX_SUMMARY_VALUES) counts[k] = 1
      else counts[OTHERS] = (counts[OTHERS] ?? 0) + 1
    }
  }
}

/** Distinct values counted (OTHERS not among them). */
function countedValues(counts: Record<string, number>): number {
  const n = Object.keys(counts).length
  return counts[OTHERS] === undefined ? n : n - 1
}

/** `summary` of the alert shape: the top 5 values per attribute by count, ties by value. */
export function summaryOf(group: Group): Record<string, Array<{ value: unknown; count: number }>> {
  const out: Record<string, Array<{ value: unknown; count: number }>> = {}
  for (const [attr, counts] of Object.entries(group.summaryCounts)) {
    const sortText = (k: string) => {
      const v = JSON.parse(k) as unknown
      return typeof v === 'string' ? v : k
    }
    out[attr] = Object.entries(counts)
      .filter(([k]) => k !== OTHERS)
      .map(([k, count]) => ({ k, t: sortText(k), count }))
      .sort((a, b) => b.count - a.count || (a.t < b.t ? -1 : a.t > b.t ? 1 : 0))
      .slice(0, 5)
      .map(({ k, count }) => ({ value: JSON.parse(k) as unknown, count }))
  }
  return out
}

export interface GroupOutcome {
  group: Group
  /** The group became an alert with this match (the one notification). */
  created: boolean
}

/** Window starts of one rule and dedup string, sorted, with each start's group. */
interface Starts {
  ms: number[]
  groups: Group[]
}

/** The ISO text of `now`, kept for the next call with the same millisecond (every match stamps it). */
let lastNow = Number.NaN
let lastNowText = ''
function isoNow(now: number): string {
  if (now !== lastNow) {
    lastNowText = iso(now)
    lastNow = now
  }
  return lastNowText
}

/** The groups of every rule and dedup string, with their window starts sorted per key. */
export class Grouper {
  readonly groups = new Map<string, Group>()
  /** Rule id → dedup string → window starts (nested: no key string built per match). */
  private readonly starts = new Map<string, Map<string, Starts>>()
  /** firstEventTime and lastEventTime of a group in milliseconds (parsed once, not per match). */
  private readonly spans = new WeakMap<Group, { first: number; last: number }>()
  /** The groups' states before the changes since the last `takeUndo` (group-undo.ts); null: not kept (replay). */
  private undo: UndoLog<Group> | null

  constructor(groups: Iterable<Group> = [], o: { undo?: boolean } = {}) {
    this.undo = o.undo ? new Map() : null
    for (const g of groups) this.restore(g)
  }

  restore(g: Group): void {
    const known = this.groups.get(g.id)
    this.groups.set(g.id, g)
    if (known !== undefined) {
      // a later state of a known group (a journal replays every change): the starts hold the latest
      const list = this.startsOf(known.ruleId, known.dedup)
      const i = list.groups.indexOf(known)
      if (i >= 0) list.groups[i] = g
      return
    }
    insertSorted(this.startsOf(g.ruleId, g.dedup), Date.parse(g.windowStart), g)
  }

  /** Logs the group's state before a change (once per group per log). */
  remember(g: Group): void {
    if (this.undo && !this.undo.has(g.id)) this.undo.set(g.id, copyGroup(g))
  }

  /** The undo log of the changes so far; a new one starts (a commit takes it along). */
  takeUndo(): UndoLog<Group> {
    const log = this.undo ?? new Map()
    if (this.undo) this.undo = new Map()
    return log
  }

  /** Undoes a log's changes: groups opened since are forgotten, the others restored in place. */
  rollBack(log: UndoLog<Group>): void {
    for (const [id, before] of log) {
      const live = this.groups.get(id)
      if (!live) continue
      if (before) {
        restoreGroup(live, before)
        this.spans.delete(live)
        continue
      }
      this.groups.delete(id)
      const list = this.startsOf(live.ruleId, live.dedup)
      const i = list.groups.indexOf(live)
      if (i >= 0) for (const starts of [list.ms, list.groups]) starts.splice(i, 1)
    }
  }

  private startsOf(ruleId: string, dedup: string): Starts {
    let byDedup = this.starts.get(ruleId)
    if (byDedup === undefined) {
      byDedup = new Map()
      this.starts.set(ruleId, byDedup)
    }
    let list = byDedup.get(dedup)
    if (list === undefined) {
      list = { ms: [], groups: [] }
      byDedup.set(dedup, list)
    }
    return list
  }

  private span(g: Group): { first: number; last: number } {
    let s = this.spans.get(g)
    if (s === undefined) {
      s = { first: Date.parse(g.firstEventTime), last: Date.parse(g.lastEventTime) }
      this.spans.set(g, s)
    }
    return s
  }

  /** Adds one match (in stored order); `now` stamps createdAt/updatedAt. */
  add(rule: RuleMeta, m: MatchFields, eventMs: number, event: unknown, now: number): GroupOutcome {
    const group = this.locate(rule, m, eventMs, eventMs, now)
    this.count(group, rule, eventMs, event)
    return this.settle(group, rule, now)
  }

  /**
   * Adds one match made of several events (a correlation rule's match: the signals that formed
   * it): it joins or opens a group at `groupMs` like one match, and each event counts once.
   */
  addEvents(
    rule: RuleMeta,
    m: MatchFields,
    groupMs: number,
    events: ReadonlyArray<{ eventMs: number; event: unknown }>,
    now: number,
  ): GroupOutcome {
    const group = this.locate(rule, m, groupMs, events[0]?.eventMs ?? groupMs, now)
    for (const e of events) this.count(group, rule, e.eventMs, e.event)
    return this.settle(group, rule, now)
  }

  /** The group covering `groupMs` (latest start t0 ≤ it, within the period), else a new one at it, with no event. */
  private locate(rule: RuleMeta, m: MatchFields, groupMs: number, firstMs: number, now: number): Group {
    const list = this.startsOf(rule.id, m.dedup)
    const starts = list.ms
    const period = rule.dedupPeriodMinutes * 60_000
    // the latest start t0 ≤ the time; it covers it when groupMs < t0 + period
    let lo = 0
    let hi = starts.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (starts[mid]! <= groupMs) lo = mid + 1
      else hi = mid
    }
    const t0 = lo > 0 ? starts[lo - 1]! : undefined
    // the group alertId(rule.id, m.dedup, t0), kept beside the start
    if (t0 !== undefined && groupMs < t0 + period) {
      const known = list.groups[lo - 1]!
      this.remember(known)
      return known
    }
    const group: Group = {
      id: alertId(rule.id, m.dedup, groupMs),
      ruleId: rule.id,
      ruleKind: rule.kind,
      revision: rule.revision,
      severity: m.severity,
      title: m.title,
      dedup: m.dedup,
      alertContext: m.alertContext,
      logTypes: rule.logTypes,
      windowStart: iso(groupMs),
      eventCount: 0,
      firstEventTime: iso(firstMs),
      lastEventTime: iso(firstMs),
      alert: false,
      createdAt: null,
      updatedAt: isoNow(now),
      status: 'OPEN',
      description: m.description || rule.description,
      runbook: m.runbook || rule.runbook,
      reference: m.reference || rule.reference,
      destinations: [],
      summaryCounts: {},
    }
    this.groups.set(group.id, group)
    if (this.undo && !this.undo.has(group.id)) this.undo.set(group.id, null)
    this.spans.set(group, { first: firstMs, last: firstMs })
    insertSorted(list, groupMs, group)
    return group
  }

  private count(group: Group, rule: RuleMeta, eventMs: number, event: unknown): void {
    group.eventCount++
    const span = this.span(group)
    if (eventMs < span.first) {
      span.first = eventMs
      group.firstEventTime = iso(eventMs)
    }
    if (eventMs > span.last) {
      span.last = eventMs
      group.lastEventTime = iso(eventMs)
    }
    countSummary(group, rule.summaryAttributes, event)
  }

  /** Makes the group an alert when it reaches Threshold; stamps `updatedAt`. */
  private settle(group: Group, rule: RuleMeta, now: number): GroupOutcome {
    let created = false
    if (!group.alert && group.eventCount >= rule.threshold) {
      group.alert = true
      group.createdAt = isoNow(now)
      created = true
    }
    group.updatedAt = isoNow(now)
    return { group, created }
  }
}

function insertSorted(list: Starts, v: number, group: Group): void {
  const ms = list.ms
  let lo = 0
  let hi = ms.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (ms[mid]! < v) lo = mid + 1
    else hi = mid
  }
  if (ms[lo] !== v) {
    ms.splice(lo, 0, v)
    list.groups.splice(lo, 0, group)
  }
}

/** The API shape of an alert (alerts.md §2); `context` when the group's is on disk (alertContext null). */
export function alertView(g: Group, context?: Record<string, unknown>): Record<string, unknown> {
  return {
    id: g.id,
    ruleId: g.ruleId,
    ruleKind: g.ruleKind,
    revision: g.revision,
    severity: g.severity,
    title: g.title,
    dedup: g.dedup,
    alertContext: context ?? g.alertContext ?? {},
    logTypes: g.logTypes,
    eventCount: g.eventCount,
    firstEventTime: g.firstEventTime,
    lastEventTime: g.lastEventTime,
    createdAt: g.createdAt,
    updatedAt: g.updatedAt,
    status: g.status,
    description: g.description,
    runbook: g.runbook,
    reference: g.reference,
    summary: summaryOf(g),
    destinations: g.destinations,
  }
}
