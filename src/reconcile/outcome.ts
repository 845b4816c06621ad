// What one reconcile step did, as Flux's source-controller says it (internal/reconcile results and
// internal/error's Stalling / Waiting / Generic errors): nothing changed, a revision was applied,
// a person must act (retrying is futile until they do), or a retry later may succeed.
import type { Logger } from '../log.js'
import { RemoteError } from '../git/remote.js'

export type StepOutcome =
  | { kind: 'unchanged' }
  | { kind: 'applied' }
  /**
   * Retrying cannot help until a person acts (confirms a mass deletion, fixes the credentials,
   * pushes a revision signed by an allowed key).
   */
  | { kind: 'needs-person'; reason: 'MassDeletion' | 'AuthenticationFailed' | 'UnverifiedRevision'; message: string }
  /** The next scheduled run may succeed; the last applied revision keeps serving. */
  | { kind: 'retry-later'; reason: 'RemoteUnreachable' | 'ReconcileFailed'; message: string }

/** Whether the steps after this one run. */
export function stopsTheRun(o: StepOutcome): boolean {
  return o.kind === 'needs-person' || o.kind === 'retry-later'
}

/**
 * The run's outcome from the outcomes of its steps, as Flux folds its steps' results before the
 * deferred summarize: the one that ended the run, else `applied` when any step brought a new
 * revision (the fetch, even if a write batch published it before the follow step came), else
 * `unchanged` (also for a run with no step).
 */
export function runOutcome(steps: readonly StepOutcome[]): StepOutcome {
  const last = steps.at(-1)
  if (last && stopsTheRun(last)) return last
  return steps.some((o) => o.kind === 'applied') ? { kind: 'applied' } : { kind: 'unchanged' }
}

/** A step's failure as an outcome: refused credentials need a person, anything else is retried. */
export function outcomeOfError(err: unknown, logger: Logger): StepOutcome {
  if (err instanceof RemoteError) {
    logger.warn({ reason: err.kind, msg: err.message }, 'reconcile could not reach the remote')
    if (err.kind === 'auth') return { kind: 'needs-person', reason: 'AuthenticationFailed', message: err.message }
    return { kind: 'retry-later', reason: 'RemoteUnreachable', message: err.message }
  }
  logger.error({ err }, 'reconcile failed')
  return { kind: 'retry-later', reason: 'ReconcileFailed', message: (err as Error)?.message ?? String(err) }
}

/** Whether the run ended serving a revision it read (the index's state is then what Ready reports). */
export function readTheIndex(o: StepOutcome): boolean {
  return o.kind === 'unchanged' || o.kind === 'applied' || (o.kind === 'needs-person' && o.reason === 'MassDeletion')
}

/** The run's label in lastRun and in the rulekeeper_reconcile_runs_total metric. */
export function runLabel(o: StepOutcome): 'unchanged' | 'applied' | 'held' | 'failed' {
  if (o.kind === 'needs-person') return o.reason === 'AuthenticationFailed' ? 'failed' : 'held'
  return o.kind === 'retry-later' ? 'failed' : o.kind
}
