// The pieces of the detection-on-ingest benches (detect-ingest, replicas-ingest): a child server
// with the Editor.Audit source and an API token, the 100 simple rules they load, the server's API,
// CPU seconds of processes from /proc, and what the server's /metrics and /status say of detection
// (lag histogram, evaluations, caught up).
import { readdir, readFile } from 'node:fs/promises'
import { performance } from 'node:perf_hooks'
import { type ChildServer, startChild } from '../test/helpers/child-server.js'
import { SAMPLE_BODIES } from '../test/helpers/rulekeeper.js'

export const RULES = 100
export const SOURCE_TOKEN = 'bench-detect-source-token'
export const API_TOKEN = 'rk-bench-detect-ingest-bootstrap-token-0123'
/** The user of record i of the load: ten users (for the grouping). */
export const USER = (i: number) => `user${i % 10}@example.com`
const TICKS = 100 // /proc clock ticks per second (USER_HZ)

/**
 * Rule k: three conditions as real rules have them (most records fail the first or second); rule 21
 * matches 1% of the records (one per request), grouped by user.
 */
export function ruleBody(k: number) {
  return {
    ...SAMPLE_BODIES.simple(`Bench.Ingest.${String(k).padStart(3, '0')}`, {
      logTypes: ['Editor.Audit'],
      detection: [
        '- KeyPath: invite_email_sent.role',
        '  Condition: Equals',
        `  Value: ${k % 2 ? 'member' : 'admin'}`,
        '- KeyPath: team_id',
        '  Condition: IsIn',
        `  Values: ["${4800 + k}", "${4900 + k}"]`,
        '- KeyPath: metadata.id',
        '  Condition: EndsWith',
        `  Value: "-${k}"`,
        '',
      ].join('\n'),
      tests: [],
    }),
    groupBy: '- Key: user_email\n',
    dedupPeriodMinutes: 60,
  }
}

export async function api(c: ChildServer, method: string, p: string, body?: unknown): Promise<any> {
  const res = await fetch(`${c.url}${p}`, {
    method,
    headers: { 'X-API-Key': API_TOKEN, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  const text = await res.text()
  if (res.status !== 200) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 300)}`)
  return p === '/metrics' ? text : JSON.parse(text)
}

/** A child server with the bench's source and API tokens (and `env`), then `rules` of the rules above. */
export async function startDetectServer(dataDir: string, rules: number, env: Record<string, string> = {}) {
  const child = await startChild({
    dataDir,
    env: { RULEKEEPER_BOOTSTRAP_TOKEN: API_TOKEN, RULEKEEPER_EDITOR_AUDIT_TOKEN: SOURCE_TOKEN, ...env },
    timeoutMs: 60_000,
  })
  try {
    // Eight writers at once (the server batches concurrent writes into fewer commits).
    let next = 0
    const writer = async () => {
      for (let k = next++; k < rules; k = next++)
        await api(child, 'POST', '/simple-rules?run-tests-first=false', ruleBody(k))
    }
    await Promise.all(Array.from({ length: 8 }, writer))
  } catch (err) {
    await child.kill()
    throw err
  }
  return child
}

/** The fields of /proc/<pid>/stat after the command name (field 3 is index 0). */
async function statFields(pid: number): Promise<string[]> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
}

/** User + system CPU seconds of a process so far. */
export async function cpuSeconds(pid: number): Promise<number> {
  const f = await statFields(pid)
  return (Number(f[11]) + Number(f[12])) / TICKS
}

/**
 * CPU seconds of a process and its children so far: its own user + system, those of its children
 * that ended (cutime + cstime) and those of its live children (for a server forking a process per
 * connection, as PostgreSQL's postmaster). A child that ended in the interval counts whole.
 */
export async function treeCpuSeconds(pid: number): Promise<number> {
  const f = await statFields(pid)
  let ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const c = await statFields(Number(name))
      if (Number(c[1]) === pid) ticks += Number(c[11]) + Number(c[12]) + Number(c[13]) + Number(c[14])
    } catch {
      /* gone meanwhile: its CPU is in the parent's cutime now */
    }
  }
  return ticks / TICKS
}

/** Cumulative bucket counts of the detection lag histogram (Prometheus text). */
function lagBuckets(metrics: string): Array<[number, number]> {
  const out: Array<[number, number]> = []
  for (const m of metrics.matchAll(/^rulekeeper_detection_lag_seconds_bucket\{le="([^"]+)"\} (\d+)/gm))
    out.push([m[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(m[1]), Number(m[2])])
  return out
}

/** The smallest lag bucket holding 99% of the observed lags (s), the share within 2 s, the count. */
export function lagSummary(metrics: string): { p99: number; within2s: number; observed: number } {
  const buckets = lagBuckets(metrics)
  const total = buckets.at(-1)?.[1] ?? 0
  const p99 = buckets.find(([, n]) => n >= 0.99 * total)?.[0] ?? Number.NaN
  const at2 = buckets.find(([le]) => le === 2)?.[1] ?? 0
  return { p99, within2s: total > 0 ? at2 / total : 0, observed: total }
}

export const counter = (metrics: string, name: string) =>
  Number(new RegExp(`^${name} (\\d+)`, 'm').exec(metrics)?.[1] ?? Number.NaN)

/**
 * Waits until detection has evaluated `records` records and has no lag (polls /status; fails after
 * 10 minutes); answers the last status.
 */
export async function detectionCaughtUp(child: ChildServer, records: number): Promise<any> {
  const started = performance.now()
  for (;;) {
    const status = await api(child, 'GET', '/status')
    if (status.detection.checkpoint.records >= records && status.detection.lagSeconds === 0) return status
    if (performance.now() - started > 600_000) throw new Error('detection did not catch up within 10 min')
    await new Promise((r) => setTimeout(r, 50)) // wait: the poll interval of a wait on a condition
  }
}
