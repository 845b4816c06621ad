// Rules that are late in live detection (a commit cursor per rule): a Python rule its engine runs
// apart (it held a shared worker past its share) does not hold the chunk back. The loop commits the
// other rules' output and keeps the late rule's records here until its answers come; they are
// then passed in order per rule, and committed with the loop's next commit. The checkpoint names,
// per rule still owing answers, the offsets from which it owes them (`behind`): a restart evaluates
// those records again for that rule only, with the rule as the revision served then has it (a rule
// error says so when that is not the revision it was late at). Held records are bounded: past the
// bound, the loop waits for late rules as it did before.
import type { Behind, RuleErrorRecord } from './detection-ledger.js'
import type { LateEvaluation } from './evaluate-records.js'
import { failure, MISSING } from './evaluate-records.js'
import { type ChunkOutput, outcome } from './chunk-pass.js'
import type { Evaluation, LiveIndex, LiveRule } from './live-rules.js'
import type { StoredRecord } from './stored-log.js'

/** Records held for late rules at most (their lines and parsed records are in memory). */
export const MAX_LATE_RECORDS = 50_000

interface LateChunk {
  rule: LiveRule
  records: StoredRecord[]
  /** Per data file, the offset of its first record here. */
  from: Record<string, number>
  since: string
  results: Promise<Evaluation[] | { error: string }>
  answer?: Evaluation[] | { error: string }
}

export class LateRules {
  private readonly queues = new Map<string, LateChunk[]>()
  private held = 0
  /** Owed at the last start (the checkpoint's `behind`), until the loop has evaluated past it. */
  private readonly carried = new Map<string, Behind>()
  /** Rules whose debt from the last start has been said to be evaluated at another revision. */
  private readonly noticed = new Set<string>()

  constructor(
    /** Called when answers come (the loop takes a turn to pass and commit them). */
    private readonly onAnswer: () => void,
    private readonly maxRecords = MAX_LATE_RECORDS,
  ) {}

  /** The rules owing records at the last start, and from where; read by the loop's catch-up. */
  carry(behind: Readonly<Record<string, Behind>> | undefined): void {
    for (const [id, b] of Object.entries(behind ?? {})) this.carried.set(id, { ...b, logs: { ...b.logs } })
  }

  /** Whether rules still owe records they owed at the last start. */
  get carrying(): boolean {
    return this.carried.size > 0
  }

  /**
   * Once per rule owing records from the last start at a revision other than the one served now:
   * a rule error saying that those records are evaluated with the rule as served now (its code may
   * have changed since), or not at all when the rule is not served now. Empty when nothing changed.
   */
  revisionNotices(live: LiveIndex): RuleErrorRecord[] {
    const out: RuleErrorRecord[] = []
    let served: Set<string> | undefined
    for (const [id, b] of this.carried) {
      if (this.noticed.has(id) || b.revision === live.revision) continue
      this.noticed.add(id)
      served ??= new Set([...live.byLogType.values()].flatMap((rules) => rules.map((r) => r.meta.id)))
      const owed = `the records this rule owed since ${b.since} (late at revision ${b.revision ?? 'none'})`
      const now = `revision ${live.revision ?? 'none'}`
      out.push({
        ruleId: id,
        revision: live.revision,
        time: new Date().toISOString(),
        record: null,
        error: served.has(id)
          ? `${owed} are evaluated with the rule as it is at ${now}`
          : `${owed} are not evaluated: the rule is not enabled at ${now}`,
      })
    }
    return out
  }

  /** Whether a rule owed record `offset` of `file` at the last start. */
  owedAtStart(ruleId: string, file: string, offset: number): boolean {
    const from = this.carried.get(ruleId)?.logs[file]
    return from !== undefined && from <= offset
  }

  /** The records of each log file up to `to` are evaluated and their output committed with this: owed no more. */
  evaluated(to: Readonly<Record<string, number>>, upTo: Readonly<Record<string, number>>): void {
    for (const [id, b] of this.carried) {
      for (const [file, from] of Object.entries(b.logs)) {
        const at = Math.max(from, to[file] ?? from)
        if (at >= (upTo[file] ?? 0)) delete b.logs[file]
        else b.logs[file] = at
      }
      if (Object.keys(b.logs).length === 0) this.carried.delete(id)
    }
  }

