// A chunk of records through the rules of a live index, for live detection and replay alike. The
// batch rules (Python) go first: each over the chunk's records of its log types in one call (one
// worker run per rule and chunk, the rules' runs side by side on the pool), awaited together. The
// caller's pass then takes the records in stored order and asks `of(rule, i, record)` for each
// rule: the batch result, or the in-process evaluator (e.g. a simple rule's) run on the spot, so
// grouping sees every rule's matches in the same order as before.
import type { Evaluation, LiveIndex, LiveRule } from './live-rules.js'

/** A record of a chunk: its log type, and the record itself (parsed when asked for). */
export interface ChunkRecord {
  readonly logType: string
  readonly record: Record<string, unknown>
  /** False for a damaged line: no rule sees it. */
  readonly readable: boolean
}

export interface RecordEvaluations {
  of(rule: LiveRule, i: number, record: Record<string, unknown>): Evaluation
  /** Batch rules that could not run at all on this chunk (each once; skipped at this revision from now on). */
  failed: Array<{ rule: LiveRule; error: string }>
}

const NO_MATCH: Evaluation = { matched: false }

const inProcess: RecordEvaluations = {
  of: (rule, _i, record) => (rule.evaluate ? rule.evaluate(record) : NO_MATCH),
  failed: [],
}

export async function evaluateRecords(
  live: LiveIndex,
  records: readonly ChunkRecord[],
  /** Replay: its client went away (the batch rules' runs are dropped). */
  signal?: AbortSignal,
): Promise<RecordEvaluations> {
  const waiting = live.batched.filter((r) => r.batch && r.failed === undefined)
  if (waiting.length === 0 || records.length === 0) return inProcess
  // The chunk's records by log type (in chunk order): rules of one log type share one array. Only
  // the log types of batch rules are looked at (a record is parsed only when a rule needs it).
  const wanted = new Set(waiting.flatMap((r) => r.meta.logTypes))
  const positions = new Map<string, number[]>()
  records.forEach((rec, i) => {
    if (!wanted.has(rec.logType) || !rec.readable) return
    const lt = rec.logType
    const list = positions.get(lt)
    if (list) list.push(i)
    else positions.set(lt, [i])
  })
  const shared = new Map<string, Record<string, unknown>[]>()
  const eventsOf = (lts: readonly string[]): { at: number[]; events: Record<string, unknown>[] } => {
    const present = lts.filter((lt) => positions.has(lt))
    const at = present.length === 1 ? positions.get(present[0]!)! : present.flatMap((lt) => positions.get(lt)!)
    if (present.length > 1) at.sort((a, b) => a - b)
    const key = present.join('\u0000')
    let events = shared.get(key)
    if (!events) shared.set(key, (events = at.map((i) => records[i]!.record)))
    return { at, events }
  }
  const results = new Map<LiveRule, Evaluation[]>()
  const failed: RecordEvaluations['failed'] = []
  await Promise.all(
    waiting.map(async (rule) => {
      const { at, events } = eventsOf(rule.meta.logTypes)
      if (events.length === 0) return
      let out: Evaluation[] | { error: string }
      try {
        out = await rule.batch!(events, signal)
      } catch (err) {
        out = { error: err instanceof Error ? err.message : String(err) }
      }
      if (!Array.isArray(out)) {
        if (rule.batch) rule.failed = out.error
        failed.push({ rule, error: out.error })
        return
      }
      const byRecord = new Array<Evaluation>(records.length)
      at.forEach((i, k) => {
        byRecord[i] = out[k] ?? { error: 'the rule reported nothing for this record' }
      })
      results.set(rule, byRecord)
    }),
  )
  failed.sort((a, b) => (a.rule.meta.id < b.rule.meta.id ? -1 : 1))
  return {
    of: (rule, i, record) => (rule.evaluate ? rule.evaluate(record) : (results.get(rule)?.[i] ?? NO_MATCH)),
    failed,
  }
}
