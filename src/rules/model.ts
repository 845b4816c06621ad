// The domain model shared by every layer: a rule as read from its file
// (file form: PascalCase keys, exactly the YAML structure), and the problems found in one.
// Pure types and tiny helpers; imports nothing from api/, git/, reconcile/ or ingest/.

// The kinds are defined in rules/kinds/ (one module each, one registry); the name type is theirs.
export type { RuleKind } from './kinds/index.js'
import type { RuleKind } from './kinds/index.js'

export { SEVERITIES, type Severity } from './severity.js'

/** A path inside a rule's file form, e.g. ['Detection', 0, 'Condition']. */
export type DataPath = ReadonlyArray<string | number>

export interface RuleProblem {
  /** Where in the file form the problem is ([] = the file as a whole). */
  path: DataPath
  message: string
  /** A stable tag for problems callers treat specially, e.g. 'DanglingReference'. */
  code?: string
  /** Set by the loader when the file's text is known. */
  line?: number
  column?: number
  /** The file `line` and `column` are in, when it is not the analysis file itself (its `.py`, a helper). */
  file?: string
  /** A position inside the string value at `path` (a line of a query's SQL); the loader places it in the file. */
  inValue?: { line: number; column?: number }
}

/**
 * One rule as the engines see it: the file form (PascalCase keys, plain JSON values, YAML 1.2
 * core schema), plus the Python source of a scheduled rule. Built from a file in the repository
 * or from an API body mapped to file form; engines never know which.
 */
export interface RuleFile {
  kind: RuleKind
  id: string
  /** Repository-relative path of the YAML file ('' for a rule not yet written). */
  path: string
  data: Readonly<Record<string, unknown>>
  /** Scheduled rules: the module named by `Filename`. */
  pythonSource?: string
  pythonPath?: string
}

/** An analysis file the repository holds that is not served as a rule but that rules may need. */
export interface SupportFile {
  analysisType: string
  path: string
  data: Readonly<Record<string, unknown>>
  /** `global` helpers and data models: the module source named by `Filename`, and its path. */
  pythonSource?: string
  pythonPath?: string
}
