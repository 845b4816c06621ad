// Alerts list: `GET /alerts` filtered, limit 100, at 100k alerts (target p99 ≤ 20 ms), against the
// unfiltered first page of the same server in the same run (the cheapest page: no selection work).
// The alerts are written as an alert journal + checkpoint before the server starts (as a restart
// finds them), spread over 500 rules (a few with most alerts), five severities and four statuses.
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import type { Group } from '../src/detect/grouping.js'
import { startTestServer } from '../test/helpers/rulekeeper.js'
import { percentile, type BenchContext, type BenchModule, type BenchResult } from './lib.js'

const FULL_ALERTS = 100_000
const RULES = 500
const SEVERITIES = ['INFO', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL']

function makeAlerts(n: number): Group[] {
  let state = 4242
  const rnd = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648
  const start = Date.UTC(2026, 10, 1)
  const out: Group[] = []
  for (let i = 0; i < n; i++) {
    // rule r with weight ~ 1/(r+1): R.0 has ~15% of the alerts, R.499 a few dozen
    const r = Math.min(RULES - 1, Math.floor(Math.exp(rnd() * Math.log(RULES + 1))) - 1)
    const u = rnd()
    const status = u < 0.8 ? 'OPEN' : u < 0.9 ? 'TRIAGED' : u < 0.97 ? 'CLOSED' : 'RESOLVED'
    const t = new Date(start + i * 20_000).toISOString()
    const id = `${i.toString(16).padStart(8, '0')}${'0'.repeat(24)}`
    out.push({
      id,
      ruleId: `Bench.Rule.${String(r).padStart(3, '0')}`,
      ruleKind: 'simple',
      revision: '0'.repeat(40),
      severity: SEVERITIES[Math.floor(rnd() * 5)]!,
      title: `Something happened for user${i % 997}`,
      dedup: `["user${i % 997}"]`,
      alertContext: { user: `user${i % 997}` },
      logTypes: ['Editor.Audit'],
      windowStart: t,
      eventCount: 1 + (i % 7),
      firstEventTime: t,
      lastEventTime: t,
      alert: true,
      createdAt: t,
      updatedAt: t,
      status: status as Group['status'],
      description: 'A benchmark alert',
      runbook: '',
      reference: '',
      destinations: [],
      summaryCounts: { user_email: { [`"user${i % 997}@example.com"`]: 1 + (i % 7) } },
    })
  }
  return out
}

function get(agent: http.Agent, url: URL, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers: { 'X-API-Key': token } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('error', reject)
  })
}

const bench: BenchModule = async (ctx: BenchContext): Promise<BenchResult[]> => {
  const n = Math.max(5_000, Math.round(FULL_ALERTS * ctx.scale))
  const dataDir = path.join(ctx.tmpDir, 'data')
  const det = path.join(dataDir, 'detections')
  fs.mkdirSync(path.join(det, 'alerts'), { recursive: true })
  ctx.progress(`alerts-list: writing ${n} alerts as a journal`)
  const alerts = makeAlerts(n)
  const journal = 'alerts/alerts-bench.ndjson'
  fs.writeFileSync(path.join(det, journal), alerts.map((g) => `${JSON.stringify(g)}\n`).join(''))
  const size = fs.statSync(path.join(det, journal)).size
  fs.writeFileSync(
    path.join(det, 'checkpoint.json'),
    JSON.stringify({
      version: 1,
      logs: {},
      outputs: { [journal]: size },
      lastKey: null,
      evaluatedAt: null,
      records: 0,
    }),
  )
  const started = performance.now()
  const server = await startTestServer({ dataDir })
  const startSeconds = (performance.now() - started) / 1000
  ctx.progress(
    `alerts-list: server up with ${server.server.detection.book.alertCount} alerts in ${startSeconds.toFixed(1)} s`,
  )
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  try {
    const rare = 'Bench.Rule.400'
    const mid = 'Bench.Rule.020'
    const big = 'Bench.Rule.000'
    const day = (d: number) => new Date(Date.UTC(2026, 10, 1 + d)).toISOString()
    // Narrow and broad selections; each is asked for its first page and its next pages by cursor.
    const filters: Record<string, string> = {
      'rare rule + 2 severities + status': `rule-id=${rare}&severity=HIGH,CRITICAL&status=OPEN`,
      'big rule + RESOLVED + CRITICAL': `rule-id=${big}&status=RESOLVED&severity=CRITICAL`,
      'three rules + TRIAGED': `rule-id=${rare},${mid},Bench.Rule.250&status=TRIAGED`,
      'status RESOLVED + severity INFO': 'status=RESOLVED&severity=INFO',
      'severity CRITICAL, one day': `severity=CRITICAL&created-after=${day(3)}&created-before=${day(4)}`,
      'rule with no alerts': 'rule-id=Bench.Rule.none&status=OPEN',
      'status OPEN (broad)': 'status=OPEN',
    }
    const time = async (query: string, pages: number) => {
      const out: number[] = []
      let cursor: string | null = null
      for (let p = 0; p < pages; p++) {
        const url = new URL(`/alerts?limit=100&${query}${cursor ? `&cursor=${cursor}` : ''}`, server.url)
        const t0 = performance.now()
        const res = await get(agent, url, server.token)
        const body = JSON.parse(res.body) as { next: string | null }
        out.push(performance.now() - t0)
        if (res.status !== 200) throw new Error(`GET ${url.pathname}${url.search}: ${res.status} ${res.body}`)
        cursor = body.next
        if (!cursor) cursor = null
      }
      return out
    }
    const rounds = ctx.scale < 1 ? 5 : 40
    const byFilter = new Map<string, number[]>()
    const base: number[] = []
    ctx.progress(
      `alerts-list: ${rounds} rounds of ${Object.keys(filters).length} filters × 3 pages, and the unfiltered page`,
    )
    for (let round = 0; round < rounds + 2; round++) {
      for (const [name, q] of Object.entries(filters)) {
        const ms = await time(q, 3)
        if (round >= 2) byFilter.set(name, [...(byFilter.get(name) ?? []), ...ms]) // two warm-up rounds
      }
      const ms = await time('', 3)
      if (round >= 2) base.push(...ms)
    }
    const all = [...byFilter.values()].flat()
    const p99 = percentile(all, 99)
    const baseP99 = percentile(base, 99)
    const per = [...byFilter].map(([name, ms]) => `${name} ${percentile(ms, 99).toFixed(1)}`).join(' / ')
    return [
      {
        name: `alerts list, filtered, limit 100, ${n} alerts, p99`,
        target: '<= 20 ms',
        value: Number(p99.toFixed(2)),
        unit: 'ms',
        baseline: { name: 'unfiltered first pages, same server, p99', value: Number(baseP99.toFixed(2)), unit: 'ms' },
        ratio: p99 / baseP99,
        pass: p99 <= 20,
        notes: `${all.length} filtered pages over HTTP (keep-alive, one client in the same process), median ${percentile(all, 50).toFixed(2)} ms; p99 by filter (ms): ${per}; ${RULES} rules, statuses 80/10/7/3%; server start with the journal ${startSeconds.toFixed(1)} s (${(size / 1e6).toFixed(0)} MB)`,
      },
    ]
  } finally {
    agent.destroy()
    await server.close()
  }
}

export default bench
