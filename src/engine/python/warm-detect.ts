// Python streaming rules in detection on warm workers (warm-worker.ts): the rules' batch calls of one
// chunk (made in the same turn of the event loop) are gathered per revision (the EngineContext of a
// live index: live detection and each replay have their own) and sent together. `shared`: the
// revision's rules are spread over `workers` processes (each rule always in the same one), so
// records are parsed once per worker, and a worker gets only the records of its rules' log types;
// `per-rule`: one warm worker per rule. Every rule has a budget per batch; a rule stopped in a batch
// (records past their clock, budget spent, its worker killed or crashed) gets errors for the
// records it did not finish and a strike (quarantine.ts); the rules after it in a killed worker run
// again in a fresh one; a rule that crashed its worker has its remaining records run one-shot
// (live-detect.ts), which finds the record that crashes. A rule has a share of its worker per batch
// (`shareMs`); one that holds it longer is evicted: the rest of its records, and its later batches
// at this revision, run in a worker of its own (`onLate` tells the caller, who then need not wait
// for it), so a slow rule delays the rules beside it by its share at most, once; a rule stopped or
// crashed goes there too. Idle revisions' workers exit.
import type { RuleFile } from '../../rules/model.js'
import type { EngineContext, RecordOutcome } from '../engine.js'
import { type BatchRecords, recordAt } from '../live.js'
import { jobDataModels } from './data-models.js'
import { collectGlobals } from './imports.js'
import { compileRuleFilters } from './inline-filters.js'
import { type EvaluateBatch, MAX_STOPS } from './live-detect.js'
import type { RunLimits, ServePlanItem } from './protocol.js'
import type { OverrunKind, Quarantine } from './quarantine.js'
import { abortReason, type SandboxRun } from './sandbox-run.js'
import { jobRule, moduleProblems } from './scheduled-engine.js'
import { denseOutcome, mergeDense, type SparseOutcome } from './sparse-outcomes.js'
import { batchFor, type Prepared, type Request, RevisionWorkers, type Slot, type WarmSettings } from './warm-slots.js'
import { cutShort, type RuleRun } from './warm-blocks.js'
import { WarmWorker } from './warm-worker.js'

export type { WarmSettings }

/** Errors written one per record past which the rest of a rule's batch is reported as one error. */
const MAX_RECORD_ERRORS = 20
/** A revision's workers exit after this long without a batch. */
const IDLE_MS = 30_000
/** Revisions with workers at once (live detection, replays); past it the idle ones end theirs. */
const MAX_REVISIONS = 4
/** A worker is replaced (between batches) after this long: its CPU limit is its whole life's. */
const MAX_AGE_MS = 60 * 60 * 1000
/** A warm worker's CPU limit (RLIMIT_CPU counts its whole life; the server's clocks stop rules). */
const SERVE_CPU_SECONDS = Math.ceil((MAX_AGE_MS * 2) / 1000)

/** Where warm workers come from (the pool's spares; killed with the pool). */
export type TakeSandbox = () => Promise<SandboxRun>

export class WarmDetection {
  private readonly revisions = new Map<EngineContext, RevisionWorkers>()
  private readonly sweeper: NodeJS.Timeout
  private closed = false

  constructor(
    private readonly take: TakeSandbox,
    private readonly limits: RunLimits,
    private readonly settings: WarmSettings,
    private readonly quarantine: Quarantine,
    /** The one-shot path (a fresh sandbox per run, a marker per record): a crashed rule's records. */
    private readonly oneShot: EvaluateBatch,
  ) {
    this.sweeper = setInterval(() => this.sweep(), IDLE_MS / 3)
    this.sweeper.unref()
  }

  /** One outcome per record (null: no match). */
  readonly evaluate: EvaluateBatch = async (file, ctx, events, signal, _runMsCap, onLate) =>
    denseOutcome(await this.evaluateSparse(file, ctx, events, signal, onLate), events.length)

