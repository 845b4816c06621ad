// The reconciler: on a schedule (node-cron), on POST /reconcile, on the push webhook and at start it
// fetches the remote (or reads the local branch in embedded mode), re-reads only the changed files,
// applies the revision unless the mass-deletion guard holds it back, and alone decides the status
// conditions. Runs never overlap; a trigger during a run queues exactly one more.
import cron from 'node-cron'
import type { Logger } from '../log.js'
import { Counter, Gauge, Histogram, type Registry } from '../metrics.js'
import type { RuleStore } from '../service/rule-store.js'
import { RemoteError } from '../git/remote.js'

export interface Condition {
  type: 'Ready' | 'Reconciling' | 'Stalled'
  status: 'True' | 'False'
  reason: string
  message: string
  lastTransitionTime: string
}

/** After an authentication failure scheduled runs back off (a person must fix the credentials). */
const AUTH_BACKOFF_MS = [30_000, 60_000, 120_000, 300_000, 600_000]

export class Reconciler {
  private lastRun: { startedAt: string; durationMs: number; filesChanged: number; outcome: string } | null = null
  private lastAttempted: string | null = null
  private running: Promise<void> | null = null
  private again = false
  private conditions: Condition[]
  private task: { stop(): void } | null = null
  private authFailures = 0
  private backoffUntil = 0
  private readonly runs: Counter
  private readonly durations: Histogram
  private readonly invalid: Gauge

  constructor(
    private readonly store: RuleStore,
    private readonly logger: Logger,
    registry: Registry,
  ) {
    const now = new Date().toISOString()
    this.conditions = [
      { type: 'Ready', status: 'True', reason: 'Loaded', message: 'the index of the current revision is loaded', lastTransitionTime: now },
      { type: 'Reconciling', status: 'False', reason: 'Idle', message: 'no run in progress', lastTransitionTime: now },
      { type: 'Stalled', status: 'False', reason: 'None', message: 'nothing needs a person', lastTransitionTime: now },
    ]
    this.runs = new Counter({ name: 'rulekeeper_reconcile_runs_total', help: 'Reconcile runs', labelNames: ['outcome'], registers: [registry] })
    this.durations = new Histogram({ name: 'rulekeeper_reconcile_duration_seconds', help: 'Reconcile run duration', registers: [registry] })
    this.invalid = new Gauge({ name: 'rulekeeper_invalid_files', help: 'Invalid files in the applied revision', registers: [registry] })
  }

  start(schedule: string): void {
    this.task = cron.schedule(schedule, () => {
      if (Date.now() < this.backoffUntil) return
      void this.trigger().catch(() => {})
    })
  }

  stop(): void {
    this.task?.stop()
    this.task = null
  }

  private setCondition(type: Condition['type'], status: Condition['status'], reason: string, message: string): void {
    const c = this.conditions.find((x) => x.type === type)!
    if (c.status !== status || c.reason !== reason) c.lastTransitionTime = new Date().toISOString()
    Object.assign(c, { status, reason, message })
  }

  /** Runs now, or once more after the current run. */
  trigger(): Promise<void> {
    if (this.running) {
      this.again = true
      return this.running
    }
    this.running = (async () => {
      do {
        this.again = false
        await this.runOnce()
      } while (this.again)
    })().finally(() => {
      this.running = null
    })
    return this.running
  }

  private async runOnce(): Promise<void> {
    const started = Date.now()
    const before = this.store.index.revision
    this.setCondition('Reconciling', 'True', 'Running', this.store.remote ? 'fetching the remote' : 'reading the branch')
    let outcome = 'unchanged'
    let filesChanged = 0
    try {
      const { tip } = await this.store.pullRemote()
      this.authFailures = 0
      this.lastAttempted = tip
      // Serialized with write batches: one change of the index at a time. The follower's tree diff
      // (made once) is the count of files changed.
      const synced = await this.store.exclusive(() => this.store.syncToTip())
      if (synced.kind !== 'unchanged') filesChanged = synced.filesChanged
      const stalled = this.store.stalled
      if (stalled) {
        outcome = 'held'
        this.setCondition('Stalled', 'True', 'MassDeletion', `${stalled.reason}; confirm with POST /reconcile?allow-mass-delete=true`)
      } else {
        if (this.store.index.revision !== before) outcome = 'applied'
        this.setCondition('Stalled', 'False', 'None', 'nothing needs a person')
      }
      const invalid = this.store.index.invalidFiles().length
      this.invalid.set(invalid)
      this.setCondition('Ready', 'True', invalid ? 'AppliedWithInvalidFiles' : 'Applied', invalid ? `${invalid} invalid file(s); see invalidFiles` : 'every file of the applied revision is valid')
    } catch (err) {
      outcome = 'failed'
      if (err instanceof RemoteError && err.kind === 'auth') {
        this.backoffUntil = Date.now() + AUTH_BACKOFF_MS[Math.min(this.authFailures, AUTH_BACKOFF_MS.length - 1)]!
        this.authFailures++
        this.setCondition('Stalled', 'True', 'AuthenticationFailed', err.message)
        this.setCondition('Ready', 'False', 'AuthenticationFailed', 'serving the last applied revision')
      } else if (err instanceof RemoteError) {
        this.setCondition('Ready', 'False', 'RemoteUnreachable', `${err.message}; serving the last applied revision`)
      } else {
        this.logger.error({ err }, 'reconcile failed')
        this.setCondition('Ready', 'False', 'ReconcileFailed', 'the last run failed; serving the last applied revision')
      }
      if (err instanceof RemoteError) this.logger.warn({ reason: err.kind, msg: err.message }, 'reconcile could not reach the remote')
    } finally {
      this.setCondition('Reconciling', 'False', 'Idle', 'no run in progress')
      const durationMs = Date.now() - started
      this.lastRun = { startedAt: new Date(started).toISOString(), durationMs, filesChanged, outcome }
      this.runs.inc({ outcome })
      this.durations.observe(durationMs / 1000)
    }
  }

  async reconcile(opts: { allowMassDelete: boolean }): Promise<unknown> {
    if (opts.allowMassDelete) this.store.follower.allowMassDelete(this.store.stalled?.revision ?? (await this.store.repo.head()))
    this.backoffUntil = 0
    await this.trigger()
    return this.status()
  }

  status(): unknown {
    const remote = this.store.remote
    return {
      conditions: this.conditions,
      lastAppliedRevision: this.store.index.revision,
      lastAttemptedRevision: this.lastAttempted ?? this.store.index.revision,
      lastRun: this.lastRun,
      invalidFiles: this.store.index.invalidFiles().map((f) => ({
        path: f.path,
        ruleId: f.ruleId ?? null,
        errors: f.errors.map((e) => ({ message: e.message, line: e.line ?? null, column: e.column ?? null })),
      })),
      staleRules: [...this.store.index.rules.values()].filter((r) => r.stale).map((r) => ({ id: r.id, path: r.path })),
      remote: remote ? { url: remote.displayUrl, branch: remote.branch, reachable: remote.reachable ?? false, ...(remote.lastError ? { error: remote.lastError.message } : {}) } : null,
    }
  }
}
