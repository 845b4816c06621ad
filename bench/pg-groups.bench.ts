// The cost of alert groups decided by the PostgreSQL store (src/state/pg-groups.ts) against the
// file store's in-memory grouping, through the alert book in the same run: a commit of 1,000
// matches joining 100 groups (per match), a commit of 100 matches each opening a new alert (per
// alert), and a filtered alerts page (limit 100) read from the database (state/pg-alerts.ts)
// against the in-memory alert index (detect/alert-index.ts) over the same alerts.
import pg from 'pg'
import pino from 'pino'
import { AlertBook } from '../src/detect/alert-book.js'
import { AlertIndex } from '../src/detect/alert-index.js'
import type { DetectionLedger } from '../src/detect/detection-ledger.js'
import { DetectionStore } from '../src/detect/detection-store.js'
import type { Group, RuleMeta } from '../src/detect/grouping.js'
import { stateText, writeGroups } from '../src/state/pg-groups.js'
import { PgLedger } from '../src/state/pg-ledger.js'
import { inTransaction } from '../src/state/transaction.js'
import { startPostgres } from '../test/helpers/postgres-server.js'
import { type BenchContext, type BenchModule, type BenchResult, percentile } from './lib.js'

const logger = pino({ level: 'silent' })
const FILE = 'Editor.Audit/dt=2026-11-20/hour=10/bench.ndjson'
const SEVERITIES = ['INFO', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL']
const STATUSES = ['OPEN', 'TRIAGED', 'CLOSED', 'RESOLVED'] as const

const rule = (i: number): RuleMeta => ({
  id: `Bench.R${i % 20}`,
  kind: 'simple',
  revision: '0'.repeat(40),
  logTypes: ['Editor.Audit'],
  threshold: 1,
  dedupPeriodMinutes: 60,
  createAlert: true,
  summaryAttributes: ['user'],
  description: '',
  runbook: '',
  reference: '',
  outputIds: [],
})

let offset = 0
/** `n` matches over `keys` dedup strings (from `first`), each with its record and context, then one commit. */
async function commit(book: AlertBook, n: number, keys: number, first: number): Promise<number> {
  const t0 = performance.now()
  for (let i = 0; i < n; i++) {
    const k = first + (i % keys)
    const record = { user: `user${k}@example.com`, ip: '192.0.2.10', action: 'create', n: i }
    const rec = {
      file: FILE,
      offset: (offset += 400),
      logType: 'Editor.Audit',
      eventTime: '2026-11-20T10:30:00.000Z',
      record,
    }
    const fields = {
      title: 'A benchmark alert',
      severity: 'MEDIUM',
      dedup: `user${k}@example.com`,
      alertContext: record,
    }
    book.addMatch(rec, rule(k), fields, Date.now())
  }
  await book.commit({ logs: { [FILE]: offset }, records: n })
  return performance.now() - t0
}

async function rounds(ledger: DetectionLedger, count: number, n: number, keys: number, fresh: boolean) {
  const book = new AlertBook(ledger, { alertsPerRuleHour: 1e9 })
  const ms: number[] = []
  for (let r = 0; r <= count; r++) {
    const took = await commit(book, n, keys, fresh ? 1_000_000 + r * keys : 0)
    if (r > 0) ms.push(took)
  }
  return { median: percentile(ms, 50), p90: percentile(ms, 90), count: ms.length }
}

function alertGroup(i: number): Group {
  const t = new Date(Date.UTC(2026, 10, 1) + i * 20_000).toISOString()
  return {
    id: `${i.toString(16).padStart(8, '0')}${'0'.repeat(24)}`,
    ruleId: `Bench.Rule.${String(i % 97 === 0 ? 0 : i % 500).padStart(3, '0')}`,
    ruleKind: 'simple',
    revision: null,
    severity: SEVERITIES[i % 5]!,
    title: `Something happened for user${i % 997}`,
    dedup: `user${i}`,
    alertContext: null,
    logTypes: ['Editor.Audit'],
    windowStart: t,
    eventCount: 1,
    firstEventTime: t,
    lastEventTime: t,
    alert: true,
    createdAt: t,
    updatedAt: t,
    status: STATUSES[i % 10 < 8 ? 0 : ((i % 4) as 0 | 1 | 2 | 3)],
    description: '',
    runbook: '',
    reference: '',
    destinations: [],
    summaryCounts: {},
  }
}

const bench: BenchModule = async (ctx: BenchContext): Promise<BenchResult[]> => {
  const count = Math.max(3, Math.round(20 * ctx.scale))
  ctx.progress('pg-groups: starting PostgreSQL (fsync on)')
  const server = await startPostgres()
  try {
    const admin = new pg.Client({ connectionString: server.url() })
    await admin.connect()
    await admin.query('CREATE DATABASE bench')
    await admin.end()
    const file = await DetectionStore.open(ctx.tmpDir, logger)
    const pgl = await PgLedger.connect({ url: server.url('bench'), replica: 'bench' }, logger)
    const rows: BenchResult[] = []
    try {
      ctx.progress(`pg-groups: ${count} commits of 1,000 matches into 100 groups, then of 100 new alerts`)
      const fileJoin = await rounds(file, count, 1000, 100, false)
      const pgJoin = await rounds(pgl, count, 1000, 100, false)
      const fileNew = await rounds(file, count, 100, 100, true)
      const pgNew = await rounds(pgl, count, 100, 100, true)
      const row = (name: string, per: string, n: number, p: typeof pgJoin, f: typeof pgJoin): BenchResult => ({
        name,
        target: 'measured (issue 30: the cost per alert of the PostgreSQL upsert)',
        value: (p.median * 1000) / n,
        unit: `µs per ${per}`,
        baseline: { name: 'file store (grouping in memory)', value: (f.median * 1000) / n, unit: `µs per ${per}` },
        ratio: p.median / f.median,
        pass: true,
        notes: `commit median ${p.median.toFixed(1)} ms, p90 ${p.p90.toFixed(1)} ms (file store ${f.median.toFixed(1)} / ${f.p90.toFixed(1)} ms); ${p.count} commits`,
      })
      rows.push(row('1,000 matches joining 100 groups, per match', 'match', 1000, pgJoin, fileJoin))
      rows.push(row('100 matches each making a new alert, per alert', 'alert', 100, pgNew, fileNew))

      const n = Math.max(2000, Math.round(100_000 * ctx.scale))
      ctx.progress(`pg-groups: ${n} alerts written, then filtered pages`)
      const groups = Array.from({ length: n }, (_, i) => alertGroup(i))
      const db = new pg.Pool({ connectionString: server.url('bench'), max: 2 })
      for (let i = 0; i < n; i += 5000)
        await inTransaction(db, (c) =>
          writeGroups(
            c,
            'bench',
            groups.slice(i, i + 5000).map((g) => ({ g, state: stateText(g) })),
            new Set(),
          ),
        )
      await db.query('ANALYZE alert_groups')
      await db.end()
      const index = new AlertIndex()
      for (const g of groups) index.add(g)
      const filters = [
        { ruleIds: ['Bench.Rule.000'] },
        { ruleIds: ['Bench.Rule.250'], statuses: ['OPEN'] },
        { severities: ['HIGH'], statuses: ['TRIAGED'] },
        { statuses: ['OPEN'] },
        {},
      ]
      const pgMs: number[] = []
      const memMs: number[] = []
      for (let r = 0; r < Math.max(5, Math.round(40 * ctx.scale)); r++)
        for (const f of filters) {
          let t0 = performance.now()
          const page = await pgl.alerts.query({ ...f, limit: 100 })
          pgMs.push(performance.now() - t0)
          t0 = performance.now()
          index.query({ ...f, limit: 100 })
          memMs.push(performance.now() - t0)
          if (page.next) await pgl.alerts.query({ ...f, limit: 100, after: page.next })
        }
      const p99 = percentile(pgMs, 99)
      rows.push({
        name: `alerts page (limit 100, filtered) at ${n} alerts, PostgreSQL vs in-memory index`,
        target: '≤ 20 ms p99 (the alerts-list target)',
        value: p99,
        unit: 'ms p99',
        baseline: { name: 'in-memory alert index', value: percentile(memMs, 99), unit: 'ms p99' },
        ratio: p99 / percentile(memMs, 99),
        pass: p99 <= 20,
        notes: `median ${percentile(pgMs, 50).toFixed(2)} ms; the store's query only (no HTTP, contexts joined)`,
      })
      return rows
    } finally {
      await file.close()
      await pgl.close()
    }
  } finally {
    await server.stop()
  }
}

export default bench
