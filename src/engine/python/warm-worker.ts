// One warm detection worker: a sandboxed process (the same sandbox as every run) that lives across
// batches (python/rulekeeper_serve.py). This side writes a batch at once (a header line, then the
// records in blocks: warm-blocks.ts) and reads the frames: which rule runs (`s`), its matches and
// errors (`r`), records stopped at their clock (`x`), progress (`p`), the rule's end (`e`), the
// batch's end (`b`). The worker runs every rule not done over a block before the next block, so a
// rule has a start and an end frame per block it has records in; this side derives the expected
// order from the same layout. Each run has a hard deadline here: what is left of its budget plus one
// record's clock (plus one more per record stopped), or under a share clock what is left of its
// share plus 0.5 s (it is evicted at its share: `e` with why `evicted`); past it, or on output past
// the limit, a frame out of order or too large, the process is killed and the batch ends at that
// rule. A clock runs from the write to the batch's end, always: between runs (before the first `s`,
// after an `e`) a gap clock (a rule's code may still run there: an object's `__del__`, a forged `e`
// frame), and over the whole batch a deadline (every rule's longest run and gaps); past either the
// worker is killed too, and the overrun is the rule that last started.
import type { RecordOutcome } from '../engine.js'
import type { ModuleSource, RunLimits, ServeBatch } from './protocol.js'
import { parseLine, wellFormed } from './frame-check.js'
import { BatchBlocks, type Progress, type RuleRun } from './warm-blocks.js'
import { DETECT_RECORD_LINE_LIMIT, DETECT_RESULT_LIMIT, describeExit, type SandboxRun } from './sandbox-run.js'

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
   * Runs the batch: one RuleRun per plan item up to the last one started (the last one may have
   * ended the process). Those a neighbour's stop cut short (reached < n, no `end`) are run again by
   * the caller.
   */
  async run(batch: ServeBatch): Promise<RuleRun[]> {
    const plan = batch.plan
    const blocks = new BatchBlocks(batch.events)
    const rules: Progress[] = plan.map((item) => ({
      item,
      run: { k: item.k, results: new Map(), stopped: new Map(), reached: 0, ms: 0 },
      started: false,
      done: false,
    }))
    // Where the next run is looked for (block, plan index), as the worker goes: every rule not
    // done over block b, in plan order, then block b + 1; a rule with no records in a block is skipped.
    let at = { b: 0, j: 0 }
    const nextRun = (): { p: Progress; last: number } | undefined => {
      for (; at.b < blocks.count; at = { b: at.b + 1, j: 0 })
        for (; at.j < rules.length; at.j++) {
          const p = rules[at.j]!
          if (p.done) continue
          const last = blocks.end(p.item, p.run.reached, at.b)
          if (last > p.run.reached) {
            at.j++
            return { p, last }
          }
          if (p.run.reached >= p.item.n) p.done = true
        }
      return undefined
    }
    let current: Progress | undefined
    /** The rule of the last start frame (blamed for code running between rules). */
    let lastStarted: Progress | undefined
    let last = 0
    let resultBytes = 0
    let outputLeft = this.limits.outputBytes
    let failure: { why: 'killed' | 'crashed'; message: string } | undefined
    let done = false
    let finish: () => void = () => {}
    const finished = new Promise<void>((resolve) => (finish = resolve))
    let timer: NodeJS.Timeout | undefined
    let ruleStart = 0
    let budgetLeft = 0
    let pastShare = false
    const text = batchText(batch, blocks, this.globalsSent)
    const gapMs = this.limits.timeoutMs + GRACE_MS
    const start = performance.now()
    // The clock of the moment: a rule's (from its `s` to its `e`) or a gap's (the rest).
    let deadline = start + gapMs + Math.ceil(text.length * PARSE_MS_PER_BYTE)
    // The whole batch: every rule's longest run (all its records stopped), a gap after each of its runs.
    const batchDeadline =
      plan.reduce((sum, p) => sum + p.budgetMs + p.timeoutMs * p.maxStops, deadline) +
      blocks.runs(plan) * (this.limits.timeoutMs + GRACE_MS + gapMs)
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
          const item = current?.item
          if (item?.shareMs && now - ruleStart < budgetLeft + item.timeoutMs) {
            // Past its share, not its budget: evicted (its rest runs in a worker of its own), no strike.
            pastShare = true
            return stop('killed', `held its worker past its share (${item.shareMs} ms; the worker was stopped)`)
          }
          if (item)
            return stop('killed', `used up its budget of ${item.budgetMs} ms for this batch (the worker was stopped)`)
          // Between rules (or the batch over its time): the rule that last started ran on past its end.
          current = lastStarted
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
        const next = current ? undefined : nextRun()
        if (!next || e.k !== next.p.item.k) return malformed()
        current = lastStarted = next.p
        last = next.last
        const item = current.item
        // the limit is each rule's (counted from its first start frame of the batch)
        if (!current.started) resultBytes = line.length
        current.started = true
        ruleStart = performance.now()
        // A rule's budget and share are its batch's: each block gets what its earlier blocks left.
        budgetLeft = Math.max(1, item.budgetMs - current.run.ms)
        const own = budgetLeft + item.timeoutMs
        // A rule under a share clock yields at its share (it is evicted), else it is killed soon after.
        const share = item.shareMs ? Math.max(1, item.shareMs - current.run.ms) : own
        deadline = ruleStart + Math.min(own, share) + GRACE_MS
        arm()
        return
      }
      if (e.t === 'b') {
        if (current || nextRun()) return malformed()
        done = true
        finish()
        return
      }
      if (!current) return malformed()
      const run = current.run
      const item = current.item
      const at = (v: unknown, end: number) =>
        typeof v === 'number' && Number.isInteger(v) && v >= run.reached && v <= end
      const index = (v: unknown) => at(v, last - 1)
      switch (e.t) {
        case 'r':
          if (line.length > DETECT_RECORD_LINE_LIMIT)
            return stop('crashed', `reported a result line longer than ${DETECT_RECORD_LINE_LIMIT} characters`)
          if (!wellFormed(e) || !index(e.i)) return malformed()
          run.results.set(e.i as number, resultOutcome(e.f as Record<string, [unknown, string | null]>))
          run.reached = (e.i as number) + 1
          return
        case 'x':
          if (!index(e.i) || typeof e.m !== 'string' || run.stopped.size >= item.maxStops) return malformed()
          run.stopped.set(e.i as number, e.m)
          run.reached = (e.i as number) + 1
          deadline += item.timeoutMs // a record stopped at its clock does not spend the rule's budget
          arm()
          return
        case 'p':
          if (!index(e.i)) return malformed()
          run.reached = e.i as number
          return
        case 'e': {
          if (
            e.k !== run.k ||
            !at(e.n, last) ||
            (e.why !== undefined && e.why !== 'stops' && e.why !== 'budget' && e.why !== 'evicted') ||
            // only a rule under a share clock can be evicted (never one in a worker of its own)
            (e.why === 'evicted' && !item.shareMs) ||
            // a run ends at its block's last record unless it says why (or the rule cannot run)
            (e.why === undefined && run.setup === undefined && e.n !== last)
          )
            return malformed()
          run.reached = e.n as number
          run.ms += performance.now() - ruleStart
          if (e.why === 'stops') run.end = { why: 'stops', message: typeof e.m === 'string' ? e.m : '' }
          else if (e.why === 'evicted')
            run.end = { why: 'evicted', message: `held its worker past its share (${item.shareMs} ms)` }
          else if (e.why === 'budget')
            run.end = { why: 'budget', message: `used up its budget of ${item.budgetMs} ms for this batch` }
          if (run.end || run.setup !== undefined || run.reached >= item.n) current.done = true
          current = undefined
          deadline = performance.now() + gapMs
          arm()
          return
        }
        default: {
          if (!wellFormed(e)) return malformed()
          const why = setupMessage(e)
          if (why === undefined) return malformed()
          run.setup ??= why
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
        current.run.end = pastShare ? { why: 'evicted', message: failure.message } : failure
        current.run.ms += performance.now() - ruleStart
      }
    }
    // Up to the last rule started: the ones after it run again as they are (warm-detect.ts).
    let reached = rules.length
    while (reached > 0 && !rules[reached - 1]!.started) reached--
    return rules.slice(0, reached).map((p) => p.run)
  }
}

/** The batch as written: its header line, then per block one line of records per set. */
function batchText(batch: ServeBatch, blocks: BatchBlocks, globalsSent: Set<string>): string {
  const globals: Record<string, ModuleSource> = {}
  for (const [name, g] of Object.entries(batch.globals))
    if (!globalsSent.has(name)) {
      globals[name] = g
      globalsSent.add(name)
    }
  const parts = [JSON.stringify({ ...blocks.header(), load: batch.load, globals, plan: batch.plan })]
  for (let b = 0; b < blocks.count; b++)
    for (const [, texts] of blocks.lines) if (b < texts.length) parts.push(texts[b]!)
  return `${parts.join('\n')}\n`
}
