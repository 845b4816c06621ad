// One warm detection worker: a sandboxed process (the same sandbox as every run) that lives across
// batches (python/rulekeeper_serve.py). This side sends a batch line and reads the frames: which rule
// runs (`s`), its matches and errors (`r`), records stopped at their clock (`x`), progress (`p`),
// the rule's end (`e`), the batch's end (`b`). Each rule has a hard deadline here: its budget plus
// one record's clock (plus one more per record stopped), or under a share clock its share plus
// 0.5 s (it is evicted at its share: `e` with why `evicted`); past it, or on output past the limit, a
// frame out of order or too large, the process is killed and the batch ends at that rule. A clock
// runs from the batch line's write to the batch's end, always: between rules (before the first
// `s`, after an `e`) a gap clock (a rule's code may still run there: an object's `__del__`, a
// forged `e` frame), and over the whole batch a deadline (every rule's longest run and gap); past
// either the worker is killed too, and the overrun is the rule that last started. A batch's records
// go in blocks of BLOCK_RECORDS, every rule over one block before the next (each block a batch line
// of its own; a rule's budget and stops are its whole batch's): run rule by rule over 5,000
// records, the event objects fell out of the CPU's cache between rules and Python ran at half speed.
import type { RecordOutcome } from '../engine.js'
import type { ModuleSource, RunLimits, ServeBatch, ServePlanItem } from './protocol.js'
import { parseLine, wellFormed } from './frame-check.js'
import { BLOCK_RECORDS, blockJson, merge, type Progress, type RuleRun } from './warm-blocks.js'
import { DETECT_RECORD_LINE_LIMIT, DETECT_RESULT_LIMIT, describeExit, type SandboxRun } from './sandbox-run.js'

/** A batch as one line carries it: every set's records as JSON text. */
type LineBatch = Omit<ServeBatch, 'events'> & { events: Map<string, string> }

/** Slack past a rule's deadline before its worker is killed (the soft stop comes first). */
const GRACE_MS = 500
/** Time to take in the batch line before its first rule, per byte (the worker parses it first). */
const PARSE_MS_PER_BYTE = 1 / 10_000

function setupMessage(e: Record<string, unknown>): string | undefined {
  if (e.t === 'import_error') return `the rule module failed to import: ${String(e.message)}`
  if (e.t === 'missing_module')
    return `the rule module failed to import: module ${String(e.module)} is not installed in the configured interpreter`
  if (e.t === 'data_model_error') return String(e.message)
  return undefined
}

/** A match's or error's functions as the old path's records report them. */
export function resultOutcome(f: Record<string, [unknown, string | null]>): RecordOutcome {
  const detection = f.detection
  if (!detection || detection[1] !== null) return { error: detection?.[1] ?? 'rule() reported no result' }
  const functions: Record<string, { output: unknown; error: string | null }> = {}
  for (const [name, [output, error]] of Object.entries(f)) functions[name] = { output, error }
  return { functions }
}

export class WarmWorker {
  /** Rule keys this process has been sent (it keeps their modules). */
  readonly loaded = new Set<number>()
  readonly globalsSent = new Set<string>()
  readonly started = Date.now()
  private readonly write: (line: string) => void
  private onLine: (line: string) => void = () => this.sandbox.kill()
  private onOutput: (bytes: number) => void = () => {}
  /** The running batch's finisher (none between batches): the one reaction to the process's end
   *  calls it, so no batch's closure is held by that promise past its batch. */
  private onExit: (() => void) | undefined
  private exitSeen = false

  constructor(
    readonly sandbox: SandboxRun,
    private readonly limits: RunLimits,
    /** Bytes of frames one rule may send in a batch (lowered by tests). */
    private readonly resultLimit = DETECT_RESULT_LIMIT,
  ) {
    void sandbox.exited().then(() => {
      this.exitSeen = true
      this.onExit?.()
    })
    this.write = sandbox.attach(
      { op: 'serve', tests: [], limits },
      {
        line: (line) => this.onLine(line),
        output: (bytes) => this.onOutput(bytes),
        overflow: () => this.sandbox.kill(),
      },
    )
  }

  get dead(): boolean {
    return this.sandbox.dead
  }

  kill(): void {
    this.sandbox.kill()
  }

  /** Whether a batch is running (its finisher is set). */
  get running(): boolean {
    return this.onExit !== undefined
  }

