// Which warm worker a Python rule runs in, per revision (warm-detect.ts): `shared`, the least loaded
// of the revision's workers (each rule always in the same one), or `per-rule`, one each; a rule
// evicted for holding its worker past its share (or stopped, or crashing it) gets a worker of its
// own (at most MAX_OWN per revision; past it the evicted rules share the last one). And the batch a
// worker is sent for a slot's requests (`batchFor`).
import type { RuleFile } from '../../rules/model.js'
import type { EngineContext } from '../engine.js'
import type { BatchRecords } from '../live.js'
import type { ModuleSource, ServeBatch, ServePlanItem, ServeRule } from './protocol.js'
import type { SparseOutcome } from './sparse-outcomes.js'
import type { WarmWorker } from './warm-worker.js'

export interface WarmSettings {
  isolation: 'shared' | 'per-rule'
  /** Processes per revision in `shared` isolation. */
  workers: number
  /** A rule's budget per batch: at least this, else `budgetMsPerRecord` × its records. */
  budgetMs: number
  budgetMsPerRecord: number
  /**
   * A rule's share of its worker per batch: `shareMs` plus `shareMsPerRecord` × its records, and
   * `shareRecordMs` per record (`detection.python.share`; defaults 250, 1 and 250: a rule that is
   * slow on one record is moved at once, one merely starved of CPU on a busy machine is not).
   */
  shareMs?: number
  shareMsPerRecord?: number
  shareRecordMs?: number
}

export interface Prepared {
  key: number
  error?: string
  pass?: (event: unknown) => boolean
  def?: ServeRule
  globals?: Record<string, ModuleSource>
}

export interface Request {
  file: RuleFile
  ctx: EngineContext
  prep: Prepared
  events: BatchRecords
  /** Indexes of the records the InlineFilters let through (null: all). */
  pending: number[] | null
  signal?: AbortSignal
  /** The caller need not wait (the rule runs in a worker of its own). */
  onLate?: () => void
  resolve(outcome: SparseOutcome): void
  /** Runs again after a neighbour's stop cut it short. */
  tries: number
}

/** New workers per revision for rules evicted from a shared one; past it they share the last (a rule alone in its worker keeps it). */
const MAX_OWN = 2

export interface Slot {
  /** A worker of evicted rules (never shared under a share clock). */
  own?: boolean
  worker?: WarmWorker
  /** A replacement started in the background after the worker died, for the next batch. */
  spare?: Promise<WarmWorker>
  rules: number
  chain: Promise<void>
}

export class RevisionWorkers {
  readonly prepared = new WeakMap<RuleFile, Prepared>()
  readonly slotOf = new WeakMap<RuleFile, Slot>()
  readonly slots: Slot[] = []
  /** Slots of evicted rules (at most MAX_OWN). */
  readonly own: Slot[] = []
  nextKey = 0
  queue: Request[] = []
  busy = 0
  lastUsed = Date.now()

  /** The worker a rule runs in: its own once evicted; else `shared`: the least loaded of `workers`, or `per-rule`: one each. */
  slotFor(file: RuleFile, settings: Pick<WarmSettings, 'isolation' | 'workers'>): Slot {
    let slot = this.slotOf.get(file)
    if (slot) return slot
    if (settings.isolation === 'per-rule' || this.slots.length < settings.workers) {
      slot = { rules: 0, chain: Promise.resolve() }
      this.slots.push(slot)
    } else slot = this.slots.reduce((a, b) => (b.rules < a.rules ? b : a))
    slot.rules++
    this.slotOf.set(file, slot)
    return slot
  }

  /** Moves an evicted rule to a worker of its own (the last one shared past MAX_OWN); later batches go there. */
  evict(file: RuleFile): Slot {
    const was = this.slotOf.get(file)
    if (was?.own) return was
    let slot: Slot
    if (was && was.rules === 1) {
      // Alone in its worker already (per-rule isolation, or the others moved): that worker is its own now.
      was.own = true
      this.slots.splice(this.slots.indexOf(was), 1)
      this.own.push(was)
      return was
    }
    if (this.own.length < MAX_OWN) {
      slot = { own: true, rules: 0, chain: Promise.resolve() }
      this.own.push(slot)
    } else slot = this.own[this.own.length - 1]!
    if (was) was.rules--
    slot.rules++
    this.slotOf.set(file, slot)
    return slot
  }

  close(): void {
    for (const s of [...this.slots, ...this.own]) {
      s.worker?.kill()
      void s.spare?.then(
        (w) => w.kill(),
        () => {},
      )
    }
  }
}

/** A worker's batch of these requests (its records sent in blocks by the worker: warm-worker.ts). */
export function batchFor(
  loaded: ReadonlySet<number>,
  todo: Request[],
  shareClock: boolean,
  settings: WarmSettings,
  timeoutMs: number,
  maxStops: number,
): ServeBatch {
  const share = settings.shareMs ?? 250
  const sharePerRecord = settings.shareMsPerRecord ?? 1
  const shareRecord = settings.shareRecordMs ?? 250
  const sets = new Map<BatchRecords, string>()
  const events = new Map<string, BatchRecords>()
  const load: ServeRule[] = []
  const globals: Record<string, ModuleSource> = {}
  const plan: ServePlanItem[] = todo.map((r) => {
    let e = sets.get(r.events)
    if (e === undefined) {
      sets.set(r.events, (e = `e${sets.size}`))
      events.set(e, r.events) // serialized by the worker, in blocks
    }
    if (!loaded.has(r.prep.key)) load.push(r.prep.def!)
    Object.assign(globals, r.prep.globals)
    const n = r.pending?.length ?? r.events.length
    return {
      k: r.prep.key,
      e,
      tests: r.pending,
      n,
      timeoutMs: timeoutMs,
      budgetMs: Math.max(settings.budgetMs, Math.ceil(n * settings.budgetMsPerRecord)),
      maxStops,
      ...(shareClock ? { shareMs: Math.ceil(share + n * sharePerRecord), shareRecordMs: shareRecord } : {}),
    }
  })
  return { load, globals, events, plan }
}
