// The stores of the DetectionLedger contract the conformance tests run against, one factory each:
// the file store (detection-store.ts), a store written here in memory (a commit made durable when
// the test says so), and PostgreSQL (state/pg-ledger.ts, on a real server started by the tests,
// a fresh database per test). `reopen` closes the ledger and opens it again on the same state.
import pino from 'pino'
import pg from 'pg'
import type {
  Checkpoint,
  CheckpointUpdate,
  DetectionLedger,
  RuleErrorRecord,
} from '../../src/detect/detection-ledger.js'
import { DetectionStore } from '../../src/detect/detection-store.js'
import type { Group } from '../../src/detect/grouping.js'
import type { Location } from '../../src/detect/stored-log.js'
import { PgLedger } from '../../src/state/pg-ledger.js'
import { freshDatabase } from '../helpers/postgres.js'
import { tempDir } from '../helpers/rulekeeper.js'

const hourStart = (ms: number) => Math.floor(ms / 3_600_000) * 3_600_000
const lineHour = (eventTime: string) => Date.parse(`${eventTime.slice(0, 10)}T${eventTime.slice(11, 13)}:00:00Z`)

/** A store in memory, a commit made durable when the test says so (`autoSettle` false, then `pending`). */
export class MemoryLedger implements DetectionLedger {
  checkpoint: Checkpoint = { version: 1, logs: {}, outputs: {}, lastKey: null, evaluatedAt: null, records: 0 }
  groups: Group[] = []
  errors: RuleErrorRecord[] = []
  matches: Array<{ hourMs: number; line: string }> = []
  private staged: { matches: Array<{ hourMs: number; line: string }>; groups: Group[]; errors: RuleErrorRecord[] } = {
    matches: [],
    groups: [],
    errors: [],
  }
  /** Commits not yet durable: `settle` makes the first durable (or fails it). */
  readonly pending: Array<{ ok: () => void; fail: (e: Error) => void }> = []
  autoSettle = true

  addMatch(eventTime: string, match: Record<string, unknown> | string): undefined {
    const line = typeof match === 'string' ? match : JSON.stringify(match)
    this.staged.matches.push({ hourMs: lineHour(eventTime), line })
    return undefined
  }
  addGroup(g: Group): void {
    this.staged.groups.push(structuredClone(g))
  }
  addError(e: RuleErrorRecord): void {
    this.staged.errors.push(e)
  }
  commit(update: CheckpointUpdate = {}): Promise<void> {
    const work = this.staged
    this.staged = { matches: [], groups: [], errors: [] }
    return new Promise<void>((done, fail) => {
      const ok = () => {
        this.matches.push(...work.matches)
        const byId = new Map(this.groups.map((g) => [g.id, g]))
        for (const g of work.groups) byId.set(g.id, g)
        this.groups = [...byId.values()]
        this.errors.push(...work.errors)
        this.checkpoint = {
          ...this.checkpoint,
          logs: { ...this.checkpoint.logs, ...update.logs },
          lastKey: update.lastKey === undefined ? this.checkpoint.lastKey : update.lastKey,
          records: this.checkpoint.records + (update.records ?? 0),
        }
        done()
      }
      if (this.autoSettle) queueMicrotask(ok)
      else this.pending.push({ ok, fail })
    })
  }
  async readMatches(
    fromMs: number,
    toMs: number,
    keep: (m: Record<string, unknown>) => boolean,
    quick?: (line: string) => boolean,
  ) {
    return this.matches
      .filter((m) => m.hourMs >= hourStart(fromMs) && m.hourMs <= hourStart(toMs) && (!quick || quick(m.line)))
      .sort((a, b) => a.hourMs - b.hourMs)
      .map((m) => JSON.parse(m.line) as Record<string, unknown>)
      .filter(keep)
  }
  async alertEvents(g: Group): Promise<Location[]> {
    return this.matches
      .map((m) => JSON.parse(m.line) as Record<string, unknown>)
      .filter((m) => m.alertId === g.id)
      .map((m) => m.record as Location)
      .sort((a, b) => (a.partition < b.partition ? -1 : a.partition > b.partition ? 1 : a.offset - b.offset))
  }
  async close(): Promise<void> {}
}

/** A whole alert group, an alert, changed by `over`. */
export function group(id: string, over: Partial<Group> = {}): Group {
  return {
    id,
    ruleId: 'R.Contract',
    ruleKind: 'simple',
    revision: null,
    severity: 'HIGH',
    title: 'a title',
    dedup: 'u@example.com',
    alertContext: null,
    logTypes: ['Editor.Audit'],
    windowStart: '2026-11-20T10:00:00.000Z',
    eventCount: 1,
    firstEventTime: '2026-11-20T10:00:00.000Z',
    lastEventTime: '2026-11-20T10:00:00.000Z',
    alert: true,
    createdAt: '2026-11-20T10:00:01.000Z',
    updatedAt: '2026-11-20T10:00:01.000Z',
    status: 'OPEN',
    description: '',
    runbook: '',
    reference: '',
    destinations: [],
    summaryCounts: {},
    ...over,
  }
}

export interface LedgerUnderTest {
  ledger: DetectionLedger
  /** Closes the ledger and opens the same state again (what a restart sees). */
  reopen: () => Promise<DetectionLedger>
}

const logger = pino({ level: 'silent' })

/** A PostgreSQL ledger on a fresh database (its own pool), and the database's URL. */
export async function pgLedger(replica = 'replica-a'): Promise<LedgerUnderTest & { url: string; ledger: PgLedger }> {
  const url = await freshDatabase()
  const ledger = await PgLedger.connect({ url, replica }, logger)
  return {
    url,
    ledger,
    reopen: async () => {
      await ledger.close()
      return PgLedger.connect({ url, replica }, logger)
    },
  }
}

/** Counts rows of the store's tables (what a failed commit must not have left behind). */
export async function pgRows(url: string): Promise<Record<string, number>> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    const out: Record<string, number> = {}
    for (const table of [
      'detection_matches',
      'alert_groups',
      'alert_contexts',
      'rule_errors',
      'detection_checkpoints',
      'deliveries',
    ])
      out[table] = Number((await c.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n)
    return out
  } finally {
    await c.end()
  }
}

/** Every store of the contract: the same tests run against each. */
export const LEDGERS: ReadonlyArray<[string, () => Promise<LedgerUnderTest>]> = [
  [
    'file store',
    async () => {
      const dir = tempDir()
      const ledger = await DetectionStore.open(dir, logger)
      return {
        ledger,
        reopen: async () => {
          await ledger.close()
          return DetectionStore.open(dir, logger)
        },
      }
    },
  ],
  [
    'memory store',
    async () => {
      const ledger = new MemoryLedger()
      return {
        ledger,
        reopen: async () => {
          const again = new MemoryLedger()
          again.checkpoint = ledger.checkpoint
          again.groups = ledger.groups
          again.errors = ledger.errors
          again.matches = ledger.matches
          return again
        },
      }
    },
  ],
  ['PostgreSQL store', () => pgLedger()],
]
