// The plans of this service (api/plan-routes.ts `Plans`): the base and head resolved in the rules
// repository (a 400 when it lacks one), one plan made at a time (a plan runs tests and replays: a
// second waits, more than a few waiting is a 503), each stored (plan-store.ts) and read by id; and
// the pull-request checks over them (createPlanParts).
import path from 'node:path'
import { RulekeeperError, validationFailed } from '../errors.js'
import type { GitRemote } from '../git/remote.js'
import type { Logger } from '../log.js'
import { PullRequestChecks } from './pull-request-checks.js'
import { makePlan, type PlanDeps } from './make-plan.js'
import type { PlanSettings } from './config.js'
import type { Plan } from './plan.js'
import { newPlanId, PlanStore } from './plan-store.js'

/** Plans waiting for the one being made; one more is a 503. */
const MAX_WAITING = 4

export function createPlans(deps: PlanDeps & { dataDir: string; settings: PlanSettings }) {
  const store = new PlanStore(path.join(deps.dataDir, 'plans'))
  let chain: Promise<unknown> = Promise.resolve()
  let waiting = 0
  return {
    maxBacktestDays: deps.settings.maxBacktestDays,
    defaultBacktestDays: deps.settings.backtestDays,
    get: (id: string) => store.get(id),
    async make(req: { base: string; head: string; backtestDays: number; signal?: AbortSignal }): Promise<Plan> {
      const [base, head] = await Promise.all([deps.repo.resolveRevision(req.base), deps.repo.resolveRevision(req.head)])
      const errors: Array<{ path: string; message: string }> = []
      if (!base) errors.push({ path: '/base', message: `no commit or branch ${req.base} in the rules repository` })
      if (!head) errors.push({ path: '/head', message: `no commit or branch ${req.head} in the rules repository` })
      if (errors.length) throw validationFailed(errors)
      if (waiting >= MAX_WAITING)
        throw new RulekeeperError(
          'Unavailable',
          'too many plans are being made; try again shortly',
          {},
          { 'Retry-After': '5' },
        )
      waiting++
      const run = chain.then(async () => {
        waiting--
        const plan = await makePlan(deps, {
          id: newPlanId(),
          base: base!,
          head: head!,
          backtestDays: req.backtestDays,
          nowMs: Date.now(),
          content: true,
          signal: req.signal,
        })
        await store.save(plan)
        return plan
      })
      chain = run.catch(() => undefined)
      return run
    },
  }
}

/** The plans and the pull-request checks over them, as main.ts serves them. */
export function createPlanParts(
  deps: PlanDeps & {
    dataDir: string
    settings: PlanSettings
    /** The served branch, the remote pull requests are fetched from, the forge token, the log. */
    branch: string
    remote: GitRemote | undefined
    forgeToken: string | undefined
    logger: Logger
  },
) {
  const plans = createPlans(deps)
  const { remote, settings } = deps
  const pullRequests = new PullRequestChecks({
    branch: deps.branch,
    fetchRef: remote ? (source, target) => remote.fetchRef(source, target) : null,
    plans,
    forge: settings.checks,
    token: deps.forgeToken,
    linkUrl: settings.checks?.linkUrl ?? null,
    forks: settings.checks?.forks ?? false,
    logger: deps.logger,
  })
  return { plans, pullRequests }
}
