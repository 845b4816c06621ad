// What a rule kind is: everything the service needs to know about it, in one object. Every place
// that used to branch on the kind name asks the kind instead (rules/kinds/index.ts looks it up).
// Pure data and tiny functions; imports nothing but types, so the registry has no import cycles.
import type { ExtraField, FieldSpec, TestStyle } from '../fields.js'

/** A list filter of a kind: `?param=a,b` keeps the rules whose view list `field` has any of them. */
interface ListFilter {
  /** The query parameter, e.g. `log-type`. */
  param: string
  /** The API field (a list of strings in the rule's view) it matches, e.g. `logTypes`. */
  field: string
  /** For the OpenAPI document. */
  description: string
}

/**
 * A file the rule has beside its YAML (the `.py` module of a scheduled rule): which file key names
 * it, which API field carries its text, and the module name engines see before the rule is written.
 * It lives in the YAML file's folder (rules/paths.ts `pythonPathFor`).
 */
interface CompanionFile {
  /** The file key naming the companion, e.g. `Filename`. Required in the file; must exist. */
  fileKey: string
  /** The API field with the companion's text, e.g. `body`; problems of the companion point at it. */
  apiField: string
  /** The name engines see for a rule not yet written (the writer picks the real one). */
  placeholder: string
  /** What the companion is called in messages, e.g. `Python file`. */
  noun: string
}

export interface RuleKindDef<N extends string = string> {
  /** The kind's name: the engine registry's key, the cursor's kind, messages (`a simple rule`). */
  readonly name: N
  /** The OpenAPI schema and operation stem, e.g. `SimpleRule`. */
  readonly title: string
  /** The API path segment, e.g. `simple-rules`. */
  readonly apiPath: string
  /** What people call the kind (the console's kind picker and list), e.g. `Simple`. */
  readonly label: string
  /**
   * The rule a new one of the kind starts from (`GET /kinds`, the console's New rule), as an API body:
   * valid, and its tests pass (test/api/kinds.test.ts creates each one).
   */
  readonly template: Readonly<Record<string, unknown>>
  /** The `AnalysisType` a file of this kind has (and new files get). */
  readonly analysisType: string
  /** Among files with that `AnalysisType`, whether this one is of the kind (default: all of them). */
  readonly isKind?: (data: Readonly<Record<string, unknown>>) => boolean
  /** The folder new rules of the kind go to (`<folder>/<group>/<file>.yml`). */
  readonly folder: string
  /** The field table: rules/fields.ts `ruleFields(own)`. */
  readonly fields: readonly FieldSpec[]
  /** API-only fields (written companion text, read-time derived fields, metadata). */
  readonly extraFields: readonly ExtraField[]
  /** File keys whose absence (or null) is reported as `<key> is required`. */
  readonly requiredFileKeys: readonly string[]
  /** The shape of its unit tests (item schema, defaults shown, result). */
  readonly tests: TestStyle
  readonly companion?: CompanionFile
  /** Filters its list route accepts beyond the common ones. */
  readonly listFilters: readonly ListFilter[]
  /** Whether `include-python` may return the rule as generated Python (`pythonBody`). */
  readonly pythonView: boolean
  /**
   * Loaders read the files under lower ranks first: a kind that refers to other rules (correlation)
   * ranks after the kinds it refers to, so it is checked against them.
   */
  readonly loadRank: number
  /** Backends on which its routes answer 501. */
  readonly unavailableOn: ReadonlyArray<'snowflake' | 'databricks'>
  /** What is missing when the build has no engine for it (501 messages, `notRun` reasons). */
  readonly missingEngine: string
  /**
   * Rules detection runs on their own schedule rather than per record (that is the engine's `live`
   * member): `signals`, over the stored matches of other rules (detect/correlation-schedule.ts).
   */
  readonly schedule?: 'signals'
  /** Its files are also support files other files name by id (a scheduled rule names its queries). */
  readonly supportFile?: boolean
}
