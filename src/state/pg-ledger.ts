// The PostgreSQL store of the DetectionLedger contract (detect/detection-ledger.ts), for replicas
// sharing one database (`state.postgres`): match and signal lines by event hour, the last state of
// each alert group keyed by group id (its context stored once, apart), rule errors, and a checkpoint
// per replica (each replica evaluates its own log files). A commit is one transaction: every line
// staged before it and the new checkpoint, or none of it (a failed commit leaves the database and
// the checkpoint in memory as they were). Reads see committed rows only.
import type pg from 'pg'
import { unavailable } from '../errors.js'
import type { Logger } from '../log.js'
import type { AlertAccess } from '../detect/alert-access.js'
import type {
  Checkpoint,
  CheckpointUpdate,
  DetectionLedger,
  GroupDelta,
  RuleErrorRecord,
} from '../detect/detection-ledger.js'
import type { ContextRef, Group } from '../detect/grouping.js'
import { DEFAULT_MAX_ERRORS } from '../detect/rule-error-window.js'
import type { Location } from '../detect/stored-log.js'
import { PgAlerts } from './pg-alerts.js'
import { CONTEXTS, decideGroups, parseState, SPLIT, stateText, writeGroups } from './pg-groups.js'
import { openPostgres, type PostgresOptions } from './postgres.js'
import { queueDeliveries } from './pg-outbox-schema.js'
import { inTransaction } from './transaction.js'

const EMPTY: Checkpoint = { version: 1, logs: {}, outputs: {}, lastKey: null, evaluatedAt: null, records: 0 }
/** Match lines read per query by `readMatches` (keyset pages, so memory holds one page of text). */
const PAGE = 5000

interface Staged {
  hours: string[]
  lines: string[]
  /** '' for none (an id is never empty). */
  alertIds: string[]
  groups: Map<string, Group>
  /** Matches the store places in their groups (addGroupMatch), with their line's position. */
  deltas: GroupDelta[]
  deltaLines: number[]
  contexts: Map<string, string>
  errors: string[]
}

const nothingStaged = (): Staged => ({
  hours: [],
  lines: [],
  alertIds: [],
  groups: new Map(),
  deltas: [],
  deltaLines: [],
  contexts: new Map(),
  errors: [],
})

/** An alert another replica made keeps its deliveries there (its outbox): none restored here. */
const THEIRS = 'alert AND alerted_by IS DISTINCT FROM $1 AND alerted_by IS NOT NULL'
const groupRow = (r: { state: string; theirs: boolean }): Group =>
  r.theirs ? { ...parseState(r.state), destinations: [] } : parseState(r.state)

const triageText = (g: Group) => JSON.stringify([g.status, g.assignee, g.comments, g.history])

/** Fills the listed columns of groups stored before them (migration 2 adds them empty). */
async function backfill(db: pg.Pool): Promise<void> {
  const { rows } = await db.query<{ state: string }>('SELECT state FROM alert_groups WHERE group_key IS NULL')
  if (rows.length === 0) return
  await inTransaction(db, async (client) => {
    const groups = rows.map((r) => parseState(r.state))
    await writeGroups(
      client,
      '',
      groups.map((g) => ({ g, state: stateText(g) })),
      new Set(),
    )
  })
}

/** The hour an event time's line is kept under: its date and hour as written (the file store's partition). */
const eventHour = (eventTime: string) => `${eventTime.slice(0, 10)}T${eventTime.slice(11, 13)}:00:00Z`
/**
 * The top-level `alertId` of a match line the alert book wrote: the first `"alertId":` in it (its
 * fields before it are fixed keys and strings, where a quote is always escaped).
 */
const ALERT_ID = /"alertId":(null|"(?:[^"\\]|\\.)*")/
function alertIdOf(line: string): string {
  const m = ALERT_ID.exec(line)
  const id: unknown = m ? JSON.parse(m[1]!) : (JSON.parse(line) as { alertId?: unknown }).alertId
  return typeof id === 'string' ? id : ''
}
// A batch goes as one text parameter, its items joined by newlines and split by the server (SPLIT,
// pg-groups.ts): JSON text has no raw newline (the file store's lines rely on it too), and pg's array
// parameters cost more to build than the insert (about 16 ms for 1,000 match lines).
/** A line with a raw newline (JSON allows them between tokens) made single-line. */
const oneLine = (line: string) => (line.includes('\n') ? JSON.stringify(JSON.parse(line)) : line)
const hourOf = (ms: number) => new Date(Math.floor(ms / 3_600_000) * 3_600_000).toISOString()

