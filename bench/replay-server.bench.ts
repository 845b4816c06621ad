// POST /replay on a real server (a child `rulekeeper serve`, real port): stored Editor.Audit records
// written as the log source stores them, one disabled rule matching every record with a dedup string
// per record (an alert per record: the attack of issue 27 finding 1), replayed with a token that may
// see alerts and with one that may not. Measured: the server's peak RSS over its RSS before the
// replay (VmHWM, /proc), the slowest /healthz answer while the replay runs (asked back to back),
// the answer's bytes and status. Config: `detection.replay` from $BENCH_REPLAY_LIMITS (JSON).
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { TokenStore } from '../src/auth/token-store.js'
import { startChild } from '../test/helpers/child-server.js'
import { httpRequest, SAMPLE_BODIES } from '../test/helpers/rulekeeper.js'
import type { BenchContext, BenchModule, BenchResult } from './lib.js'
import { percentile } from './lib.js'

const FULL_RECORDS = 1_000_000
const FILES = 8
const TOKEN = 'rk_bench_replay_bootstrap_token_0123456789'

function storedLine(i: number, hour: number): string {
  const event = new Date(Date.UTC(2026, 10, 20, hour, 0, 0) + (i % 3_600_000)).toISOString()
  return JSON.stringify({
    ip_address: `198.51.100.${i % 250}`,
    user_email: `user${i % 200}@example.com`,
    metadata: { id: `r${i}`, timestamp: event },
    p_log_type: 'Editor.Audit',
    p_event_time: event,
    p_parse_time: new Date(Date.UTC(2026, 10, 21, 0, 0, 0) + Math.floor(i / 100)).toISOString(),
    p_row_id: `bench${String(i).padStart(10, '0')}`,
  })
}

/** A value of /proc/<pid>/status in bytes (VmRSS, VmHWM). */
async function procKb(pid: number, key: string): Promise<number> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8')
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)
  return m ? Number(m[1]) * 1024 : Number.NaN
}

const bench: BenchModule = async (ctx: BenchContext): Promise<BenchResult[]> => {
  const n = Math.max(20_000, Math.round(FULL_RECORDS * ctx.scale))
  const dataDir = path.join(ctx.tmpDir, 'data')
  ctx.progress(`replay-server: writing ${n} stored records`)
  for (let f = 0; f < FILES; f++) {
    const dir = path.join(dataDir, 'logs', 'Editor.Audit', 'dt=2026-11-20', `hour=${String(f).padStart(2, '0')}`)
    await mkdir(dir, { recursive: true })
    const lines: string[] = []
    for (let i = f; i < n; i += FILES) lines.push(storedLine(i, f))
    await writeFile(path.join(dir, 'bench.ndjson'), `${lines.join('\n')}\n`)
  }
  const limits = process.env.BENCH_REPLAY_LIMITS ? JSON.parse(process.env.BENCH_REPLAY_LIMITS) : {}
  const configFile = path.join(ctx.tmpDir, 'config.yaml')
  await writeFile(configFile, JSON.stringify({ detection: { replay: limits } }))
  const server = await startChild({
    dataDir,
    env: { RULEKEEPER_BOOTSTRAP_TOKEN: TOKEN, RULEKEEPER_CONFIG: configFile },
    timeoutMs: 120_000,
  })
  const results: BenchResult[] = []
  try {
    const rule = await httpRequest(
      server.url,
      'POST',
      '/simple-rules',
      {
        ...SAMPLE_BODIES.simple('Bench.Replay.Every', {
          logTypes: ['Editor.Audit'],
          detection: '- KeyPath: p_log_type\n  Condition: Equals\n  Value: Editor.Audit\n',
          tests: [],
        }),
        enabled: false,
        groupBy: '- Key: p_row_id\n',
      },
      { 'X-API-Key': TOKEN },
    )
    if (rule.status !== 200) throw new Error(`rule: ${rule.status} ${rule.text}`)
    const tokens: Array<[string, string]> = [['View Rules + View Alerts', TOKEN]]
    // a token made beside the server, as `rulekeeper token create` does (honoured once it answers)
    const viewRules = new TokenStore(dataDir).create({ name: 'bench-view-rules', permissions: ['View Rules'] }).secret
    for (let i = 0; i < 100; i++) {
      const r = await httpRequest(server.url, 'GET', '/status', undefined, { 'X-API-Key': viewRules })
      if (r.status !== 401) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    tokens.push(['View Rules', viewRules])
    for (const [who, secret] of tokens) {
      ctx.progress(`replay-server: replay of ${n} records with ${who}`)
      const rssBefore = await procKb(server.pid, 'VmRSS')
      const hwmBefore = await procKb(server.pid, 'VmHWM')
      let done = false
      const health: number[] = []
      let healthErrors = 0
      const poll = (async () => {
        while (!done) {
          const t0 = performance.now()
          await fetch(`${server.url}/healthz`)
            .then((r) => r.arrayBuffer())
            .catch(() => healthErrors++)
          health.push(performance.now() - t0)
          await new Promise((r) => setTimeout(r, 10))
        }
      })()
      const t0 = performance.now()
      const res = await fetch(`${server.url}/replay`, {
        method: 'POST',
        headers: { 'X-API-Key': secret, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          from: '2026-11-20T00:00:00Z',
          to: '2026-11-21T00:00:00Z',
          ruleIds: ['Bench.Replay.Every'],
        }),
      })
      let bytes = 0
      let head = ''
      for await (const chunk of res.body!) {
        if (head.length < 300) head += Buffer.from(chunk).toString('utf8').slice(0, 300)
        bytes += chunk.length
      }
      const seconds = (performance.now() - t0) / 1000
      done = true
      await poll
      const hwm = await procKb(server.pid, 'VmHWM')
      const mib = (b: number) => Math.round(b / 1024 ** 2)
      results.push({
        name: `POST /replay, ${n} records, an alert per record, ${who}: /healthz slowest answer during the replay`,
        target: '(issue 27: /healthz free while a replay runs)',
        value: Math.round(Math.max(...health)),
        unit: 'ms',
        pass: true,
        notes: `status ${res.status}, ${mib(bytes)} MiB answer in ${seconds.toFixed(1)} s; peak RSS ${mib(Math.max(hwm, hwmBefore))} MiB (${mib(rssBefore)} MiB before, +${mib(Math.max(0, hwm - rssBefore))} MiB); /healthz p50 ${percentile(health, 50).toFixed(0)} ms, p99 ${percentile(health, 99).toFixed(0)} ms over ${health.length} (${healthErrors} failed); load average ${os.loadavg()[0]!.toFixed(1)}; limits ${JSON.stringify(limits)}; answer starts ${JSON.stringify(head.slice(0, 160))}`,
      })
      ctx.progress(results.at(-1)!.notes!)
    }
  } finally {
    await server.stop()
  }
  return results
}

export default bench