  /** Only the records that matched or raised (detection: the rest did not match). */
  readonly evaluateSparse = (
    file: RuleFile,
    ctx: EngineContext,
    events: BatchRecords,
    signal?: AbortSignal,
    onLate?: () => void,
  ): Promise<SparseOutcome> => {
    const held = this.held(file)
    if (held) return Promise.resolve(held)
    if (this.closed) return Promise.resolve({ error: 'not evaluated: the Python worker pool is closed' })
    const rev = this.revision(ctx)
    const prep = this.prepare(rev, file, ctx)
    if (prep.error !== undefined) return Promise.resolve({ error: prep.error })
    let pending: number[] | null = null
    if (prep.pass) {
      pending = []
      for (let i = 0; i < events.length; i++) if (prep.pass(recordAt(events, i))) pending.push(i)
      if (pending.length === events.length) pending = null
    }
    if (pending?.length === 0) return Promise.resolve({ outcomes: new Map() })
    return new Promise<SparseOutcome>((resolve) => {
      let settled = false
      const once = (o: SparseOutcome) => {
        if (settled) return
        settled = true
        signal?.removeEventListener('abort', onAbort)
        resolve(o)
      }
      const onAbort = () => once({ error: `not evaluated: ${abortReason(signal!)}` })
      signal?.addEventListener('abort', onAbort, { once: true })
      if (signal?.aborted) return onAbort()
      if (rev.slotOf.get(file)?.own) onLate?.()
      rev.queue.push({ file, ctx, prep, events, pending, signal, onLate, resolve: once, tries: 0 })
      // The detector asks every rule of a chunk in one turn: they leave together.
      if (rev.queue.length === 1) setImmediate(() => this.flush(rev))
    })
  }

  /** The answer for a quarantined rule, else undefined. */
  private held(file: RuleFile): { error: string } | undefined {
    const held = this.quarantine.of(file)
    return held
      ? {
          error: `not evaluated: the rule is quarantined since ${held.since}, ${held.reason}; a change to the rule lifts it`,
        }
      : undefined
  }

  /** The rules quarantined now (`/status`). */
  quarantined() {
    return this.quarantine.list()
  }

  /** Processes alive (diagnostics). */
  workers(): number {
    let n = 0
    for (const rev of this.revisions.values())
      for (const s of [...rev.slots, ...rev.own]) if (s.worker && !s.worker.dead) n++
    return n
  }

  close(): void {
    this.closed = true
    clearInterval(this.sweeper)
    for (const rev of this.revisions.values()) rev.close()
    this.revisions.clear()
  }

  private revision(ctx: EngineContext): RevisionWorkers {
    let rev = this.revisions.get(ctx)
    if (!rev) {
      this.revisions.set(ctx, (rev = new RevisionWorkers()))
      // Many short replays in a row: the least recently used idle revisions end their workers.
      const idle = [...this.revisions].filter(([, r]) => r !== rev && r.busy === 0 && r.queue.length === 0)
      idle.sort((a, b) => a[1].lastUsed - b[1].lastUsed)
      for (const [c, r] of idle.slice(0, Math.max(0, this.revisions.size - MAX_REVISIONS))) {
        r.close()
        this.revisions.delete(c)
      }
    }
    rev.lastUsed = Date.now()
    return rev
  }

  /** Idle revisions (an old one, a finished replay) end their workers. */
  private sweep(): void {
    const now = Date.now()
    for (const [ctx, rev] of this.revisions)
      if (rev.busy === 0 && rev.queue.length === 0 && now - rev.lastUsed > IDLE_MS) {
        rev.close()
        this.revisions.delete(ctx)
      }
  }

  private prepare(rev: RevisionWorkers, file: RuleFile, ctx: EngineContext): Prepared {
    let prep = rev.prepared.get(file)
    if (prep) return prep
    const key = rev.nextKey++
    const missing = moduleProblems(file)
    const filters = compileRuleFilters(file.data)
    if (missing.length > 0) prep = { key, error: missing[0]!.message }
    else if (filters.errors.length > 0)
      prep = { key, error: `InlineFilters are invalid: ${filters.errors[0]!.message}` }
    else {
      const rule = jobRule(file)
      const logTypes = rule.logTypes ?? []
      const dataModels = jobDataModels(
        logTypes.map((logType) => ({ log: null, mocks: [], logType })),
        logTypes,
        ctx,
      )
      const globals = collectGlobals([rule.source, ...dataModels.map((m) => m.source ?? '')].join('\n'), ctx)
      prep = { key, pass: filters.filtersPass ?? undefined, def: { k: key, rule, dataModels }, globals }
    }
    rev.prepared.set(file, prep)
    return prep
  }

  private flush(rev: RevisionWorkers): void {
    const queue = rev.queue
    rev.queue = []
    const bySlot = new Map<Slot, Request[]>()
    for (const r of queue) {
      const slot = rev.slotFor(r.file, this.settings)
      const list = bySlot.get(slot)
      if (list) list.push(r)
      else bySlot.set(slot, [r])
    }
    for (const [slot, requests] of bySlot) this.enqueue(rev, slot, requests)
  }

