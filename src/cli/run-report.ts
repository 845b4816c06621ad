// The report of a `rulekeeper test` / `validate` run (detections.md §5): the shape `--json` prints
// and the human rendering (report-human.ts) reads.
import type { FileAccount } from '../rules/file-accounting.js'
import type { RuleKind } from '../rules/model.js'

export type Problem = { message: string; line: number | null; column: number | null; file?: string }

export interface RuleReport {
  id: string | null
  kind: RuleKind | null
  path: string
  valid: boolean
  errors: Problem[]
  warnings?: Problem[]
  /** `--minimum-tests`: why the rule's tests are not enough. */
  coverage?: string
  tests: Array<{
    name: string
    expected: boolean
    actual: boolean | null
    passed: boolean | null
    error: string | null
    warnings?: string[]
  }>
}

export interface RunSummary {
  files: number
  valid: number
  invalid: number
  unsupported: number
  /** Valid files whose Python imports a module the interpreter lacks (their tests cannot run here). */
  pythonNotRun: number
  /** Valid files whose Python could not be checked (no sandbox). */
  pythonUnchecked: number
  rules: number
  /** Rules whose module failed a check that runs code (validate: the Python module must import). */
  failedChecks: number
  insufficientTests: number
  tests: number
  passed: number
  failed: number
  notRun: number
}

export interface RunReport {
  summary: RunSummary
  files: FileAccount[]
  rules: RuleReport[]
  /** Why the run fails although nothing above failed: nothing to check, a filter selecting nothing. */
  error?: string
}
