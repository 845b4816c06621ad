// The reconciler, shaped like Flux's source-controller: on a schedule (node-cron), on POST
// /reconcile, on the push webhook and at start, a run goes through an ordered list of steps —
// fetch (the remote's tip, or the local branch's in embedded mode), follow (the follower diffs the
// tree once, re-reads the changed files and applies the revision unless the mass-deletion guard
// holds it back) — each returning an outcome kind (outcome.ts); the first that needs a person or a
// retry ends the run. Then, always, the steps' outcomes are folded into the run's (runOutcome) and
// summarize (summarize.ts) alone turns it into the status conditions. Runs never overlap; a trigger
// during a run queues exactly one more. /status also reports the served revision's usage against the
// repository's limits (a pushed revision over them is served, and said to be over, by how much), and
// its invalid files: the first ones and their count, the rest paged (invalid-files.ts).
import cron from 'node-cron'
import type { Logger } from '../log.js'
import { Counter, Histogram, type Registry } from '../metrics.js'
import type { RuleIndex } from '../rules/rule-index.js'
import type { RuleCatalog } from '../service/catalog.js'
import { accountFiles, accountFilesInTurns, countFiles, type AccountedProblem } from '../rules/file-accounting.js'
import type { RevisionFollower } from '../service/follower.js'
import {
  DEFAULT_BOUNDS,
  quotaExcess,
  usageOf,
  type QuotaExcess,
  type RepositoryBounds,
} from '../rules/repository-bounds.js'
import {
  invalidFilesAfter,
  STATUS_INVALID_FILES,
  type InvalidFileEntry,
  type InvalidFilesPosition,
} from './invalid-files.js'
import { outcomeOfError, runLabel, runOutcome, stopsTheRun, type StepOutcome } from './outcome.js'
import { Conditions } from './summarize.js'

export interface ReconcilerDeps {
  catalog: Pick<RuleCatalog, 'index' | 'exclusive'>
  /** The follower, and through it the remote it follows (none in embedded mode). */
  follower: Pick<RevisionFollower, 'pullRemote' | 'syncToTip' | 'stalled' | 'allowMassDelete' | 'head' | 'remote'>
  /** The repository's limits /status measures the served revision against (none: the defaults). */
  bounds?: RepositoryBounds
}

/** What the steps of one run learn and pass on. */
interface Run {
  /** Files changed between the published revision and the one followed. */
  filesChanged: number
}

type Step = (run: Run) => Promise<StepOutcome>

/** The part of /status that depends on the published revision only. */
interface RevisionView {
  index: RuleIndex
  revision: string | null
  /** Every invalid file, sorted by path (byte order): built once per revision, sliced per request. */
  invalidFiles: InvalidFileEntry[]
  /** Valid files whose Python imports a module the interpreter lacks, or could not be checked. */
  notRunFiles: Array<{
    path: string
    ruleId: string | null
    status: 'not-run' | 'unchecked'
    problem: AccountedProblem
  }>
  staleRules: Array<{ id: string; path: string }>
  files: ReturnType<typeof countFiles>
  quota: {
    repositoryBytes: { used: number; limit: number }
    rules: { used: number; limit: number }
    /** The limits the revision is over, by how much (empty within them). */
    over: QuotaExcess[]
  }
}

/** After an authentication failure scheduled runs back off (a person must fix the credentials). */
const AUTH_BACKOFF_MS = [30_000, 60_000, 120_000, 300_000, 600_000]

export class Reconciler {
  private lastRun: { startedAt: string; durationMs: number; filesChanged: number; outcome: string } | null = null
  private lastAttempted: string | null = null
  private lastView: RevisionView | null = null
  private running: Promise<void> | null = null
  private again = false
  private readonly conditions = new Conditions()
  private task: { stop(): void } | null = null
  private authFailures = 0
  private backoffUntil = 0
  private readonly runs: Counter
  private readonly durations: Histogram
  /** The steps of a run, in order. */
  private readonly steps: Step[] = [() => this.fetch(), (run) => this.follow(run)]