export class PgLedger implements DetectionLedger {
  private staged = nothingStaged()
  private tail: Promise<unknown> = Promise.resolve()
  private closed = false
  /** The alerts as the API reads and changes them, from the database (every replica sees the same). */
  readonly alerts: AlertAccess
  /** Alert id → its triage fields as this ledger last read or wrote them (`writeWhole`). */
  private readonly triageSeen = new Map<string, string>()

  private constructor(
    private readonly db: pg.Pool,
    /** This replica's name: the checkpoint's key (its own log files). */
    readonly replica: string,
    public checkpoint: Checkpoint,
    readonly groups: Group[],
    readonly errors: RuleErrorRecord[],
    private readonly ownsPool: boolean,
  ) {
    this.alerts = new PgAlerts(db, this)
    for (const g of groups) if (g.alert) this.triageSeen.set(g.id, triageText(g))
  }

  /** Opens the store at `url` (migrating its schema): its own pool, ended by `close`. */
  static async connect(o: PostgresOptions & { replica: string }, logger: Logger): Promise<PgLedger> {
    let pool: pg.Pool
    try {
      pool = await openPostgres(o, logger)
    } catch (err) {
      throw unavailable(`the PostgreSQL state store cannot be opened: ${(err as Error).message}`)
    }
    try {
      return await PgLedger.open(pool, o.replica, true)
    } catch (err) {
      await pool.end().catch(() => {})
      throw err
    }
  }

  /** The committed state on a pool whose schema is migrated; `ownsPool`: `close` ends the pool. */
  static async open(db: pg.Pool, replica: string, ownsPool = false): Promise<PgLedger> {
    const cp = await db.query<{ checkpoint: string }>(
      'SELECT checkpoint FROM detection_checkpoints WHERE replica = $1',
      [replica],
    )
    await backfill(db)
    const groups = await db.query<{ state: string; theirs: boolean }>(
      `SELECT state, ${THEIRS} AS theirs FROM alert_groups ORDER BY id`,
      [replica],
    )
    const errors = await db.query<{ error: string }>(
      'SELECT error FROM (SELECT seq, error FROM rule_errors ORDER BY seq DESC LIMIT $1) e ORDER BY seq',
      [DEFAULT_MAX_ERRORS],
    )
    return new PgLedger(
      db,
      replica,
      cp.rows[0] ? (JSON.parse(cp.rows[0].checkpoint) as Checkpoint) : EMPTY,
      groups.rows.map(groupRow),
      errors.rows.map((r) => JSON.parse(r.error) as RuleErrorRecord),
      ownsPool,
    )
  }

  /** Stages a line; never answers a place for its context (a group keeps its own, `addGroup`). */
  addMatch(eventTime: string, match: Record<string, unknown> | string): undefined {
    this.staged.hours.push(eventHour(eventTime))
    if (typeof match === 'string') {
      this.staged.lines.push(oneLine(match))
      this.staged.alertIds.push(alertIdOf(match))
    } else {
      this.staged.lines.push(JSON.stringify(match))
      this.staged.alertIds.push(typeof match.alertId === 'string' ? match.alertId : '')
    }
    return undefined
  }

  /** Stages a match the commit places in its group (pg-groups.ts); its line's alertId is filled then. */
  addGroupMatch(eventTime: string, line: string, delta: GroupDelta): void {
    this.staged.deltaLines.push(this.staged.lines.length)
    this.staged.deltas.push(delta)
    this.addMatch(eventTime, line)
  }

  /** Stages a group's state; its context, while the book still holds it, goes with it (stored once). */
  addGroup(g: Group): void {
    if (g.alertContext !== null) {
      this.staged.contexts.set(g.id, JSON.stringify(g.alertContext))
      g.contextAt ??= { file: `${CONTEXTS}${g.id}`, offset: 0, length: 0 }
    }
    this.staged.groups.set(g.id, { ...g, alertContext: null, summaryCounts: structuredClone(g.summaryCounts) })
  }

  async ruleGroups(ruleIds: readonly string[], sinceMs: number, keep: (id: string) => boolean): Promise<Group[]> {
    const ids = ruleIds.filter((id) => !id.includes('\u0000'))
    if (ids.length === 0) return []
    const { rows } = await this.db.query<{ state: string; theirs: boolean }>(
      `SELECT state, ${THEIRS} AS theirs FROM alert_groups
         WHERE rule_id = ANY($2) AND window_start_ms >= $3 ORDER BY id`,
      [this.replica, ids, Math.floor(sinceMs)],
    )
    const groups = rows.map(groupRow).filter((g) => keep(g.id))
    // Taken by the book: the triage the database has is the one its copy now shows.
    for (const g of groups) if (g.alert) this.triageSeen.set(g.id, triageText(g))
    return groups
  }

