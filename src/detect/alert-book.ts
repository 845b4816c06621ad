// The alert book: the one writer of detection output. Matches, rule errors and the groups they
// change are queued as the log-reading loop (detector.ts) and correlation runs make them; a commit
// hands the queue to the ledger (detection-ledger.ts) with the checkpoint the loop reached and, once
// durable, publishes it: new alerts to the alert hook, status changes to who asked. Over a store that
// decides groups (PostgreSQL: addGroupMatch) the store groups the loop's matches in the commit and
// serves alerts and triage. Otherwise grouping, the alert index and the rule errors live here, texts
// and contexts capped as they enter (output-caps.ts); a committed group's context is dropped from
// memory and read back from the ledger. Output made beside the loop while it holds the book joins
// its next commit (never half a batch), else is committed alone at once. A failed run's queue is dropped.
import type { AlertAccess } from './alert-access.js'
import type { AlertHook } from './alert-hook.js'
import { AlertIndex, type AlertQuery } from './alert-index.js'
import { AlertLimiter } from './alert-limiter.js'
import { applyTriage, type TriageActor, type TriageChange } from './alert-triage.js'
import type { DetectMetrics } from './detect-metrics.js'
import type {
  Checkpoint,
  CheckpointUpdate,
  DetectionLedger,
  GroupDelta,
  MatchLine,
  RuleErrorRecord,
} from './detection-ledger.js'
import { eventTimeMs } from './event-time.js'
import type { UndoLog } from './group-undo.js'
import {
  type AlertStatus,
  type Group,
  type GroupOutcome,
  Grouper,
  type MatchFields,
  type RuleMeta,
} from './grouping.js'
import { matchLine } from './match-line.js'
import { refreshGroups } from './group-refresh.js'
import { capError, capMatch } from './output-caps.js'
import { RuleErrorWindow } from './rule-error-window.js'
import type { Location, StoredRecord } from './stored-log.js'

/** Output made outside the log-reading loop (a correlation run, or its rule error). */
export interface OutsideOutput {
  matches: readonly MatchLine[]
  /** Groups changed (already by `addEvents`), and those of them that became alerts. */
  groups: readonly Group[]
  created: ReadonlyArray<{ group: Group; rule: RuleMeta; match: MatchFields }>
  errors: readonly RuleErrorRecord[]
}

/** A match: the rule's fields, with a Python rule's destinations() when it gave them. */
type Match = MatchFields & { destinations?: unknown }

type Waiter = { done: () => void; fail: (e: unknown) => void }

interface Patch {
  id: string
  change: Omit<TriageChange, 'actor'> & { actor?: TriageActor }
  done: (g: Group | undefined) => void
  fail: (e: unknown) => void
}

/** A loop's match, its line written: the group it opened (if it did) points at the line for its context. */
interface QueuedMatch {
  eventTime: string
  line: string
  opened?: Group | undefined
  /** For a store that decides groups (`addGroupMatch`): the match to place, at the commit. */
  delta?: GroupDelta
}

export class AlertBook implements AlertAccess {
  private readonly grouper: Grouper
  private readonly index = new AlertIndex()
  /** The alert limit per rule and hour (alert-limiter.ts). */
  readonly limiter: AlertLimiter
  /** The rule errors committed or handed to a commit, in commit order: the newest, and all folded (bounded). */
  readonly ruleErrors: RuleErrorWindow
  // The queue: what the next commit takes, synchronously (so no other commit takes half of it).
  // The loop's matches and rule errors are kept apart from those made outside it (`discardLoop`).
  private matches: QueuedMatch[] = []
  private errors: RuleErrorRecord[] = []
  private outsideMatches: MatchLine[] = []
  private outsideErrors: RuleErrorRecord[] = []
  private loopChanged = new Map<string, Group>()
  private changed = new Map<string, Group>()
  private created: Group[] = []
  private patches: Patch[] = []
  private waiting: Waiter[] = []
  private held = false
  private closed = false
  /** The undo logs of commits staged and not (yet) durable, oldest first (group-undo.ts). */
  private unsettled: UndoLog<Group>[] = []