  /**
   * Runs the batch: one RuleRun per plan item reached, in order (the last one may have ended the
   * process). In blocks (a batch whose records are arrays longer than a block): when the process
   * ended, one RuleRun per plan item, those it cut short (reached < n, no `end`) to be run again.
   */
  async run(batch: ServeBatch): Promise<RuleRun[]> {
    let longest = 0
    let text = false
    for (const records of batch.events.values())
      if (typeof records === 'string') text = true
      else longest = Math.max(longest, records.length)
    if (text || longest <= BLOCK_RECORDS) {
      const events = new Map<string, string>()
      for (const [key, records] of batch.events)
        events.set(key, typeof records === 'string' ? records : blockJson(records, 0, records.length))
      return this.runBlock({ ...batch, events })
    }
    const rules: Progress[] = batch.plan.map((item) => ({
      item,
      run: { k: item.k, results: new Map(), stopped: new Map(), reached: 0, ms: 0 },
      offset: 0,
      next: 0,
      started: false,
      done: false,
    }))
    let load = batch.load
    for (let from = 0; from < longest; from += BLOCK_RECORDS) {
      const to = from + BLOCK_RECORDS
      const events = new Map<string, string>()
      const plan: ServePlanItem[] = []
      const members: Progress[] = []
      for (const p of rules) {
        if (p.done) continue
        const records = batch.events.get(p.item.e) as readonly object[]
        let tests: number[] | null = null
        let n: number
        if (p.item.tests) {
          tests = []
          const all = p.item.tests
          while (p.next < all.length && all[p.next]! < to) tests.push(all[p.next++]! - from)
          n = tests.length
        } else n = Math.max(0, Math.min(to, records.length) - from)
        if (n === 0) continue
        const e = `${p.item.e}:${from}`
        if (!events.has(e)) events.set(e, blockJson(records, from, Math.min(to, records.length)))
        plan.push({
          ...p.item,
          e,
          tests,
          n,
          budgetMs: Math.max(1, Math.ceil(p.item.budgetMs - p.run.ms)),
          maxStops: p.item.maxStops - p.run.stopped.size,
          // A share, like the budget, is the whole batch's: the block gets what is left of it.
          ...(p.item.shareMs === undefined ? {} : { shareMs: Math.max(1, Math.ceil(p.item.shareMs - p.run.ms)) }),
        })
        members.push(p)
      }
      if (plan.length === 0) continue
      const runs = await this.runBlock({ load, globals: batch.globals, events, plan })
      load = []
      for (const [j, r] of runs.entries()) merge(members[j]!, plan[j]!, r)
      const failed =
        this.dead || runs.length < plan.length || runs.some((r) => r.end?.why === 'killed' || r.end?.why === 'crashed')
      if (failed) break
    }
    if (!rules.some((p) => p.started)) return []
    return rules.map((p) => p.run)
  }