  /** Requests after what the slot has to do already. */
  private enqueue(rev: RevisionWorkers, slot: Slot, requests: Request[]): void {
    rev.busy++
    slot.chain = slot.chain
      .then(() => this.runSlot(rev, slot, requests))
      .catch((err: unknown) => {
        for (const r of requests) r.resolve({ error: `not evaluated: ${(err as Error).message}` })
      })
      .finally(() => {
        rev.busy--
        rev.lastUsed = Date.now()
      })
  }

  /** One slot's share of a chunk: its rules in order, on its worker (a fresh one after a stop). */
  private async runSlot(rev: RevisionWorkers, slot: Slot, requests: Request[]): Promise<void> {
    // Rules evicted since these requests were queued go to their own worker (after their evicted
    // rest, queued there first); rules quarantined meanwhile are answered.
    const moved: Request[] = []
    let todo = requests.filter((r) => {
      if (r.signal?.aborted) return false
      const held = this.held(r.file)
      if (held) r.resolve(held)
      else if (rev.slotOf.get(r.file) !== slot) moved.push(r)
      else return true
      return false
    })
    const bySlot = new Map<Slot, Request[]>()
    for (const r of moved) {
      r.onLate?.()
      const to = rev.slotOf.get(r.file)!
      bySlot.set(to, [...(bySlot.get(to) ?? []), r])
    }
    for (const [to, list] of bySlot) this.enqueue(rev, to, list)
    // Rules stopped in their last batches run last: the others' results are not behind them.
    todo = todo.sort((a, b) => this.quarantine.strikesOf(a.file) - this.quarantine.strikesOf(b.file))
    const settling: Promise<void>[] = []
    let fruitless = 0
    for (;;) {
      // A cancelled caller (already answered) is not run: a replay's client gone mid-chunk.
      todo = todo.filter((r) => !r.signal?.aborted)
      if (todo.length === 0 || this.closed) break
      let worker = slot.worker
      if (!worker || worker.dead || Date.now() - worker.started > MAX_AGE_MS) {
        worker?.kill()
        worker = slot.worker = await this.fresh(slot)
        if (this.closed) {
          worker.kill()
          break
        }
      }
      const batch = batchFor(worker.loaded, todo, !slot.own, this.settings, this.limits.timeoutMs, MAX_STOPS)
      // Every caller of this batch gone (replay clients): the worker is stopped, not run to the end.
      const current = worker
      const waiting = todo
      const onAbort = () => waiting.every((r) => r.signal?.aborted) && current.kill()
      for (const r of waiting) r.signal?.addEventListener('abort', onAbort, { once: true })
      const runs = await worker.run(batch).finally(() => {
        for (const r of waiting) r.signal?.removeEventListener('abort', onAbort)
      })
      // The worker ended (a kill past a rule's share is an eviction, but the process is gone too).
      const stopped = current.dead || runs.some((run) => run.end?.why === 'killed' || run.end?.why === 'crashed')
      // Rules a neighbour's stop cut short (blocks, warm-worker.ts) run again whole, at most twice.
      const again = todo.filter(
        (r, j) => stopped && j < runs.length && cutShort(runs[j]!, batch.plan[j]!) && r.tries++ < 2,
      )
      for (const [j, run] of runs.entries())
        if (!again.includes(todo[j]!)) settling.push(this.settle(rev, todo[j]!, batch.plan[j]!, run))
      todo = [...again, ...todo.slice(runs.length)]
      if (todo.length === 0 && !stopped) break
      // A worker that dies before its first rule twice in a row (it cannot hold the batch): the rest fail.
      if (runs.length === 0 && ++fruitless >= 2) {
        for (const r of todo) r.resolve({ error: 'not evaluated: the Python worker died before evaluating the rule' })
        todo = []
        break
      }
      if (runs.length > 0) fruitless = 0
    }
    // The pool closed with rules still to run: they are answered, not left waiting.
    for (const r of todo) r.resolve({ error: 'not evaluated: the Python worker pool is closed' })
    // A worker that ended in this batch is replaced now, not when the next batch needs it.
    if (!this.closed && slot.worker?.dead && !slot.spare) {
      slot.spare = this.start()
      slot.spare.catch(() => (slot.spare = undefined))
    }
    await Promise.all(settling)
  }