  constructor(
    private readonly ledger: DetectionLedger,
    private readonly o: {
      alertHook?: AlertHook
      metrics?: Pick<DetectMetrics, 'alerts' | 'alertsLimited' | 'matches' | 'ruleErrors'>
      /** Alerts one rule may make in a clock hour (default 1,000); further matches are signals. */
      alertsPerRuleHour?: number
    },
  ) {
    this.grouper = new Grouper(ledger.groups, { undo: true })
    this.limiter = new AlertLimiter(o.alertsPerRuleHour, ledger.groups)
    for (const g of ledger.groups) if (g.alert) this.index.add(g)
    this.ruleErrors = new RuleErrorWindow(ledger.errors)
  }

  /** The last committed checkpoint. */
  get checkpoint(): Checkpoint {
    return this.ledger.checkpoint
  }

  /** Every group, alert or not (the alert hook's `restored`). */
  get groups(): ReadonlyMap<string, Group> {
    return this.grouper.groups
  }

  /** How many alerts there are. */
  get alertCount(): number {
    return this.index.size
  }

  query(q: AlertQuery): { results: Group[]; next: { createdAt: string; id: string } | null } {
    return this.index.query(q)
  }

  /** A rule's newest alert's createdAt and its alerts created since a time (rule health). */
  ruleActivity(ruleId: string, since: string): { lastCreatedAt: string | null; createdSince: number } {
    return this.index.ruleActivity(ruleId, since)
  }

  alert(id: string): Group | undefined {
    const g = this.grouper.groups.get(id)
    return g?.alert ? g : undefined
  }

  eventLocations(g: Group): Promise<Location[]> {
    return this.ledger.alertEvents(g)
  }

  async context(g: Group): Promise<Record<string, unknown>> {
    if (g.alertContext !== null) return g.alertContext
    return g.contextAt && this.ledger.readContext ? this.ledger.readContext(g.contextAt) : {}
  }

  /** The groups when nothing of them is uncommitted (the ledger's snapshot of them), else null. */
  private idleGroups = (): Iterable<Group> | null =>
    this.changed.size === 0 && this.matches.length === 0 && this.patches.length === 0
      ? this.grouper.groups.values()
      : null

  /** Queues a rule error. */
  addError(e: RuleErrorRecord): void {
    this.errors.push(capError(e))
  }

  /** Queues a rule's match on a stored record, grouped (in stored order) when the rule makes alerts. */
  addMatch(
    rec: Pick<StoredRecord, 'file' | 'offset' | 'logType' | 'eventTime' | 'record'>,
    rule: RuleMeta,
    given: Match,
    now: number,
  ): void {
    const { match, contextText } = capMatch(given)
    let alertId: string | null = null
    let opened: Group | undefined
    // Over the rule's alert limit this hour: a signal only (no group, no alert, no delivery).
    const limited = rule.createAlert && !this.limiter.admit(rule.id, now)
    const alerting = rule.createAlert && !limited
    let delta: GroupDelta | undefined
    if (alerting && this.ledger.addGroupMatch) {
      // The store decides the group in the commit (replicas share it): the line's alertId is its answer.
      const eventMs = eventTimeMs(rec.eventTime)
      delta = { rule, match, eventMs, event: rec.record, now, onAlert: () => {} }
    } else if (alerting) {
      const { group, created } = this.grouper.add(rule, match, eventTimeMs(rec.eventTime), rec.record, now)
      alertId = group.id
      this.loopChanged.set(group.id, group)
      if (group.eventCount === 1 && group.alertContext === match.alertContext) opened = group
      if (created) {
        this.limiter.created(rule.id, now)
        this.alertCreated(group, rule, match)
      }
    }
    if (limited) this.o.metrics?.alertsLimited.inc()
    this.o.metrics?.matches.inc({ type: alerting ? 'match' : 'signal' })
    // The line is written now, a record at a time (the loop yields between records), not at the
    // commit; the context's text is the one its size check made.
    const line = matchLine(rec, rule, match, { alerting, limited, alertId, contextText })
    this.matches.push({ eventTime: rec.eventTime, line, opened, delta })
  }

  /** A match of several events (a correlation rule's) joins or opens its group; see `commitOutput`. */
  addEvents(
    rule: RuleMeta,
    m: MatchFields,
    groupMs: number,
    events: ReadonlyArray<{ eventMs: number; event: unknown }>,
    now: number,
  ): GroupOutcome {
    return this.grouper.addEvents(rule, m, groupMs, events, now)
  }

