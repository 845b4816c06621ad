// Pull-request checks: a forge's pull-request event (pull-request-event.ts) for the served branch
// has its head fetched from the remote (`refs/pull/N/head`, `refs/merge-requests/N/head`) into
// `refs/rulekeeper/pulls/N`, planned against the served branch (plans/index.ts), and reported as a
// commit status on the head (commit-status.ts): pending, then success or failure with the plan's
// summary and a link to it. One check at a time; a head already queued is not queued twice.
import type { Logger } from '../log.js'
import { RunQueue } from '../run-queue.js'
import { type ForgeSettings, postStatus } from './commit-status.js'
import type { Plan } from './plan.js'
import type { PullRequestEvent } from './pull-request-event.js'

export interface PullRequestCheckDeps {
  /** The served branch: only requests into it are planned. */
  branch: string
  /** Fetches a remote ref into a local one (null: no remote, nothing can be fetched). */
  fetchRef: ((source: string, target: string) => Promise<string | null>) | null
  plans: { make(req: { base: string; head: string; backtestDays: number }): Promise<Plan>; defaultBacktestDays: number }
  forge: ForgeSettings | null
  /** The forge token (RULEKEEPER_FORGE_TOKEN); never logged. */
  token: string | undefined
  /** Where plans are linked from a status: the console's plan page `${linkUrl}/#/plans/{id}` (null: no link). */
  linkUrl: string | null
  /**
   * Plan requests from forks too. Off by default: planning runs the head's rule code in the sandbox
   * and replays it over the stored events, and the status (alert counts) is public.
   */
  forks: boolean
  logger: Logger
}

export interface CheckOutcome {
  number: number
  headSha: string
  planId: string | null
  status: Plan['status'] | 'error'
  summary: string
  at: string
}

export class PullRequestChecks {
  private readonly queue = new RunQueue()
  /** The last outcomes, newest last (at most 50). */
  readonly outcomes: CheckOutcome[] = []

  constructor(private readonly deps: PullRequestCheckDeps) {}

  /** Takes an event; answers what was done with it (the webhook's message). */
  accept(ev: PullRequestEvent): string {
    const { deps } = this
    if (ev.baseBranch !== deps.branch)
      return `pull request #${ev.number} targets ${ev.baseBranch || 'another branch'}, not the served branch ${deps.branch}: not planned`
    if (ev.fromFork && !deps.forks)
      return `pull request #${ev.number} comes from another repository: not planned (plans.checks.forks is off)`
    if (!deps.fetchRef) return 'no remote is configured: a pull request head cannot be fetched'
    const key = `${ev.number}:${ev.headSha}`
    if (this.queue.has(key))
      return `a check of pull request #${ev.number} at ${ev.headSha.slice(0, 12)} is already queued`
    void this.queue.add(key, () => this.check(ev))
    return `check of pull request #${ev.number} at ${ev.headSha.slice(0, 12)} scheduled`
  }

  /** Resolves when every check queued so far is done (tests). */
  idle(): Promise<void> {
    return this.queue.idle()
  }

  private async report(ev: PullRequestEvent, state: Parameters<typeof postStatus>[3], text: string, plan?: Plan) {
    const { forge, token, linkUrl, logger } = this.deps
    if (!forge || !token) return
    const link = plan && linkUrl ? `${linkUrl.replace(/\/+$/, '')}/#/plans/${encodeURIComponent(plan.id)}` : null
    await postStatus(forge, token, ev, state, text, link).catch((err: unknown) =>
      logger.warn({ pullRequest: ev.number, err: (err as Error).message }, 'the commit status was not accepted'),
    )
  }

  private async check(ev: PullRequestEvent): Promise<void> {
    const { deps } = this
    const record = (o: Omit<CheckOutcome, 'number' | 'headSha' | 'at'>) => {
      this.outcomes.push({ number: ev.number, headSha: ev.headSha, at: new Date().toISOString(), ...o })
      if (this.outcomes.length > 50) this.outcomes.shift()
    }
    await this.report(ev, 'pending', 'rulekeeper is planning this change')
    try {
      const local = `refs/rulekeeper/pulls/${ev.number}`
      const tip = await deps.fetchRef!(ev.headRef, local)
      if (tip === null) throw new Error(`the remote has no ${ev.headRef}`)
      // A head pushed again meanwhile is the next event's to plan; this one plans the commit it names.
      const plan = await deps.plans.make({
        base: deps.branch,
        head: ev.headSha,
        backtestDays: deps.plans.defaultBacktestDays,
      })
      record({ planId: plan.id, status: plan.status, summary: plan.summary })
      deps.logger.info(
        { pullRequest: ev.number, head: ev.headSha, plan: plan.id, status: plan.status },
        'pull request planned',
      )
      await this.report(ev, plan.status === 'pass' ? 'success' : 'failure', plan.summary, plan)
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err)
      record({ planId: null, status: 'error', summary: message })
      deps.logger.warn({ pullRequest: ev.number, err: message }, 'pull request could not be planned')
      // The status is public: the reason stays in the service's log.
      await this.report(ev, 'error', 'rulekeeper could not plan this change; see its log')
    }
  }
}
