// The status conditions (Ready / Reconciling / Stalled, as Flux names them) and the one place that
// sets them: `begin` when a run starts, `summarize` when it ends, from the run's outcome. No step of
// the reconciler touches a condition.
import { readTheIndex, type StepOutcome } from './outcome.js'

export interface Condition {
  type: 'Ready' | 'Reconciling' | 'Stalled'
  status: 'True' | 'False'
  reason: string
  message: string
  lastTransitionTime: string
}

export class Conditions {
  readonly list: Condition[]

  constructor() {
    const now = new Date().toISOString()
    this.list = [
      {
        type: 'Ready',
        status: 'True',
        reason: 'Loaded',
        message: 'the index of the current revision is loaded',
        lastTransitionTime: now,
      },
      { type: 'Reconciling', status: 'False', reason: 'Idle', message: 'no run in progress', lastTransitionTime: now },
      { type: 'Stalled', status: 'False', reason: 'None', message: 'nothing needs a person', lastTransitionTime: now },
    ]
  }

  private set(type: Condition['type'], status: Condition['status'], reason: string, message: string): void {
    const c = this.list.find((x) => x.type === type)!
    if (c.status !== status || c.reason !== reason) c.lastTransitionTime = new Date().toISOString()
    Object.assign(c, { status, reason, message })
  }

  /** A run started. */
  begin(message: string): void {
    this.set('Reconciling', 'True', 'Running', message)
  }

  /**
   * A run ended with `outcome`; `invalidFiles` counts the invalid files of the revision served,
   * `notRunFiles` its valid files whose Python cannot run here or could not be checked.
   * A remote that could not be reached leaves Stalled as it was (refused credentials stay refused).
   */
  summarize(outcome: StepOutcome, invalidFiles: number, notRunFiles = 0): void {
    if (outcome.kind === 'needs-person' && outcome.reason === 'AuthenticationFailed') {
      this.set('Stalled', 'True', 'AuthenticationFailed', outcome.message)
      this.set('Ready', 'False', 'AuthenticationFailed', 'serving the last applied revision')
    } else if (outcome.kind === 'needs-person' && outcome.reason === 'UnverifiedRevision') {
      this.set('Stalled', 'True', 'UnverifiedRevision', `${outcome.message}; push a commit signed by an allowed key`)
      this.set('Ready', 'False', 'UnverifiedRevision', 'serving the last verified revision')
    } else if (outcome.kind === 'needs-person') {
      this.set(
        'Stalled',
        'True',
        'MassDeletion',
        `${outcome.message}; confirm with POST /reconcile?allow-mass-delete=true`,
      )
    } else if (outcome.kind === 'retry-later') {
      if (outcome.reason === 'RemoteUnreachable')
        this.set('Ready', 'False', 'RemoteUnreachable', `${outcome.message}; serving the last applied revision`)
      else this.set('Ready', 'False', 'ReconcileFailed', 'the last run failed; serving the last applied revision')
    } else {
      this.set('Stalled', 'False', 'None', 'nothing needs a person')
    }
    // A revision held back is not served; the one that is serves fine (or with invalid files).
    if (readTheIndex(outcome)) {
      const notRun = notRunFiles
        ? `${notRunFiles} file(s) whose Python cannot run here or was not checked; see notRunFiles`
        : ''
      this.set(
        'Ready',
        'True',
        invalidFiles ? 'AppliedWithInvalidFiles' : notRunFiles ? 'AppliedWithFilesNotRun' : 'Applied',
        invalidFiles
          ? `${invalidFiles} invalid file(s); see invalidFiles${notRun ? `; ${notRun}` : ''}`
          : notRun || 'every file of the applied revision is valid',
      )
    }
    this.set('Reconciling', 'False', 'Idle', 'no run in progress')
  }
}