  /** A scheduled rule's groups read again from a store replicas share, before its run (group-refresh.ts). */
  refreshGroups(ruleIds: readonly string[], sinceMs: number): Promise<void> {
    const pending = [this.changed, this.loopChanged, ...this.unsettled]
    return refreshGroups(this.ledger, this.grouper, this.index, this.limiter, pending, ruleIds, sinceMs)
  }

  /** A new alert: indexed and told to the alert hook now, before its commit (what the hook sets is committed with it). */
  private alertCreated(group: Group, rule: RuleMeta, match: Match): void {
    this.index.add(group)
    this.o.metrics?.alerts.inc()
    if (this.o.alertHook) {
      this.o.alertHook.created(group, rule, match)
      this.created.push(group)
    }
  }

  /** Output made outside the loop: its new alerts indexed and told to the hook now, like a record's;
   * committed with the loop's next commit, or alone at once. Resolves once durable. */
  commitOutput(out: OutsideOutput): Promise<void> {
    if (this.closed) return Promise.reject(new Error('detection is closed'))
    for (const { group, rule, match } of out.created) this.alertCreated(group, rule, match)
    this.outsideMatches.push(...out.matches)
    for (const e of out.errors) this.outsideErrors.push(capError(e))
    for (const g of out.groups) this.changed.set(g.id, g)
    return new Promise((done, fail) => {
      this.waiting.push({ done, fail })
      if (!this.held) void this.commit().catch(() => {})
    })
  }

  // A status change never lands in the middle of a loop's batch (whose groups hold counts not yet
  // committed): the loop's next commit applies it.
  setStatus(id: string, status: AlertStatus): Promise<Group | undefined> {
    if (this.ledger.alerts) return this.ledger.alerts.setStatus(id, status) // the store's alerts
    if (!this.alert(id)) return Promise.resolve(undefined)
    return new Promise((done, fail) => {
      this.patches.push({ id, change: { status }, done, fail })
      if (!this.held) void this.commit().catch(() => {})
    })
  }

  /** Triage changes of several alerts, queued together (one commit); like `setStatus`. */
  change(ids: readonly string[], change: TriageChange): Promise<Array<Group | undefined>> {
    if (this.ledger.alerts) return this.ledger.alerts.change(ids, change)
    const all = ids.map((id) =>
      this.alert(id)
        ? new Promise<Group | undefined>((done, fail) => this.patches.push({ id, change, done, fail }))
        : Promise.resolve(undefined),
    )
    if (!this.held && this.patches.length > 0) void this.commit().catch(() => {})
    return Promise.all(all)
  }

  /** The loop runs: output made beside it waits for its commits (`release` when the run ends). */
  hold(): void {
    this.held = true
  }

  release(): void {
    this.held = false
  }

  /**
   * The loop's run failed: what it queued since its last commit is dropped, never committed by a later
   * commit (its records are evaluated again from the checkpoint at the next start: no match id written
   * twice, no event counted twice); the groups in memory go back to what is durable.
   */
  discardLoop(): void {
    const dropped = this.loopChanged
    this.matches = []
    this.errors = []
    this.loopChanged = new Map()
    // The groups go back to their last durable state: the changes since, then each commit that
    // failed, newest first (alerts opened since leave the index; statuses move back).
    // Groups changed by outside output still waiting (a correlation run during the loop) are left
    // as they are: that output is committed after (kick's commitWaiting), and its changes with them.
    for (const log of [this.grouper.takeUndo(), ...this.unsettled.reverse()]) {
      for (const id of this.changed.keys()) log.delete(id)
      for (const [id, before] of log) {
        const live = this.grouper.groups.get(id)
        if (!live?.alert) continue
        if (!before?.alert) this.index.remove(live)
        else if (before.status !== live.status) this.index.setStatus(live, before.status)
      }
      this.grouper.rollBack(log)
    }
    this.unsettled = []
    // Its new alerts are not committed either: the alert hook never hears they are.
    this.created = this.created.filter((g) => !dropped.has(g.id) && this.grouper.groups.get(g.id) === g)
  }

