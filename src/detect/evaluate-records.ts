// A chunk of records through the rules of a live index, for live detection and replay alike. The
// batch rules (Python) go first: each over the chunk's records of its log types in one call (one
// worker run per rule and chunk, the rules' runs side by side on the pool), awaited together. The
// caller's pass then takes the records in stored order and asks `of(rule, i, record)` for each
// rule: the batch result, or the in-process evaluator (e.g. a simple rule's) run on the spot, so
// grouping sees every rule's matches in the same order as before. Live detection may let a batch
// rule be late (its engine runs it apart, `onLate`, and the caller can hold its chunk): the
// evaluations then come without it, and its answers come later (`late`).
import type { BatchHits } from '../engine/live.js'
import type { Evaluation, LiveIndex, LiveRule } from './live-rules.js'
import { ChunkLines, plainObjectLine } from './stored-lines.js'

/** A record of a chunk: its log type, and the record itself (parsed when asked for). */
export interface ChunkRecord {
  readonly logType: string
  readonly record: Record<string, unknown>
  /** False for a damaged line: no rule sees it. */
  readonly readable: boolean
  /** The line as stored (a batch rule answering hits is given it as it is: stored-lines.ts). */
  readonly line?: string
}

export interface RecordEvaluations {
  of(rule: LiveRule, i: number, record: Record<string, unknown>): Evaluation
  /**
   * The batch rules' answers on record `i` other than "no match", in rule id order (the order of a
   * log type's rules), or none: every batch rule's answer there is "no match".
   */
  hitsAt?(i: number): ReadonlyArray<readonly [LiveRule, Evaluation]> | undefined
  /** Batch rules that could not run at all on this chunk (each once; skipped at this revision from now on). */
  failed: Array<{ rule: LiveRule; error: string }>
  /** Batch rules whose answers come later (their records get nothing from `of`). */
  late: LateEvaluation[]
  /** Batch rules that were given records of this chunk (late or not). */
  ran?: ReadonlySet<LiveRule>
  /** Whether a rule does not evaluate record `i` at all (a restart's catch-up of rules that were behind). */
  skips?: (rule: LiveRule, i: number) => boolean
}

/** A batch rule's answers on a chunk that come later. */
export interface LateEvaluation {
  rule: LiveRule
  /** The chunk positions of the records it evaluates, in order. */
  at: number[]
  /** Its answers, one per position of `at`, or why it could not run at all. */
  results: Promise<Evaluation[] | { error: string }>
}

/** Live detection's say over a chunk's evaluation. */
export interface ChunkTerms {
  /** Whether the chunk may go on without this rule's answers once its engine says they are late. */
  mayDefer?: (rule: LiveRule) => boolean
  /** Whether a rule still owes answers of earlier chunks: then it is late at once (when it may be). */
  owes?: (rule: LiveRule) => boolean
  /** Whether a rule evaluates record `i` (a restart's catch-up: only the rules that were behind). */
  applies?: (rule: LiveRule, i: number) => boolean
}

const NO_MATCH: Evaluation = { matched: false }

const inProcess: RecordEvaluations = {
  of: (rule, _i, record) => (rule.evaluate ? rule.evaluate(record) : NO_MATCH),
  failed: [],
  late: [],
}

type BatchAnswer = Evaluation[] | BatchHits | { error: string }