  /** One batch line and its frames: one RuleRun per plan item reached, in order. */
  private async runBlock(batch: LineBatch): Promise<RuleRun[]> {
    const plan = batch.plan
    const runs: RuleRun[] = []
    let current: RuleRun | undefined
    let item: ServePlanItem | undefined
    let resultBytes = 0
    let outputLeft = this.limits.outputBytes
    let failure: { why: 'killed' | 'crashed'; message: string } | undefined
    let done = false
    let finish: () => void = () => {}
    const finished = new Promise<void>((resolve) => (finish = resolve))
    let timer: NodeJS.Timeout | undefined
    let ruleStart = 0
    let pastShare = false
    const text = batchLine(batch, this.globalsSent)
    const gapMs = this.limits.timeoutMs + GRACE_MS
    const start = performance.now()
    // The clock of the moment: a rule's (from its `s` to its `e`) or a gap's (the rest).
    let deadline = start + gapMs + Math.ceil(text.length * PARSE_MS_PER_BYTE)
    // The whole batch: every rule's longest run (all its records stopped) and a gap after each.
    const batchDeadline = plan.reduce(
      (at, p) => at + p.budgetMs + p.timeoutMs * (1 + p.maxStops) + GRACE_MS + gapMs,
      deadline,
    )
    const stop = (why: 'killed' | 'crashed', message: string) => {
      if (!failure && !done) failure = { why, message }
      this.sandbox.kill()
      finish()
    }
    const arm = () => {
      clearTimeout(timer)
      const end = Math.min(deadline, batchDeadline)
      timer = setTimeout(
        () => {
          const now = performance.now()
          if (now < Math.min(deadline, batchDeadline)) return arm()
          if (current && item?.shareMs && now - ruleStart < item.budgetMs + item.timeoutMs) {
            // Past its share, not its budget: evicted (its rest runs in a worker of its own), no strike.
            pastShare = true
            return stop('killed', `held its worker past its share (${item.shareMs} ms; the worker was stopped)`)
          }
          if (current)
            return stop('killed', `used up its budget of ${item?.budgetMs} ms for this batch (the worker was stopped)`)
          // Between rules (or the batch over its time): the rule that last started ran on past its end.
          current = runs[runs.length - 1]
          stop('killed', `kept running past its end in this batch (the worker was stopped)`)
        },
        end - performance.now() + 1,
      )
    }
    this.onOutput = (bytes) => {
      outputLeft -= bytes
      if (outputLeft < 0)
        stop('crashed', `printed more than ${this.limits.outputBytes} bytes to stdout/stderr (the output limit)`)
    }
    this.onLine = (line) => {
      if (done || failure) return
      if ((resultBytes += line.length) > this.resultLimit)
        return stop('crashed', `reported more than ${this.resultLimit} bytes of results`)
      const e = parseLine(line)
      const malformed = () => stop('crashed', 'sent a malformed message to the server (the worker was stopped)')
      if (!e || typeof e.t !== 'string') return malformed()
      if (e.t === 's') {
        const next = plan[runs.length]
        if (current || !next || e.k !== next.k) return malformed()
        item = next
        resultBytes = line.length // the limit is each rule's
        current = { k: next.k, results: new Map(), stopped: new Map(), reached: 0, ms: 0 }
        runs.push(current)
        ruleStart = performance.now()
        // A rule under a share clock yields at its share (it is evicted), else it is killed soon after.
        const own = next.budgetMs + next.timeoutMs
        deadline = ruleStart + (next.shareMs ? Math.min(own, next.shareMs) : own) + GRACE_MS
        arm()
        return
      }
      if (e.t === 'b') {
        if (current || runs.length !== plan.length) return malformed()
        done = true
        finish()
        return
      }
      if (!current || !item) return malformed()
      const count = item.n
      const at = (v: unknown, last: number) =>
        typeof v === 'number' && Number.isInteger(v) && v >= current!.reached && v <= last
      const index = (v: unknown) => at(v, count - 1)
      switch (e.t) {
        case 'r':
          if (line.length > DETECT_RECORD_LINE_LIMIT)
            return stop('crashed', `reported a result line longer than ${DETECT_RECORD_LINE_LIMIT} characters`)
          if (!wellFormed(e) || !index(e.i)) return malformed()
          current.results.set(e.i as number, resultOutcome(e.f as Record<string, [unknown, string | null]>))
          current.reached = (e.i as number) + 1
          return
        case 'x':
          if (!index(e.i) || typeof e.m !== 'string' || current.stopped.size >= item.maxStops) return malformed()
          current.stopped.set(e.i as number, e.m)
          current.reached = (e.i as number) + 1
          deadline += item.timeoutMs // a record stopped at its clock does not spend the rule's budget
          arm()
          return
        case 'p':
          if (!index(e.i)) return malformed()
          current.reached = e.i as number
          return
        case 'e': {
          if (
            e.k !== current.k ||
            !at(e.n, count) ||
            (e.why !== undefined && e.why !== 'stops' && e.why !== 'budget' && e.why !== 'evicted') ||
            // only a rule under a share clock can be evicted (never one in a worker of its own)
            (e.why === 'evicted' && !item.shareMs)
          )
            return malformed()
          current.reached = e.n as number
          current.ms = performance.now() - ruleStart
          if (e.why === 'stops') current.end = { why: 'stops', message: typeof e.m === 'string' ? e.m : '' }
          else if (e.why === 'evicted')
            current.end = { why: 'evicted', message: `held its worker past its share (${item.shareMs} ms)` }
          else if (e.why === 'budget')
            current.end = { why: 'budget', message: `used up its budget of ${item.budgetMs} ms for this batch` }
          current = undefined
          deadline = performance.now() + gapMs
          arm()
          return
        }
        default: {
          if (!wellFormed(e)) return malformed()
          const why = setupMessage(e)
          if (why === undefined) return malformed()
          current.setup ??= why
        }
      }
    }
    this.onExit = finish
    if (this.exitSeen) finish()
    this.write(text)
    for (const l of batch.load) this.loaded.add(l.k)
    arm()
    await finished
    clearTimeout(timer)
    this.onExit = undefined
    this.onLine = () => this.sandbox.kill()
    this.onOutput = () => {}
    if (!done && !failure) {
      const status = await this.sandbox.exitStatus()
      failure = { why: 'crashed', message: describeExit(status.code, status.signal, this.limits) }
    }
    if (failure) {
      this.sandbox.kill()
      // The rule running when the process ended is the one that ended it (or, between rules, none).
      if (current) {
        current.end = pastShare ? { why: 'evicted', message: failure.message } : failure
        current.ms = performance.now() - ruleStart
      }
    }
    return runs
  }
}

/** The batch as one line: every set's records written as the JSON text they already are. */
function batchLine(batch: LineBatch, globalsSent: Set<string>): string {
  const globals: Record<string, ModuleSource> = {}
  for (const [name, g] of Object.entries(batch.globals))
    if (!globalsSent.has(name)) {
      globals[name] = g
      globalsSent.add(name)
    }
  const events = [...batch.events].map(([k, text]) => `${JSON.stringify(k)}:${text}`).join(',')
  return `{"events":{${events}},${JSON.stringify({ load: batch.load, globals, plan: batch.plan }).slice(1)}\n`
}