  /** Stages an outside match line; a group it opened, its context still in memory, points at it (stored once). */
  private stageMatch(eventTime: string, m: Record<string, unknown>): void {
    const at = this.ledger.addMatch(eventTime, m)
    if (!at || typeof m.alertId !== 'string') return
    const g = this.loopChanged.get(m.alertId) ?? this.changed.get(m.alertId)
    if (g && g.contextAt === undefined && g.alertContext !== null && g.alertContext === m.alertContext) g.contextAt = at
  }

  /** Commits the status changes and outside output that wait for a commit (the end of a run). */
  async commitWaiting(): Promise<void> {
    while (this.patches.length > 0 || this.waiting.length > 0) await this.commit()
  }

  /** Hands the queue to the ledger (synchronously) and commits it with `update`; publishes once durable. */
  commit(update: CheckpointUpdate = {}): Promise<void> {
    const patches = this.patches
    const waiting = this.waiting
    const created = this.created
    this.patches = []
    this.waiting = []
    this.created = []
    const now = new Date().toISOString()
    const patched = patches.map((p) => {
      const g = this.alert(p.id)
      if (!g) return undefined
      this.grouper.remember(g)
      const { actor, ...rest } = p.change
      if (rest.status !== undefined) this.index.setStatus(g, rest.status)
      if (actor) applyTriage(g, { ...rest, actor }, now)
      else {
        // A change without an actor (the book's own callers): the status alone, no history.
        if (rest.status !== undefined) g.status = rest.status
        g.updatedAt = now
      }
      this.changed.set(g.id, g)
      return g
    })
    // Alerts the store decides in this commit (addGroupMatch): told to the alert hook inside it.
    const decided: Group[] = []
    const onAlert = (g: Group, rule: RuleMeta, match: Match) => {
      this.limiter.created(rule.id, Date.now())
      this.o.alertHook?.created(g, rule, match)
      decided.push(g)
    }
    for (const m of this.matches) {
      if (m.delta && this.ledger.addGroupMatch) {
        m.delta.onAlert = onAlert
        this.ledger.addGroupMatch(m.eventTime, m.line, m.delta)
        continue
      }
      // The group this match opened points at its line for its context (stored once).
      const at = this.ledger.addMatch(m.eventTime, m.line)
      const g = m.opened
      if (at && g && g.contextAt === undefined && g.alertContext !== null) g.contextAt = at
    }
    for (const [t, m] of this.outsideMatches) this.stageMatch(t, m)
    for (const e of [...this.errors, ...this.outsideErrors]) {
      this.ledger.addError(e)
      this.ruleErrors.push(e)
      this.o.metrics?.ruleErrors.inc()
    }
    const staged = [...this.loopChanged.values()]
    for (const g of this.changed.values()) if (!this.loopChanged.has(g.id)) staged.push(g)
    for (const g of staged) this.ledger.addGroup(g)
    this.matches = []
    this.errors = []
    this.outsideMatches = []
    this.outsideErrors = []
    this.changed = new Map()
    this.loopChanged = new Map()
    const done = this.ledger.commit(update)
    const undo = this.grouper.takeUndo()
    this.unsettled.push(undo)
    done.then(
      () => {
        // Durable: its log, and those of earlier commits whose later state this one wrote, are done.
        this.unsettled.splice(0, this.unsettled.indexOf(undo) + 1)
        // Durable: the contexts are on disk (when the ledger can read them back), the groups compact.
        if (this.ledger.readContext) for (const g of staged) if (g.contextAt) g.alertContext = null
        void this.ledger.saveIndex?.(this.idleGroups).catch(() => {})
        // Alerts the store decided: kept as the hook's deliveries read them (their context in the store).
        for (const g of decided) {
          g.alertContext = null
          this.grouper.restore(g)
        }
        if (decided.length > 0) this.o.metrics?.alerts.inc(decided.length)
        if (created.length + decided.length > 0) this.o.alertHook?.committed([...created, ...decided])
        for (const [i, p] of patches.entries()) p.done(patched[i])
        for (const w of waiting) w.done()
      },
      (err: unknown) => {
        for (const p of patches) p.fail(err)
        for (const w of waiting) w.fail(err)
      },
    )
    return done
  }

  /** Refuses outside output from now on, waits for the commits under way, closes the ledger. */
  async close(): Promise<void> {
    this.closed = true
    await this.ledger.saveIndex?.(this.idleGroups, true).catch(() => {})
    await this.ledger.close()
  }
}
