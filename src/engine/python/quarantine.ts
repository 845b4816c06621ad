// Python rules that keep overrunning in detection: a batch in which a rule was stopped (a record past
// its clock, its budget spent, its worker killed or crashed) is a strike, a clean batch clears them,
// and `after` strikes in a row quarantine the rule at that revision of its file: a file with other
// contents (a new revision) is evaluated again; the same contents loaded again (a replay's index of
// another commit) stay held. Kept in memory (a restart tries the rule again). The metrics carry no rule ids.
import { createHash } from 'node:crypto'
import { Counter, Gauge, type Registry } from '../../metrics.js'
import type { RuleFile } from '../../rules/model.js'

export interface QuarantineEntry {
  ruleId: string
  since: string
  reason: string
}

/** Why a rule was stopped in a batch (the overrun counter's label). */
export type OverrunKind = 'timeout' | 'budget' | 'killed' | 'crashed'

const revisionKeys = new WeakMap<RuleFile, string>()

/** A rule file's revision as its contents (YAML fields, paths, module source): equal files, equal keys. */
export function revisionKey(file: RuleFile): string {
  let key = revisionKeys.get(file)
  if (key === undefined) {
    const text = JSON.stringify([file.id, file.path, file.data, file.pythonPath ?? null, file.pythonSource ?? null])
    revisionKeys.set(file, (key = createHash('sha256').update(text).digest('hex')))
  }
  return key
}

export class Quarantine {
  private readonly strikes = new WeakMap<RuleFile, number>()
  /** Rule id → the revision held and its entry. */
  private readonly entries = new Map<string, { key: string; entry: QuarantineEntry }>()
  private readonly overruns: Counter<'kind'> | undefined

  constructor(
    readonly after: number,
    metrics?: Registry,
  ) {
    if (!metrics) return
    const entries = this.entries
    new Gauge({
      name: 'rulekeeper_detection_rules_quarantined',
      help: 'Python rules not evaluated in detection until their next revision (stopped batch after batch)',
      registers: [metrics],
      collect() {
        this.set(entries.size)
      },
    })
    this.overruns = new Counter({
      name: 'rulekeeper_detection_rule_overruns_total',
      help: 'Python rules stopped in a detection batch, by how (timeout: records past their clock; budget: the batch budget spent; killed: the worker killed at the deadline; crashed: the worker died)',
      labelNames: ['kind'],
      registers: [metrics],
    })
  }

  /** The entry of a quarantined rule at this revision, else undefined (another revision runs). */
  of(file: RuleFile): QuarantineEntry | undefined {
    const held = this.entries.get(file.id)
    return held && held.key === revisionKey(file) ? held.entry : undefined
  }

  /** A batch in which the rule was stopped; returns the entry when this strike quarantines it. */
  strike(file: RuleFile, kind: OverrunKind, why: string): QuarantineEntry | undefined {
    this.overruns?.inc({ kind })
    const n = (this.strikes.get(file) ?? 0) + 1
    this.strikes.set(file, n)
    if (n < this.after) return undefined
    const entry = {
      ruleId: file.id,
      since: new Date().toISOString(),
      reason: `stopped in ${n} detection batches in a row (last: ${why})`,
    }
    this.entries.set(file.id, { key: revisionKey(file), entry })
    return entry
  }

  /** A batch the rule finished: its strikes start again from zero. */
  clean(file: RuleFile): void {
    if (this.strikes.has(file)) this.strikes.delete(file)
  }

  /** Strikes so far (the scheduler runs rules with strikes last in their worker). */
  strikesOf(file: RuleFile): number {
    return this.strikes.get(file) ?? 0
  }

  /** The rules quarantined now, for `/status`; `served`: a rule's file as served (a changed or gone one is lifted). */
  list(served?: (ruleId: string) => RuleFile | undefined): QuarantineEntry[] {
    if (served)
      for (const [id, held] of this.entries) {
        const file = served(id)
        if (!file || revisionKey(file) !== held.key) this.entries.delete(id)
      }
    return [...this.entries.values()].map((e) => e.entry).sort((a, b) => (a.ruleId < b.ruleId ? -1 : 1))
  }
}
