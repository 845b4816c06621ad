// Python streaming rules in detection, one-shot (alerts.md §1): a batch of records per sandboxed run,
// one rule per run, a marker per record. Detection runs rules on warm workers (warm-detect.ts); this
// path runs what is left of a rule's batch after the rule crashed its warm worker, and finds the
// record that crashes. InlineFilters apply first: records they reject are non-matches and never
// reach the worker. A record whose run was stopped (wall clock, crash, output limit) is an error of
// that record and the run resumes after it in a fresh sandbox; a rule that stops MAX_STOPS runs of
// one batch is not run on the rest of that batch (each such record gets an error saying so). Each
// run also has a wall clock for all its records together (RUN_MS_PER_RECORD each, plus MAX_STOPS
// timeouts, at most `runMsCap`). A module that does not import makes the whole batch one error.
import type { RuleFile } from '../../rules/model.js'
import type { BatchOutcome, EngineContext, FunctionOutcome, RecordOutcome } from '../engine.js'
import { jobDataModels } from './data-models.js'
import { collectGlobals } from './imports.js'
import { compileRuleFilters } from './inline-filters.js'
import { RUN_BUDGET_SPENT, type RunLimits, type TestRecord } from './protocol.js'
import { jobRule, moduleProblems } from './scheduled-engine.js'
import { abortReason } from './sandbox-run.js'
import type { WorkerPool } from './worker-pool.js'

/** Stopped runs of one rule within one batch before the rest of the batch is skipped for it. */
export const MAX_STOPS = 3
/** The wall clock a run may spend per record it is given (on top of MAX_STOPS × `timeoutMs`). */
export const RUN_MS_PER_RECORD = 10

// One JSON text per array of records: the detector hands every rule of a log type the same array.
const serialized = new WeakMap<readonly object[], string>()

export function eventsJson(events: readonly Record<string, unknown>[]): string {
  let text = serialized.get(events)
  if (text === undefined) serialized.set(events, (text = JSON.stringify(events)))
  return text
}

/** Why the rule cannot run at all, from the first record of a run (import, data model). */
function setupError(record: TestRecord | undefined): string | undefined {
  for (const e of record?.events ?? []) {
    if (e.t === 'import_error') return `the rule module failed to import: ${e.message}`
    if (e.t === 'missing_module')
      return `the rule module failed to import: module ${e.module} is not installed in the configured interpreter`
    if (e.t === 'data_model_error') return e.message
  }
  return undefined
}

function recordOutcome(record: TestRecord): RecordOutcome {
  if (record.status !== 'ok')
    return { error: `the Python run evaluating this record was stopped: ${record.message ?? record.status}` }
  for (const e of record.events) {
    if (e.t !== 'r') continue
    const detection = e.f.detection
    if (!detection || detection[1] !== null) return { error: detection?.[1] ?? 'rule() reported no result' }
    const functions: Record<string, FunctionOutcome> = {}
    for (const [name, [output, error]] of Object.entries(e.f)) functions[name] = { output, error }
    return { functions }
  }
  return null
}

/** A Python streaming rule over a batch of records; `signal`: replay's client went away. */
export type EvaluateBatch = (
  rule: RuleFile,
  ctx: EngineContext,
  events: readonly Record<string, unknown>[],
  signal?: AbortSignal,
  /** The most one run may take (a warm worker's crashed rule: what is left of its budget). */
  runMsCap?: number,
  /**
   * Called when the rule's run is moved to a worker of its own (it held a shared one past its share,
   * or did in an earlier batch): its results may be long in coming, the caller need not wait for them.
   */
  onLate?: () => void,
) => Promise<BatchOutcome>

export function createLiveDetection(pool: WorkerPool, limits: RunLimits): EvaluateBatch {
  return async (rule, ctx, events, signal, runMsCap) => {
    const missing = moduleProblems(rule)
    if (missing.length > 0) return { error: missing[0]!.message }
    const filters = compileRuleFilters(rule.data)
    if (filters.errors.length > 0) return { error: `InlineFilters are invalid: ${filters.errors[0]!.message}` }
    const results: RecordOutcome[] = new Array<RecordOutcome>(events.length).fill(null)
    const pass = filters.filtersPass
    let pending: number[] = []
    for (let i = 0; i < events.length; i++) if (!pass || pass(events[i])) pending.push(i)
    if (pending.length === 0) return { results }
    const job = jobRule(rule)
    const logTypes = job.logTypes ?? []
    const dataModels = jobDataModels(
      logTypes.map((logType) => ({ log: null, mocks: [], logType })),
      logTypes,
      ctx,
    )
    const globals = collectGlobals([job.source, ...dataModels.map((m) => m.source ?? '')].join('\n'), ctx)
    // Most rules take every record of the batch: they share one serialization. A rule whose filters
    // let through under half of them is sent just those (fewer bytes for its run to parse).
    let text: string
    // a job's event index → the batch's
    let toBatch = (k: number) => k
    if (pending.length * 2 < events.length) {
      const picked = pending
      text = JSON.stringify(picked.map((i) => events[i]))
      pending = picked.map((_, k) => k)
      toBatch = (k) => picked[k]!
    } else text = eventsJson(events)
    let stops = 0
    let lastStop = ''
    while (pending.length > 0) {
      let records: TestRecord[]
      try {
        records = await pool.run(
          {
            op: 'detect',
            rule: job,
            globals,
            dataModels,
            events: text,
            tests: pending,
            limits: {
              ...limits,
              cpuSeconds: limits.cpuSeconds * pending.length,
              runMs: Math.min(
                limits.timeoutMs * MAX_STOPS + RUN_MS_PER_RECORD * pending.length,
                runMsCap ?? Number.POSITIVE_INFINITY,
              ),
            },
          },
          { signal },
        )
      } catch (err) {
        if (err instanceof Error) return { error: `not evaluated: ${err.message}` }
        throw err
      }
      const setup = setupError(records[0])
      if (setup !== undefined) return { error: setup }
      for (const r of records) if (r.i < pending.length) results[toBatch(pending[r.i]!)] = recordOutcome(r)
      const last = records[records.length - 1]
      const reached = records.length
      if (reached === 0 || (last!.status === 'ok' && reached < pending.length)) {
        // The run ended without reporting on the rest (a runner that exits early): never loop on it.
        for (const i of pending.slice(reached))
          results[toBatch(i)] = { error: 'the Python worker reported nothing for this record' }
        break
      }
      pending = pending.slice(reached)
      if (signal?.aborted) return { error: `not evaluated: ${abortReason(signal)}` }
      if (last!.status !== 'ok') {
        stops++
        lastStop = last!.message ?? last!.status
        if (lastStop.startsWith(RUN_BUDGET_SPENT)) {
          for (const i of pending) results[toBatch(i)] = { error: `not evaluated: the rule's Python run ${lastStop}` }
          break
        }
        if (stops >= MAX_STOPS) {
          for (const i of pending)
            results[toBatch(i)] = {
              error: `not evaluated: the rule stopped its Python run ${stops} times in this batch (last: ${lastStop})`,
            }
          break
        }
      }
    }
    return { results }
  }
}
