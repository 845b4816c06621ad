// The `live` member of the rule-engine interface: how an engine's rules evaluate stored records in
// detection. A rule compiles either to an in-process evaluator (one record at a time, like simple
// rules), optionally with what a rule worker needs to build the same evaluator on its own thread
// and the conditions every match meets (a prefilter), or to a batch evaluator (whole chunks, like
// Python streaming rules on the sandboxed pool). The member itself is `RuleEngine.live` (engine.ts);
// detection (detect/) knows only these types.

/** The longest dedup string a match keeps (longer ones are cut to it). */
export const MAX_DEDUP = 1000

/** What a match contributes to its alert. */
export interface MatchFields {
  title: string
  dedup: string
  severity: string
  alertContext: Record<string, unknown>
  /** A Python rule's description()/reference()/runbook(), over the rule's own fields when set. */
  description?: string
  reference?: string
  runbook?: string
}

/**
 * One rule on one record: no match, a match with its alert fields, or a rule error.
 * `destinations`: what a Python rule's destinations() returned (undefined: no such function);
 * `errors`: alert functions that raised on a match (the match stands, with Panther's fallbacks).
 */
export type Evaluation =
  | { matched: false }
  | ({ matched: true } & MatchFields & { destinations?: unknown; errors?: string[] })
  | { error: string }

export type LiveEvaluator = (event: unknown) => Evaluation

/**
 * Many records at once (Python: one worker run per rule and batch): one Evaluation per record, in
 * order, or why the rule cannot run at all (then it is not run again at this revision).
 */
export type BatchEvaluator = (
  events: readonly Record<string, unknown>[],
  signal?: AbortSignal,
  /** Called when the results may be long in coming (the rule runs apart: live detection need not wait). */
  onLate?: () => void,
) => Promise<Evaluation[] | { error: string }>

export type Scalar = string | number | boolean

/**
 * A condition every match of a rule meets: the value at one key (or, for a list value, one of its
 * elements) is among `values`. A rule left out of a record this way would have answered "no match"
 * without an error, so a prefilter (detect/rule-prefilter.ts) may skip it.
 */
export interface Requirement {
  /** The key's identity: two requirements with the same `key` resolve the same value. */
  key: string
  /** Builds the key's resolver (a prefilter builds it once, for the key it files the rule under). */
  resolver(): (record: unknown) => unknown
  values: readonly Scalar[]
}

/**
 * What a rule worker needs to build an in-process evaluator on its own thread: the module that
 * builds it (its URL; it exports `compileOnWorker`, a WorkerCompile) and the data it builds from
 * (structured-cloneable, e.g. the rule's file data). The worker's evaluator answers as this one does.
 */
export interface Offload {
  module: string
  data: Readonly<Record<string, unknown>>
}

/** An in-process evaluator, with the conditions its matches meet when the engine knows them. */
export interface InProcessRule {
  evaluate: LiveEvaluator
  requires?: readonly Requirement[]
}

/** The export `compileOnWorker` of an Offload's module: the same evaluator from the offloaded data. */
export type WorkerCompile = (data: Readonly<Record<string, unknown>>) => InProcessRule | { error: string }

/**
 * A batch's answers other than "no match" (every other record of the batch did not match): `at`
 * are positions into the batch's records, increasing, `answers` their matches and errors.
 */
export interface BatchHits {
  at: number[]
  answers: Evaluation[]
}

/**
 * A batch's records as their stored JSON text (detection's stored log), sent to a rule's process as
 * they are: `lines[k]` is one JSON object (checked: detect/stored-lines.ts) or, for a line that
 * could not be checked cheaply, its record serialized again. `record(k)` parses one when asked for.
 */
export interface StoredLines {
  readonly length: number
  readonly lines: readonly string[]
  record(k: number): Record<string, unknown>
  /** False for a damaged line (not a JSON object): no rule evaluates it. */
  readable(k: number): boolean
}

/** The records of a batch: parsed, or as stored lines. */
export type BatchRecords = readonly Record<string, unknown>[] | StoredLines

/** Record `k` of a batch. */
export function recordAt(records: BatchRecords, k: number): Record<string, unknown> {
  return 'lines' in records ? records.record(k) : records[k]!
}

/** The same batch evaluation answering only its hits (detection passes nothing for the rest). */
export type BatchHitsEvaluator = (
  events: BatchRecords,
  signal?: AbortSignal,
  onLate?: () => void,
) => Promise<BatchHits | { error: string }>

/** One rule compiled for detection, or why it cannot run. */
export type LiveCompiled =
  | (InProcessRule & { offload?: Offload })
  | { batch: BatchEvaluator; hits?: BatchHitsEvaluator }
  | { error: string }