  /** Whether a chunk may go on without this rule's answers. */
  mayDefer(): boolean {
    return this.held < this.maxRecords
  }

  /** Whether a rule has answers still to come (its next chunk's answers wait behind them). */
  owes(ruleId: string): boolean {
    return this.queues.has(ruleId)
  }

  /** A chunk's late rules: their records are held until their answers come. */
  add(chunk: readonly StoredRecord[], late: readonly LateEvaluation[]): void {
    const since = new Date().toISOString()
    for (const { rule, at, results } of late) {
      const records = at.map((i) => chunk[i]!)
      const from: Record<string, number> = {}
      for (const r of records) if (!(r.file in from)) from[r.file] = r.offset
      const entry: LateChunk = { rule, records, from, since, results }
      const id = rule.meta.id
      const queue = this.queues.get(id)
      if (queue) queue.push(entry)
      else this.queues.set(id, [entry])
      this.held += records.length
      void results.then((answer) => {
        entry.answer = answer
        this.onAnswer()
      })
    }
  }

  /** Waits until every late chunk of these rules has its answers (a rule's next answers come after them). */
  async settle(rules: Iterable<string>): Promise<void> {
    const waits: Promise<unknown>[] = []
    for (const id of rules) for (const c of this.queues.get(id) ?? []) if (!c.answer) waits.push(c.results)
    await Promise.all(waits)
  }

  /** Passes every late chunk whose answers came, oldest first per rule; returns how many records. */
  passReady(out: ChunkOutput): number {
    let passed = 0
    const now = Date.now()
    for (const [id, queue] of this.queues) {
      while (queue.length > 0 && queue[0]!.answer) {
        const c = queue.shift()!
        const answer = c.answer!
        if (!Array.isArray(answer)) {
          const { rule, error } = failure(c.rule, answer.error)
          out.addError({
            ruleId: id,
            revision: rule.meta.revision,
            time: new Date(now).toISOString(),
            record: null,
            error,
          })
        } else for (const [k, rec] of c.records.entries()) outcome(rec, c.rule, answer[k] ?? MISSING, now, out)
        this.held -= c.records.length
        passed += c.records.length
      }
      if (queue.length === 0) this.queues.delete(id)
    }
    return passed
  }

  /** Whether any answers are still to come. */
  get pending(): boolean {
    return this.queues.size > 0
  }

  /** What the checkpoint names: per rule owing records, from which offset of each log file. */
  owed(): Record<string, Behind> {
    const owed: Record<string, Behind> = {}
    for (const [id, b] of this.carried) owed[id] = { ...b, logs: { ...b.logs } }
    for (const [id, queue] of this.queues) {
      const first = queue[0]!
      const entry = (owed[id] ??= { revision: first.rule.meta.revision, since: first.since, logs: {} })
      for (const c of queue)
        for (const [file, offset] of Object.entries(c.from))
          if (entry.logs[file] === undefined || offset < entry.logs[file]!) entry.logs[file] = offset
    }
    return owed
  }

  /** The late rules for `/status`: records owed in memory, since when. */
  status(): Array<{ ruleId: string; records: number; since: string }> {
    const out = [...this.queues].map(([ruleId, q]) => ({
      ruleId,
      records: q.reduce((n, c) => n + c.records.length, 0),
      since: q[0]!.since,
    }))
    for (const [ruleId, b] of this.carried)
      if (!this.queues.has(ruleId)) out.push({ ruleId, records: 0, since: b.since })
    return out.sort((a, b) => (a.ruleId < b.ruleId ? -1 : 1))
  }

  /** Forgets everything (the loop failed: the next start evaluates again from the checkpoint). */
  clear(): void {
    this.queues.clear()
    this.carried.clear()
    this.held = 0
  }
}