export async function evaluateRecords(
  live: LiveIndex,
  records: readonly ChunkRecord[],
  /** Replay: its client went away (the batch rules' runs are dropped). */
  signal?: AbortSignal,
  terms: ChunkTerms = {},
): Promise<RecordEvaluations> {
  const { applies, mayDefer, owes } = terms
  const skips = applies ? (rule: LiveRule, i: number) => !applies(rule, i) : undefined
  const waiting = live.batched.filter((r) => r.batch && r.failed === undefined)
  if (waiting.length === 0 || records.length === 0) return skips ? { ...inProcess, skips } : inProcess
  // The chunk's records by log type (in chunk order): rules of one log type share one array. Only
  // the log types of batch rules are looked at (a record is parsed only when a rule needs it).
  const wanted = new Set(waiting.flatMap((r) => r.meta.logTypes))
  const positions = new Map<string, number[]>()
  // Lines that go as stored without a parse here (stored-lines.ts); any other is parsed, and given
  // to no rule when damaged.
  const plain = new Uint8Array(records.length)
  records.forEach((rec, i) => {
    if (!wanted.has(rec.logType)) return
    if (rec.line !== undefined && plainObjectLine(rec.line)) plain[i] = 1
    else if (!rec.readable) return
    const lt = rec.logType
    const list = positions.get(lt)
    if (list) list.push(i)
    else positions.set(lt, [i])
  })
  // A batch rule answering hits gets the stored lines (stored-lines.ts), any other the parsed records.
  type RuleSet = { at: number[]; lines?: ChunkLines; events?: Record<string, unknown>[] }
  const shared = new Map<string, RuleSet>()
  const gated = new Map<LiveRule, RuleSet>()
  const eventsOf = (rule: LiveRule): RuleSet => {
    const asLines = rule.hits !== undefined
    const present = rule.meta.logTypes.filter((lt) => positions.has(lt))
    const at = present.length === 1 ? positions.get(present[0]!)! : present.flatMap((lt) => positions.get(lt)!)
    if (present.length > 1) at.sort((a, b) => a - b)
    const make = (at: number[]): RuleSet => {
      if (asLines) return { at, lines: new ChunkLines(records, at, plain) }
      const readable = at.filter((i) => records[i]!.readable) // a line that went unparsed may be damaged
      return { at: readable, events: readable.map((i) => records[i]!.record) }
    }
    if (applies) {
      let own = gated.get(rule)
      if (!own) gated.set(rule, (own = make(at.filter((i) => applies(rule, i)))))
      return own
    }
    const key = `${asLines ? 'lines' : 'records'}\u0000${present.join('\u0000')}`
    let set = shared.get(key)
    if (!set) shared.set(key, (set = make(at)))
    return set
  }
  const answers = new Map<LiveRule, BatchAnswer>()
  const running = new Map<LiveRule, Promise<BatchAnswer>>()
  const deferred = new Set<LiveRule>()
  const ran = new Set<LiveRule>()
  // Every rule answered, or late (deferred by its engine and allowed by the caller).
  await new Promise<void>((resolve) => {
    let open = waiting.length
    const settled = () => --open === 0 && resolve()
    if (open === 0) resolve()
    for (const rule of waiting) {
      if (eventsOf(rule).at.length === 0) {
        settled()
        continue
      }
      ran.add(rule)
      const onLate = mayDefer
        ? () => {
            if (deferred.has(rule) || answers.has(rule) || !mayDefer(rule)) return
            deferred.add(rule)
            settled()
          }
        : undefined
      // Its answers of earlier chunks are still to come: these go after them, never before.
      if (owes?.(rule)) onLate?.()
      const results = (async (): Promise<BatchAnswer> => {
        try {
          const set = eventsOf(rule)
          return await (rule.hits ? rule.hits(set.lines!, signal, onLate) : rule.batch!(set.events!, signal, onLate))
        } catch (err) {
          return { error: err instanceof Error ? err.message : String(err) }
        }
      })()
      running.set(rule, results)
      void results.then((out) => {
        if (deferred.has(rule)) return
        answers.set(rule, out)
        settled()
      })
    }
  })
  const late: LateEvaluation[] = [...deferred].map((rule) => {
    const { at } = eventsOf(rule)
    return {
      rule,
      at,
      results: running.get(rule)!.then((out) => (Array.isArray(out) || 'error' in out ? out : dense(out, at.length))),
    }
  })
  // Per record, the batch rules' matches and errors in rule id order (the pass's order): a record
  // no batch rule matched or raised on has none, and the pass asks no batch rule about it.
  const hits = new Array<Array<[LiveRule, Evaluation]> | undefined>(records.length)
  const add = (i: number, rule: LiveRule, answer: Evaluation) => {
    const list = hits[i]
    if (list) list.push([rule, answer])
    else hits[i] = [[rule, answer]]
  }
  const failed: RecordEvaluations['failed'] = []
  for (const [rule, out] of [...answers].sort(([a], [b]) => (a.meta.id < b.meta.id ? -1 : 1))) {
    if ('error' in out) {
      failed.push(failure(rule, out.error))
      continue
    }
    const { at } = eventsOf(rule)
    if (Array.isArray(out))
      at.forEach((i, k) => {
        const answer = out[k] ?? MISSING
        if ('error' in answer || answer.matched) add(i, rule, answer)
      })
    else for (const [j, k] of out.at.entries()) if (k < at.length) add(at[k]!, rule, out.answers[j]!)
  }
  const batchAnswer = (rule: LiveRule, i: number): Evaluation => {
    for (const [r, answer] of hits[i] ?? []) if (r === rule) return answer
    return NO_MATCH
  }
  return {
    of: (rule, i, record) => (rule.evaluate ? rule.evaluate(record) : batchAnswer(rule, i)),
    hitsAt: (i) => hits[i],
    failed,
    late,
    ran,
    ...(skips ? { skips } : {}),
  }
}

/** Hits as one answer per record (a late rule's answers: late-rules.ts passes them all). */
function dense(out: BatchHits, length: number): Evaluation[] {
  const answers = new Array<Evaluation>(length).fill(NO_MATCH)
  for (const [j, k] of out.at.entries()) if (k < length) answers[k] = out.answers[j]!
  return answers
}

/** What a record the rule gave no answer for gets. */
export const MISSING: Evaluation = { error: 'the rule reported nothing for this record' }

/** A batch rule that could not run at all: skipped for the rest of its revision. */
export function failure(rule: LiveRule, error: string): { rule: LiveRule; error: string } {
  if (rule.batch) rule.failed = error
  return { rule, error }
}
