// What a plan answers (POST /plans, `rulekeeper plan`): for a change from one revision to another,
// the files and rules it adds, changes and removes, the files it leaves invalid, the unit tests of
// every changed rule and of the rules depending on what changed, the references it breaks, and a
// backtest: the changed rules, as they were and as they would be, over the last days of stored events.

export interface PlanProblem {
  message: string
  line?: number
  column?: number
}

export interface PlanRule {
  id: string
  kind: string
  path: string
}

export interface AffectedRule extends PlanRule {
  /** Why its tests run again though its file did not change. */
  because: string
}

export interface PlanTest {
  ruleId: string
  kind: string
  /** true: every test passed; false: one failed; null: none could run (no engine, no sandbox). */
  passed: boolean | null
  results: Array<{ name: string; passed: boolean | null; error?: string }>
}

export interface BacktestCounts {
  matches: number
  alerts: number
  errors: number
}

export interface BacktestRule {
  ruleId: string
  /** Its counts as the base revision has it (null: the rule is new). */
  base: BacktestCounts | null
  /** Its counts as the head revision has it (null: the rule is removed or cannot run here). */
  head: BacktestCounts | null
  /** A few of the alerts each version would raise (title, dedup, severity, events, first event). */
  samples: { base: Array<Record<string, unknown>>; head: Array<Record<string, unknown>> }
}

export interface Backtest {
  from: string
  to: string
  /** Stored records read by each side. */
  records: number
  rules: BacktestRule[]
  /** Why it did not run (nothing to replay, or a limit): the rest of the plan stands. */
  skipped?: string
}

export interface Plan {
  id: string
  createdAt: string
  /** The base as asked (resolved to its commit). */
  base: string
  /**
   * The commit the head is compared with: the merge base of `base` and `head` (`base` itself when it
   * is an ancestor of the head, or when the two share no history).
   */
  mergeBase: string
  head: string
  /** fail: an invalid file, a failed test or a broken reference; else pass. */
  status: 'pass' | 'fail'
  summary: string
  files: {
    added: string[]
    changed: string[]
    removed: string[]
    invalid: Array<{ path: string; ruleId?: string; errors: PlanProblem[] }>
  }
  rules: { added: PlanRule[]; changed: PlanRule[]; removed: PlanRule[]; affected: AffectedRule[] }
  tests: PlanTest[]
  brokenReferences: Array<{ ruleId: string; message: string }>
  backtest: Backtest
}
