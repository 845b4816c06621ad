// The reconciler for the embedded repository (no remote): on a schedule, on POST /reconcile and at
// start it catches the index up with commits pushed into the local repository with plain git, and
// it alone decides the status conditions. Runs never overlap; a trigger during a run queues one more.
import cron from 'node-cron'
import type { Logger } from '../log.js'
import { Counter, Histogram, type Registry } from '../metrics.js'
import type { RuleStore } from '../service/rule-store.js'

export interface Condition {
  type: 'Ready' | 'Reconciling' | 'Stalled'
  status: 'True' | 'False'
  reason: string
  message: string
  lastTransitionTime: string
}

export class LocalReconciler {
  private lastRun: { startedAt: string; durationMs: number; filesChanged: number; outcome: string } | null = null
  private lastAttempted: string | null = null
  private running: Promise<void> | null = null
  private again = false
  private conditions: Condition[]
  private task: { stop(): void } | null = null
  private readonly runs: Counter
  private readonly durations: Histogram
  private failure: string | null = null

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
  }

  start(schedule: string): void {
    this.task = cron.schedule(schedule, () => void this.trigger().catch(() => {}))
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
    this.setCondition('Reconciling', 'True', 'Running', 'reading the branch')
    let outcome = 'unchanged'
    let filesChanged = 0
    try {
      this.lastAttempted = await this.store.repo.head()
      if (this.lastAttempted !== before && before && this.lastAttempted) filesChanged = (await this.store.repo.diff(before, this.lastAttempted)).length
      await this.store.syncToTip()
      if (this.store.index.revision !== before) outcome = 'applied'
      this.failure = null
      const invalid = this.store.index.invalidFiles().length
      this.setCondition('Ready', 'True', invalid ? 'AppliedWithInvalidFiles' : 'Applied', invalid ? `${invalid} invalid file(s); see invalidFiles` : 'every file is valid')
    } catch (err) {
      outcome = 'failed'
      this.failure = (err as Error).message
      this.logger.error({ err }, 'reconcile failed')
      this.setCondition('Ready', 'False', 'ReconcileFailed', 'the last run failed; serving the last applied revision')
    } finally {
      this.setCondition('Reconciling', 'False', 'Idle', 'no run in progress')
      const durationMs = Date.now() - started
      this.lastRun = { startedAt: new Date(started).toISOString(), durationMs, filesChanged, outcome }
      this.runs.inc({ outcome })
      this.durations.observe(durationMs / 1000)
    }
  }

  async reconcile(_opts: { allowMassDelete: boolean }): Promise<unknown> {
    await this.trigger()
    return this.status()
  }

  status(): unknown {
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
      remote: null,
      ...(this.failure ? { error: this.failure } : {}),
    }
  }
}
