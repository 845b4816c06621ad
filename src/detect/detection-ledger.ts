// The durable record of detection, as a store keeps it: matches and signals, the alert groups,
// rule errors, and the checkpoint (how far each log file is evaluated) that ties them together.
// Contract: `add*` only stages a line; `commit` makes everything staged before the call durable
// together with the new checkpoint, or none of it (a restart sees the previous checkpoint and
// nothing staged after it); commits run one at a time, in call order. `open`ing a store yields
// only committed state. The files under `detections/` implement it (detection-store.ts); the one
// writer over it is the alert book (alert-book.ts).
import type { AlertAccess } from './alert-access.js'
import type { ContextRef, Group, MatchFields, RuleMeta } from './grouping.js'
import type { Location } from './stored-log.js'

export interface Checkpoint {
  version: 1
  /** Log file (relative to `logs/`) → offset up to which its records were evaluated. */
  logs: Record<string, number>
  /** Output file (relative to `detections/`) → committed length. */
  outputs: Record<string, number>
  /** The order key of the last record evaluated, and when. */
  lastKey: string | null
  evaluatedAt: string | null
  records: number
  /** Rules that still owe answers on records before `logs` (late-rules.ts): from where, per log file. */
  behind?: Record<string, Behind>
}

/** A rule owing answers: the revision it was late at, since when, and per log file the offset it owes from. */
export interface Behind {
  revision: string | null
  since: string
  logs: Record<string, number>
}

/** What a commit moves in the checkpoint: `logs` is merged in, `records` added. */
export interface CheckpointUpdate {
  logs?: Record<string, number>
  lastKey?: string | null
  records?: number
  /** Replaces the rules owing answers (an empty map: none). */
  behind?: Record<string, Behind>
}

export interface RuleErrorRecord {
  ruleId: string
  revision: string | null
  time: string
  record: { partition: string; offset: number } | null
  error: string
}

/**
 * A match for a store that decides groups itself (`addGroupMatch`): what grouping.ts needs to place
 * it in its rule and dedup string's window and count it, and who to tell when it makes its group an alert.
 */
export interface GroupDelta {
  rule: RuleMeta
  match: MatchFields & { destinations?: unknown }
  eventMs: number
  /** The matched record (the summary attributes are counted from it). */
  event: unknown
  now: number
  /**
   * Called inside the commit, before the group is written, when this match made its group an alert
   * (whichever replica's matches counted before): what it sets on the group is written with it.
   */
  onAlert(group: Group, rule: RuleMeta, match: MatchFields & { destinations?: unknown }): void
}

/** One match or signal line: its event time (where it is kept) and its fields. */
export type MatchLine = [eventTime: string, match: Record<string, unknown>]

/** The committed matches and signals in a span of event time (correlation-signals.ts reads them). */
export interface MatchReader {
  /**
   * Match lines of the event hours between two times (inclusive) that `keep` accepts; `quick`,
   * when given, drops lines by their text before they are parsed (`keep` still decides).
   */
  readMatches(
    fromMs: number,
    toMs: number,
    keep: (m: Record<string, unknown>) => boolean,
    quick?: (line: string) => boolean,
  ): Promise<Array<Record<string, unknown>>>
}

export interface DetectionLedger extends MatchReader {
  /** The last committed checkpoint (it moves when a commit is durable). */
  readonly checkpoint: Checkpoint
  /** The groups (the last state of each) committed before this start, and the newest rule errors (a bounded tail). */
  readonly groups: readonly Group[]
  readonly errors: readonly RuleErrorRecord[]
  /**
   * Stages a match line (its fields, or its JSON text); answers where that line is when the store can
   * read contexts back (`readContext`) and the line may hold the match's alert context (always for a
   * text), so a group the match opens points there instead of storing the same context a second time.
   */
  addMatch(eventTime: string, match: Record<string, unknown> | string): ContextRef | undefined
  /**
   * Present when the store decides alert groups itself, in the commit (PostgreSQL, shared by
   * replicas): stages a match line whose top-level `"alertId":null` the store fills with the group
   * it places `delta` in. The book then keeps no group of these matches in memory.
   */
  addGroupMatch?(eventTime: string, line: string, delta: GroupDelta): void
  /** Present when the store serves the alerts itself (reads and triage from its database). */
  readonly alerts?: AlertAccess
  /** A group's whole state (the last one committed wins). */
  addGroup(g: Group): void
  /**
   * Present when replicas share the store: the committed groups of these rules whose window starts
   * at or after `sinceMs` that `keep` accepts (a scheduled rule's groups, read again before its run:
   * the replica holding the schedules lease may not be the one that last wrote them); the store
   * counts what it answers as what the book now holds.
   */
  ruleGroups?(ruleIds: readonly string[], sinceMs: number, keep: (id: string) => boolean): Promise<Group[]>
  addError(e: RuleErrorRecord): void
  commit(update?: CheckpointUpdate): Promise<void>
  /** The stored records of an alert's committed matches, sorted by data file then offset. */
  alertEvents(g: Group): Promise<Location[]>
  /**
   * The alert context a staged group's `contextAt` locates, once committed. A store without it
   * keeps every context in memory (the book drops a committed group's context only when it has it).
   */
  readContext?(ref: ContextRef): Promise<Record<string, unknown>>
  /** A compact snapshot of the groups for the next start, when due or `force`d; `idle` gives them when nothing is uncommitted. */
  saveIndex?(idle: () => Iterable<Group> | null, force?: boolean): Promise<void>
  /** Waits for the commits under way, then releases what the store holds open. */
  close(): Promise<void>
}