  addError(e: RuleErrorRecord): void {
    this.staged.errors.push(JSON.stringify(e))
  }

  async readContext(ref: ContextRef): Promise<Record<string, unknown>> {
    if (!ref.file.startsWith(CONTEXTS)) throw new Error(`no alert context at ${ref.file}`)
    const { rows } = await this.db.query<{ context: string }>(
      'SELECT context FROM alert_contexts WHERE group_id = $1',
      [ref.file.slice(CONTEXTS.length)],
    )
    if (!rows[0]) throw new Error(`the alert context of ${ref.file.slice(CONTEXTS.length)} is not committed`)
    const c = JSON.parse(rows[0].context) as unknown
    return typeof c === 'object' && c !== null ? (c as Record<string, unknown>) : {}
  }

  /** Everything staged so far and the new checkpoint, in one transaction; commits run in call order. */
  commit(update: CheckpointUpdate = {}): Promise<void> {
    const work = this.staged
    this.staged = nothingStaged()
    const run = this.tail.then(async () => {
      const prev = this.checkpoint
      const next: Checkpoint = {
        version: 1,
        logs: update.logs ? { ...prev.logs, ...update.logs } : prev.logs,
        outputs: {},
        lastKey: update.lastKey === undefined ? prev.lastKey : update.lastKey,
        evaluatedAt: update.logs ? new Date().toISOString() : prev.evaluatedAt,
        records: prev.records + (update.records ?? 0),
      }
      const behind = update.behind === undefined ? prev.behind : update.behind
      if (behind && Object.keys(behind).length > 0) next.behind = behind
      const seen = await this.transaction(work, next)
      // Durable: the triage this ledger wrote is the one the database has.
      for (const [id, text] of seen) this.triageSeen.set(id, text)
      this.checkpoint = next
    })
    this.tail = run.catch(() => undefined)
    return run
  }

  /** The commit's transaction; answers the triage texts of the alerts it wrote whole (for `triageSeen`). */
  private transaction(work: Staged, next: Checkpoint): Promise<Map<string, string>> {
    return inTransaction(this.db, async (client) => {
      const seen = new Map<string, string>()
      let lockedWhole: string[] | undefined
      if (work.deltas.length > 0) {
        const decided = await decideGroups(client, work.deltas, [...work.groups.keys()])
        lockedWhole = decided.whole
        for (const [i, at] of work.deltaLines.entries()) {
          const id = decided.ids[i]!
          work.lines[at] = work.lines[at]!.replace('"alertId":null', () => `"alertId":${JSON.stringify(id)}`)
          work.alertIds[at] = id
        }
        for (const [id, c] of decided.contexts) work.contexts.set(id, c)
        const changed = decided.changed.map((g) => ({ g, state: stateText(g) }))
        await writeGroups(client, this.replica, changed, decided.became)
        await queueDeliveries(
          client,
          decided.changed.filter((g) => decided.became.has(g.id)),
        )
      }
      if (work.lines.length > 0)
        await client.query(
          `INSERT INTO detection_matches (replica, event_hour, alert_id, line)
           SELECT $1, h::timestamptz, NULLIF(a, ''), l FROM unnest(${SPLIT(2)}, ${SPLIT(3)}, ${SPLIT(4)})
           WITH ORDINALITY AS u(h, a, l, n) ORDER BY n`,
          [this.replica, work.hours.join('\n'), work.alertIds.join('\n'), work.lines.join('\n')],
        )
      if (work.contexts.size > 0)
        await client.query(
          `INSERT INTO alert_contexts (group_id, context) SELECT * FROM unnest(${SPLIT(1)}, ${SPLIT(2)})
           ON CONFLICT (group_id) DO NOTHING`,
          [[...work.contexts.keys()].join('\n'), [...work.contexts.values()].join('\n')],
        )
      if (work.groups.size > 0) await this.writeWhole(client, work.groups, seen, lockedWhole)
      if (work.errors.length > 0)
        await client.query(
          `INSERT INTO rule_errors (replica, error)
           SELECT $1, e FROM unnest(${SPLIT(2)}) WITH ORDINALITY AS u(e, n) ORDER BY n`,
          [this.replica, work.errors.join('\n')],
        )
      await client.query(
        `INSERT INTO detection_checkpoints (replica, checkpoint) VALUES ($1, $2)
         ON CONFLICT (replica) DO UPDATE SET checkpoint = excluded.checkpoint, updated_at = now()`,
        [this.replica, JSON.stringify(next)],
      )
      return seen
    })
  }

