// The cost of a detection commit on the PostgreSQL store (src/state/pg-ledger.ts) against the file
// store (src/detect/detection-store.ts) in the same run: a commit of 1,000 match lines (as the alert
// book writes them, each with its alert context) and 100 group states, and a commit of one match and
// one group (a lone status change or correlation output). PostgreSQL runs here on a Unix socket with
// fsync on (a commit is durable on both sides); the time is from `commit()` to its resolution.
import pino from 'pino'
import { DetectionStore } from '../src/detect/detection-store.js'
import type { DetectionLedger } from '../src/detect/detection-ledger.js'
import type { Group } from '../src/detect/grouping.js'
import { PgLedger } from '../src/state/pg-ledger.js'
import { startPostgres } from '../test/helpers/postgres-server.js'
import { percentile, type BenchContext, type BenchModule, type BenchResult } from './lib.js'
import pg from 'pg'

const logger = pino({ level: 'silent' })

function groupState(i: number, round: number): Group {
  return {
    id: `g${String(i).padStart(31, '0')}`,
    ruleId: `Bench.R${i % 20}`,
    ruleKind: 'simple',
    revision: '0'.repeat(40),
    severity: 'MEDIUM',
    title: 'A benchmark alert',
    dedup: `["user${i}@example.com"]`,
    alertContext: null,
    logTypes: ['Editor.Audit'],
    windowStart: '2026-11-20T10:00:00.000Z',
    eventCount: round * 10 + 1,
    firstEventTime: '2026-11-20T10:00:00.000Z',
    lastEventTime: '2026-11-20T10:30:00.000Z',
    alert: true,
    createdAt: '2026-11-20T10:00:01.000Z',
    updatedAt: new Date().toISOString(),
    status: 'OPEN',
    description: 'what the rule looks for',
    runbook: 'what to do',
    reference: 'https://example.com/runbook',
    destinations: [],
    summaryCounts: { user_email: { [`"user${i}@example.com"`]: round * 10 + 1 } },
  }
}

/** A match line as the alert book writes it (text, with its alert context). */
function matchLine(i: number, round: number): [string, string] {
  const eventTime = new Date(Date.UTC(2026, 10, 20, 10) + ((round * 1000 + i) % 3_600_000)).toISOString()
  return [
    eventTime,
    JSON.stringify({
      id: `m${round}-${i}`,
      ruleId: `Bench.R${i % 20}`,
      ruleKind: 'simple',
      revision: '0'.repeat(40),
      logType: 'Editor.Audit',
      eventTime,
      record: { partition: 'Editor.Audit/dt=2026-11-20/hour=10/bench.ndjson', offset: (round * 1000 + i) * 400 },
      dedup: `["user${i % 100}@example.com"]`,
      title: 'A benchmark alert',
      severity: 'MEDIUM',
      signal: false,
      alertId: `g${String(i % 100).padStart(31, '0')}`,
      alertContext: { user: `user${i % 100}@example.com`, ip: '192.0.2.10', action: 'create', n: i },
    }),
  ]
}

/**
 * Median and p90 of `rounds` commits of `matches` lines and `groups` states (after one warm-up),
 * each timed from its first `add` (staging is part of a store's cost) to the commit's resolution.
 */
async function commits(l: DetectionLedger, rounds: number, matches: number, groups: number) {
  const ms: number[] = []
  const made = Array.from({ length: rounds + 1 }, (_, round) => ({
    lines: Array.from({ length: matches }, (_, i) => matchLine(i, round)),
    groups: Array.from({ length: groups }, (_, i) => groupState(i, round)),
  }))
  for (const [round, { lines, groups: states }] of made.entries()) {
    const t0 = performance.now()
    for (const line of lines) l.addMatch(...line)
    for (const g of states) l.addGroup(g)
    await l.commit({ logs: { 'Editor.Audit/dt=2026-11-20/hour=10/bench.ndjson': round * 400_000 }, records: matches })
    if (round > 0) ms.push(performance.now() - t0)
  }
  return { median: percentile(ms, 50), p90: percentile(ms, 90), count: ms.length }
}

const bench: BenchModule = async (ctx: BenchContext): Promise<BenchResult[]> => {
  const rounds = Math.max(3, Math.round(30 * ctx.scale))
  ctx.progress('pg-ledger: starting PostgreSQL (fsync on)')
  const server = await startPostgres()
  try {
    const admin = new pg.Client({ connectionString: server.url() })
    await admin.connect()
    await admin.query('CREATE DATABASE bench')
    await admin.end()
    const file = await DetectionStore.open(ctx.tmpDir, logger)
    const pgl = await PgLedger.connect({ url: server.url('bench'), replica: 'bench' }, logger)
    try {
      ctx.progress(`pg-ledger: ${rounds} commits of 1,000 matches + 100 groups on each store`)
      const fileBig = await commits(file, rounds, 1000, 100)
      const pgBig = await commits(pgl, rounds, 1000, 100)
      ctx.progress(`pg-ledger: ${rounds * 5} commits of 1 match + 1 group on each store`)
      const fileOne = await commits(file, rounds * 5, 1, 1)
      const pgOne = await commits(pgl, rounds * 5, 1, 1)
      const row = (name: string, p: typeof pgBig, f: typeof pgBig): BenchResult => ({
        name,
        target: 'measured (issue 30: the cost of the shared store)',
        value: p.median,
        unit: 'ms median',
        baseline: { name: 'file store', value: f.median, unit: 'ms median' },
        ratio: p.median / f.median,
        pass: true,
        notes: `p90 ${p.p90.toFixed(1)} ms (file store ${f.p90.toFixed(1)} ms); ${p.count} commits each`,
      })
      return [
        row('commit of 1,000 matches + 100 groups, PostgreSQL vs file store', pgBig, fileBig),
        row('commit of 1 match + 1 group, PostgreSQL vs file store', pgOne, fileOne),
      ]
    } finally {
      await file.close()
      await pgl.close()
    }
  } finally {
    await server.stop()
  }
}

export default bench