  private async start(): Promise<WarmWorker> {
    return new WarmWorker(await this.take(), { ...this.limits, cpuSeconds: SERVE_CPU_SECONDS })
  }

  /** The slot's replacement started in the background if it is alive, else a new one. */
  private async fresh(slot: Slot): Promise<WarmWorker> {
    const spare = slot.spare
    slot.spare = undefined
    const ready = spare && (await spare.catch(() => undefined))
    if (ready && !ready.dead) return ready
    return this.start()
  }

  /** A rule's results of the batch: its outcomes, errors for what it did not finish, its strike. */
  private async settle(rev: RevisionWorkers, r: Request, item: ServePlanItem, run: RuleRun): Promise<void> {
    if (r.signal?.aborted) return r.resolve({ error: `not evaluated: ${abortReason(r.signal)}` }) // no strike
    if (run.setup !== undefined) return r.resolve({ error: run.setup })
    const results = new Map<number, NonNullable<RecordOutcome>>()
    const at = (k: number) => (r.pending ? r.pending[k]! : k)
    for (const [k, o] of run.results) if (o !== null) results.set(at(k), o)
    for (const [k, m] of run.stopped)
      results.set(at(k), { error: `the Python run evaluating this record was stopped: ${m}` })
    const end = run.end
    // Past its share (no strike: it may be slow, not wrong): the rest of its records, and its later
    // batches, in a worker of its own, and the caller need not wait. A rule killed or crashed goes
    // there too (and takes its strike below).
    if (end?.why === 'evicted' || end?.why === 'killed' || end?.why === 'crashed') {
      const own = rev.evict(r.file)
      r.onLate?.()
      if (end.why === 'evicted') {
        const rest = Array.from({ length: item.n - run.reached }, (_, j) => at(run.reached + j))
        if (rest.length === 0) return r.resolve({ outcomes: results })
        // Not awaited: the shared worker's next batch does not wait for the evicted rule.
        const finish = (out: SparseOutcome) => {
          if ('error' in out) return r.resolve(out)
          for (const i of rest) {
            const o = out.outcomes.get(i)
            if (o) results.set(i, o)
            else results.delete(i)
          }
          r.resolve({ outcomes: results })
        }
        this.enqueue(rev, own, [{ ...r, pending: rest, resolve: finish }])
        return
      }
    }
    let kind: OverrunKind | undefined = run.stopped.size > 0 ? 'timeout' : undefined
    let why = run.stopped.size > 0 ? [...run.stopped.values()].pop()! : ''
    const rest = (message: string) => {
      const left = item.n - run.reached
      if (left <= 0) return
      if (left <= MAX_RECORD_ERRORS) for (let k = run.reached; k < item.n; k++) results.set(at(k), { error: message })
      else results.set(at(run.reached), { error: `${message} (${left} records of this batch, from this one on)` })
    }
    if (cutShort(run, item)) rest("not evaluated: the rule's Python worker was stopped by another rule in this batch")
    else if (end?.why === 'stops')
      rest(
        `not evaluated: the rule stopped its Python run ${run.stopped.size} times in this batch (last: ${end.message})`,
      )
    else if (end?.why === 'budget' || end?.why === 'killed') {
      kind = end.why
      why = `it ${end.message}`
      rest(`not evaluated: the rule's Python run ${end.message}`)
    } else if (end?.why === 'crashed') {
      kind = 'crashed'
      why = `its worker ${end.message}`
      if (run.reached < item.n && !r.signal?.aborted) {
        // Run one-shot from where it was: the record that kills the process is found and reported
        // as before, and the rule goes on after it (within its budget). A damaged stored line is
        // evaluated by no rule (the worker skipped it).
        const { events } = r
        const positions = Array.from({ length: item.n - run.reached }, (_, j) => at(run.reached + j)).filter(
          (i) => !('lines' in events) || events.readable(i),
        )
        const records = positions.map((i) => recordAt(events, i))
        const out = await this.oneShot(r.file, r.ctx, records, r.signal, item.budgetMs + item.timeoutMs)
        if ('error' in out) results.set(positions[0] ?? at(run.reached), { error: out.error })
        else mergeDense(results, out.results, positions)
      }
    }
    if (kind) this.quarantine.strike(r.file, kind, why)
    else this.quarantine.clean(r.file)
    r.resolve({ outcomes: results })
  }
}