  /**
   * Whole group states (a correlation run's, a scheduled query's). An alert's deliveries are kept
   * as the database has them; so are its triage fields (the API changes them in the database:
   * pg-alerts.ts) unless the staged state changed them since this ledger last read or wrote them.
   */
  private async writeWhole(
    client: pg.PoolClient,
    groups: Map<string, Group>,
    seen: Map<string, string>,
    locked?: string[],
  ): Promise<void> {
    // Locked already when the commit placed matches too (decideGroups: one id order for every row).
    const states =
      locked ??
      (
        await client.query<{ state: string }>(
          `SELECT state FROM alert_groups WHERE id = ANY(${SPLIT(1)}) ORDER BY id FOR UPDATE`,
          [[...groups.keys()].join('\n')],
        )
      ).rows.map((r) => r.state)
    const wasAlert = new Set<string>()
    for (const state of states) {
      const had = parseState(state)
      const g = groups.get(had.id)
      if (!g || !had.alert) continue
      wasAlert.add(g.id)
      // The book's triage as this ledger last read or wrote it: the database's is newer.
      if (triageText(g) === this.triageSeen.get(g.id))
        Object.assign(g, { status: had.status, assignee: had.assignee, comments: had.comments, history: had.history })
      g.destinations = had.destinations
    }
    const became = new Set<string>()
    for (const g of groups.values()) {
      if (g.alert && !wasAlert.has(g.id)) became.add(g.id)
      if (g.alert) seen.set(g.id, triageText(g))
    }
    await writeGroups(
      client,
      this.replica,
      [...groups.values()].map((g) => ({ g, state: stateText(g) })),
      became,
    )
    await queueDeliveries(
      client,
      [...became].map((id) => groups.get(id)!),
    )
  }

  /**
   * Committed match lines (every replica's) of the event hours from one time to another, inclusive,
   * in hour then commit order, that `keep` accepts; `quick` drops lines by their text first.
   */
  async readMatches(
    fromMs: number,
    toMs: number,
    keep: (m: Record<string, unknown>) => boolean,
    quick?: (line: string) => boolean,
  ): Promise<Array<Record<string, unknown>>> {
    const out: Array<Record<string, unknown>> = []
    let after: { hour: Date; seq: string } | null = null
    for (;;) {
      const page: pg.QueryResult<{ event_hour: Date; seq: string; line: string }> = await this.db.query(
        `SELECT event_hour, seq, line FROM detection_matches
         WHERE event_hour >= $1 AND event_hour <= $2 AND ($3::timestamptz IS NULL OR (event_hour, seq) > ($3, $4::bigint))
         ORDER BY event_hour, seq LIMIT ${PAGE}`,
        [hourOf(fromMs), hourOf(toMs), after?.hour ?? null, after?.seq ?? null],
      )
      const rows = page.rows
      for (const r of rows) {
        if (quick && !quick(r.line)) continue
        const m = JSON.parse(r.line) as Record<string, unknown>
        if (keep(m)) out.push(m)
      }
      if (rows.length < PAGE) return out
      const last: { event_hour: Date; seq: string } = rows[rows.length - 1]!
      after = { hour: last.event_hour, seq: last.seq }
    }
  }

  /** The stored records of the alert's committed matches, sorted by data file then offset. */
  async alertEvents(g: Group): Promise<Location[]> {
    const { rows } = await this.db.query<{ line: string }>('SELECT line FROM detection_matches WHERE alert_id = $1', [
      g.id,
    ])
    const out: Location[] = []
    for (const { line } of rows) {
      const r = (JSON.parse(line) as { record?: { partition?: unknown; offset?: unknown } }).record
      if (typeof r?.partition === 'string' && Number.isSafeInteger(r.offset))
        out.push({ partition: r.partition, offset: r.offset as number })
    }
    return out.sort((a, b) =>
      a.partition !== b.partition ? (a.partition < b.partition ? -1 : 1) : a.offset - b.offset,
    )
  }

  /** Waits for the commits under way; ends the pool when this ledger opened it. */
  async close(): Promise<void> {
    await this.tail
    if (this.ownsPool && !this.closed) {
      this.closed = true
      await this.db.end()
    }
  }
}
