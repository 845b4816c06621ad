// The compiled form of a correlation rule's `Detection` block: what validation produces and what
// the test evaluator consumes. Compiling once per rule keeps the evaluator free of shape checks
// and of the YAML spelling (PascalCase keys, defaults).

export type BlockShape = 'Group' | 'Sequence'

/** One Group member or Sequence step. */
export interface CompiledStep {
  /** The `ID` tests refer to. */
  id: string
  ruleId: string
  /** Position in `CompiledDetection.steps` (a Sequence's in transition order, not list order). */
  index: number
  /** `MinMatchCount` (default 1). */
  minMatchCount: number
  /** `MaxMatchCount`, or null when unbounded. */
  maxMatchCount: number | null
  absent: boolean
  /** The fields this step joins on; empty = unjoined (its signals count for every join value). */
  joinFields: ReadonlySet<string>
}

export interface CompiledDetection {
  shape: BlockShape
  /** Group: the member list. Sequence: the steps in the order the transitions give (§5.2). */
  steps: CompiledStep[]
  /** `LookbackWindowMinutes` (default 15). */
  lookbackMinutes: number
  /** Group only: how many present members must be satisfied (default: all of them). */
  groupMinMatchCount: number
  /**
   * Sequence only: gapMinutes[i] is the `WithinTimeFrameMinutes` of the link from steps[i] to
   * steps[i + 1] (default: the lookback window). Length steps.length - 1.
   */
  gapMinutes: number[]
}

export const DEFAULT_LOOKBACK_MINUTES = 15