  constructor(
    private readonly deps: ReconcilerDeps,
    private readonly logger: Logger,
    registry: Registry,
  ) {
    this.runs = new Counter({
      name: 'rulekeeper_reconcile_runs_total',
      help: 'Reconcile runs',
      labelNames: ['outcome'],
      registers: [registry],
    })
    this.durations = new Histogram({
      name: 'rulekeeper_reconcile_duration_seconds',
      help: 'Reconcile run duration',
      registers: [registry],
    })
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

  /**
   * Step 1: fetch the remote and move the local branch to its tip (embedded mode: read the branch).
   * `applied` when that tip is a revision the index does not serve yet (nothing fetched: `unchanged`).
   */
  private async fetch(): Promise<StepOutcome> {
    const { tip } = await this.deps.follower.pullRemote()
    this.authFailures = 0
    this.lastAttempted = tip
    return tip === null || tip === this.deps.catalog.index.revision ? { kind: 'unchanged' } : { kind: 'applied' }
  }

  /** Step 2: bring the index to the branch tip, serialized with write batches (one change of the index at a time). */
  private async follow(run: Run): Promise<StepOutcome> {
    // Python files no sandbox could check before are checked again by a reconcile (not by writes).
    const synced = await this.deps.catalog.exclusive(() => this.deps.follower.syncToTip({ retryUncheckedPython: true }))
    if (synced.kind === 'unchanged') return synced
    run.filesChanged = synced.filesChanged
    if (synced.kind === 'held') return { kind: 'needs-person', reason: 'MassDeletion', message: synced.stalled.reason }
    if (synced.kind === 'unverified')
      return {
        kind: 'needs-person',
        reason: 'UnverifiedRevision',
        message: `revision ${synced.revision}: ${synced.reason}`,
      }
    return { kind: 'applied' }
  }

  /** Where the next scheduled run stands: refused credentials back off, anything else runs on schedule. */
  private requeue(outcome: StepOutcome): void {
    if (outcome.kind !== 'needs-person' || outcome.reason !== 'AuthenticationFailed') return
    this.backoffUntil = Date.now() + AUTH_BACKOFF_MS[Math.min(this.authFailures, AUTH_BACKOFF_MS.length - 1)]!
    this.authFailures++
  }

  private async runOnce(): Promise<void> {
    const started = Date.now()
    const run: Run = { filesChanged: 0 }
    this.conditions.begin(this.deps.follower.remote ? 'fetching the remote' : 'reading the branch')
    const outcomes: StepOutcome[] = []
    try {
      for (const step of this.steps) {
        const o = await step(run).catch((err: unknown) => outcomeOfError(err, this.logger))
        outcomes.push(o)
        if (stopsTheRun(o)) break
      }
      this.requeue(runOutcome(outcomes))
    } finally {
      // Summarize, whatever happened: the only place the conditions are set from a run.
      const outcome = runOutcome(outcomes)
      // The revision's accounting, built with the event loop given back (memoized for the view).
      await accountFilesInTurns(this.deps.catalog.index)
      // (rulekeeper_invalid_files is read from the published index at scrape time: metrics.ts.)
      const view = this.revisionView(this.deps.catalog.index)
      this.conditions.summarize(outcome, view.invalidFiles.length, view.notRunFiles.length)
      const durationMs = Date.now() - started
      const label = runLabel(outcome)
      this.lastRun = {
        startedAt: new Date(started).toISOString(),
        durationMs,
        filesChanged: run.filesChanged,
        outcome: label,
      }
      this.runs.inc({ outcome: label })
      this.durations.observe(durationMs / 1000)
    }
  }

  async reconcile(opts: { allowMassDelete: boolean }): Promise<ReturnType<Reconciler['status']>> {
    const { follower } = this.deps
    if (opts.allowMassDelete) follower.allowMassDelete(follower.stalled?.revision ?? (await follower.head()))
    this.backoffUntil = 0
    await this.trigger()
    return this.status()
  }

  /** What /status says of the published revision, computed once per revision rather than per request. */
  private revisionView(index: RuleIndex): RevisionView {
    const last = this.lastView
    if (last && last.index === index && last.revision === index.revision) return last
    const accounts = accountFiles(index)
    const bounds = this.deps.bounds ?? DEFAULT_BOUNDS
    const usage = usageOf(index.files.values(), index.rules.size)
    const over = quotaExcess(usage, bounds)
    if (over.length > 0)
      this.logger.warn({ revision: index.revision, over: over.map((o) => o.message) }, 'the revision is over quota')
    const view: RevisionView = {
      index,
      revision: index.revision,
      // The accounting's invalid files: the index's own list (same order, same problems), not built twice.
      invalidFiles: accounts.flatMap((a) =>
        a.status === 'invalid' ? [{ path: a.path, ruleId: a.id, errors: a.problems }] : [],
      ),
      notRunFiles: accounts.flatMap((a) =>
        a.python ? [{ path: a.path, ruleId: a.id, status: a.python.status, problem: a.python.problem }] : [],
      ),
      staleRules: [...index.rules.values()].filter((r) => r.stale).map((r) => ({ id: r.id, path: r.path })),
      // Every YAML file of the revision accounted for, counted as `rulekeeper validate` counts them.
      files: countFiles(accounts),
      quota: {
        repositoryBytes: { used: usage.bytes, limit: bounds.maxRepositoryBytes },
        rules: { used: usage.rules, limit: bounds.maxRules },
        over,
      },
    }
    this.lastView = view
    return view
  }

  /**
   * The invalid files of the served revision after `after` (null: from the first), at most `limit`,
   * bounded (invalid-files.ts); `next` when others follow.
   */
  invalidFiles(
    after: InvalidFilesPosition | null,
    limit: number,
  ): { results: InvalidFileEntry[]; next: InvalidFilesPosition | null } {
    return invalidFilesAfter(this.revisionView(this.deps.catalog.index).invalidFiles, after, limit)
  }

  /**
   * /status's reconciler part; of the invalid files the first STATUS_INVALID_FILES, their count and
   * where the rest begin (the API makes that position its cursor).
   */
  status() {
    const { remote } = this.deps.follower
    const index = this.deps.catalog.index
    const { invalidFiles: all, notRunFiles, staleRules, files, quota } = this.revisionView(index)
    const first = invalidFilesAfter(all, null, STATUS_INVALID_FILES)
    return {
      conditions: this.conditions.list,
      lastAppliedRevision: index.revision,
      lastAttemptedRevision: this.lastAttempted ?? index.revision,
      lastRun: this.lastRun,
      files,
      invalidFiles: first.results,
      invalidFileCount: all.length,
      invalidFilesNext: first.next,
      notRunFiles,
      staleRules,
      quota,
      remote: remote
        ? {
            url: remote.displayUrl,
            branch: remote.branch,
            reachable: remote.reachable ?? false,
            ...(remote.lastError ? { error: remote.lastError.message } : {}),
          }
        : null,
    }
  }
}
