// Detection lag of an unrelated rule while an attack of issue 27 (findings 1–3, 10–12) runs, on a
// real `rulekeeper serve` of a given checkout (so two commits can be compared): a simple rule on
// Editor.Audit matching a probe user, one probe record with a unique team_id posted to the webhook
// every 200 ms, and the time from the webhook's 2xx to the probe's alert in `GET /alerts?rule-id=`.
// Reported per attack, for a quiet window before it and for the attack (until a probe posted after
// its last request is seen): lag p50/p99/max (2xx → seen, and sent → seen: a blocked server delays
// the 2xx itself), /healthz p50/max, the webhook's acknowledgement time and the server's peak RSS.
// A standalone script (minutes per attack), not a module of `npm run bench`:
//   npx tsx bench/attack-lag.ts --checkout DIR [--attack NAME ...] [--quiet 15] [--out FILE.json]
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { ATTACKS } from './attack-lag-attacks.js'
import { api, auditLine, postRecords, procMiB, startServer, type Server } from './attack-lag-server.js'
import { percentile } from './lib.js'

const PROBE_USER = 'probe-lag@example.com'
const PROBE_RULE = 'Probe.Lag'
const PROBE_EVERY_MS = 200
/** Below the alert limit current main has (1,000 alerts of one rule an hour): every probe an alert. */
const MAX_PROBES = 900
const MAX_ATTACK_MS = 240_000
const DRAIN_MS = 90_000
const WARM_MS = 300_000

type Phase = 'warm' | 'quiet' | 'attack' | 'drain'
interface Probe {
  marker: string
  phase: Phase
  sentAt: number
  ackAt?: number
  status?: number
  seenAt?: number
  error?: string
}

function args(): { checkout: string; attacks: string[]; quietMs: number; out?: string } {
  const a = process.argv.slice(2)
  const attacks: string[] = []
  let checkout = ''
  let quietMs = 15_000
  let out: string | undefined
  for (let i = 0; i < a.length; i++) {
    if (a[i] === '--checkout') checkout = a[++i] ?? ''
    else if (a[i] === '--attack') attacks.push(a[++i] ?? '')
    else if (a[i] === '--quiet') quietMs = Number(a[++i]) * 1000
    else if (a[i] === '--out') out = a[++i]
    else throw new Error(`unknown argument ${a[i]}`)
  }
  if (!checkout) throw new Error('usage: attack-lag.ts --checkout DIR [--attack NAME ...] [--quiet S] [--out FILE]')
  for (const n of attacks)
    if (!ATTACKS[n]) throw new Error(`unknown attack ${n}; known: ${Object.keys(ATTACKS).join(', ')}`)
  return { checkout: path.resolve(checkout), attacks: attacks.length ? attacks : Object.keys(ATTACKS), quietMs, out }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms)) // pacing of the probe loops
const r0 = (n: number) => (Number.isFinite(n) ? Math.round(n) : n)

async function measure(checkout: string, name: string, quietMs: number) {
  const attack = ATTACKS[name]!
  const tmp = mkdtempSync(path.join(os.tmpdir(), `attack-lag-${name}-`))
  const dataDir = path.join(tmp, 'data')
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')
  let server: Server | undefined
  try {
    await attack.prepare?.(dataDir, tmp)
    // ATTACK_LAG_CONFIG: a config file layered over the checkout's defaults (e.g. raised replay limits)
    server = await startServer(checkout, dataDir, process.env.ATTACK_LAG_CONFIG)
    const s = server
    const rule = await api(s, 'POST', '/simple-rules?run-tests-first=false', {
      id: PROBE_RULE,
      severity: 'LOW',
      logTypes: ['Editor.Audit'],
      detection: `- KeyPath: user_email\n  Condition: Equals\n  Value: ${PROBE_USER}\n`,
      groupBy: '- Key: team_id\n',
      tests: [],
    })
    if (rule.status !== 200) throw new Error(`probe rule: ${rule.status} ${rule.text}`)
    await attack.setup?.(s, tmp)

    let phase: Phase = 'warm'
    let sending = true
    let stopped = false
    const probes: Probe[] = []
    const health: Array<{ phase: Phase; ms: number }> = []
    const rss: Array<{ phase: Phase; mib: number }> = []
    const runId = Date.now().toString(36)

    const sender = (async () => {
      while (!stopped) {
        if (sending && probes.length < MAX_PROBES) {
          const p: Probe = { marker: `lag-${runId}-${probes.length}`, phase, sentAt: performance.now() }
          probes.push(p)
          postRecords(s, [auditLine(p.marker, PROBE_USER)]).then(
            (st) => {
              p.status = st
              p.ackAt = performance.now()
            },
            (e: Error) => {
              p.status = -1
              const cause = (e as Error & { cause?: { code?: string; message?: string } }).cause
              p.error = `${e.message}${cause ? ` (${cause.code ?? cause.message})` : ''}`
            },
          )
        }
        await sleep(PROBE_EVERY_MS)
      }
    })()
    const observer = (async () => {
      while (!stopped) {
        const pending = probes.filter(
          (p) => p.seenAt === undefined && p.status !== undefined && p.status < 300 && p.status > 0,
        )
        if (pending.length > 0) {
          const oldest = Math.min(...pending.map((p) => p.sentAt))
          const after = new Date(Date.now() - (performance.now() - oldest) - 5000).toISOString()
          let cursor: string | null = null
          const seen = new Set<string>()
          for (let page = 0; page < 20; page++) {
            const q = new URLSearchParams({ 'rule-id': PROBE_RULE, 'created-after': after, limit: '1000' })
            if (cursor) q.set('cursor', cursor)
            const r = await api(s, 'GET', `/alerts?${q}`).catch(() => null)
            if (r?.status !== 200) break
            for (const a of r.body.results as Array<{ dedup: string }>) seen.add(a.dedup)
            cursor = r.body.next
            if (!cursor) break
          }
          const now = performance.now()
          for (const p of pending) if (seen.has(JSON.stringify([p.marker]))) p.seenAt = now
        }
        await sleep(100)
      }
    })()
    const healthLoop = (async () => {
      while (!stopped) {
        const ph = phase
        const t0 = performance.now()
        await fetch(`${s.url}/healthz`, { signal: AbortSignal.timeout(300_000) })
          .then((r) => r.arrayBuffer())
          .catch(() => undefined)
        health.push({ phase: ph, ms: performance.now() - t0 })
        await sleep(50)
      }
    })()
    const rssLoop = (async () => {
      while (!stopped) {
        rss.push({ phase, mib: await procMiB(s.pid, 'VmRSS') })
        await sleep(250)
      }
    })()

    // warm: until the first probe is seen (start-up work, e.g. stored records evaluated, is over)
    const warmEnd = performance.now() + WARM_MS
    while (!probes.some((p) => p.seenAt !== undefined)) {
      if (performance.now() > warmEnd) throw new Error('no probe was ever seen: the probe does not work here')
      await sleep(100)
    }
    phase = 'quiet'
    process.stderr.write(`[${name}] quiet window ${quietMs / 1000} s\n`)
    await sleep(quietMs)
    const rssBefore = await procMiB(s.pid, 'VmRSS')
    const hwmBefore = await procMiB(s.pid, 'VmHWM')
    phase = 'attack'
    process.stderr.write(`[${name}] attack: ${attack.size}\n`)
    const attackStart = performance.now()
    let outcome = ''
    let doneAt = Number.NaN
    const action = attack.run(s, tmp).then(
      (o) => {
        outcome = o
        doneAt = performance.now()
      },
      (e: Error) => {
        outcome = `failed: ${e.message}`
        doneAt = performance.now()
      },
    )
    // the attack lasts until a probe sent after its last answer is seen (the server caught up)
    while (performance.now() - attackStart < MAX_ATTACK_MS) {
      if (!Number.isNaN(doneAt) && probes.some((p) => p.sentAt > doneAt && p.seenAt !== undefined)) break
      if (
        !Number.isNaN(doneAt) &&
        probes.length >= MAX_PROBES &&
        probes.every((p) => p.seenAt !== undefined || p.status === undefined || p.status >= 300)
      )
        break
      await sleep(100)
    }
    const windowMs = performance.now() - attackStart
    phase = 'drain'
    sending = false
    const drainEnd = performance.now() + DRAIN_MS
    while (
      performance.now() < drainEnd &&
      probes.some((p) => p.status === undefined || (p.status < 300 && p.seenAt === undefined))
    )
      await sleep(100)
    const endedAt = performance.now()
    const hwm = await procMiB(s.pid, 'VmHWM')
    stopped = true
    await Promise.all([sender, observer, healthLoop, rssLoop])
    await Promise.race([action, sleep(5000)])

    const lagStats = (ph: Phase) => {
      const ps = probes.filter((p) => p.phase === ph && p.status !== undefined && p.status > 0 && p.status < 300)
      const lags = ps.filter((p) => p.seenAt !== undefined).map((p) => Math.max(0, p.seenAt! - p.ackAt!))
      const unseen = ps.filter((p) => p.seenAt === undefined)
      const acks = ps.map((p) => p.ackAt! - p.sentAt)
      const sentToSeen = ps.filter((p) => p.seenAt !== undefined).map((p) => p.seenAt! - p.sentAt)
      return {
        probes: ps.length,
        failed: probes.filter((p) => p.phase === ph && (p.status === undefined || p.status < 0 || p.status >= 300))
          .length,
        failures: probes
          .filter((p) => p.phase === ph && (p.status === undefined || p.status < 0 || p.status >= 300))
          .map((p) => p.error ?? String(p.status ?? 'unanswered'))
          .slice(0, 5),
        unseen: unseen.length,
        unseenAtLeastMs: unseen.length ? r0(Math.min(...unseen.map((p) => endedAt - p.ackAt!))) : 0,
        lagP50: r0(percentile(lags, 50)),
        lagP99: r0(percentile(lags, 99)),
        lagMax: r0(lags.length ? Math.max(...lags) : Number.NaN),
        ackP50: r0(percentile(acks, 50)),
        ackMax: r0(acks.length ? Math.max(...acks) : Number.NaN),
        sentToSeenP50: r0(percentile(sentToSeen, 50)),
        sentToSeenP99: r0(percentile(sentToSeen, 99)),
        sentToSeenMax: r0(sentToSeen.length ? Math.max(...sentToSeen) : Number.NaN),
      }
    }
    const healthStats = (ph: Phase) => {
      const ms = health.filter((h) => h.phase === ph).map((h) => h.ms)
      return { n: ms.length, p50: r0(percentile(ms, 50)), max: r0(ms.length ? Math.max(...ms) : Number.NaN) }
    }
    const rssMax = (ph: Phase) =>
      r0(Math.max(...rss.filter((x) => x.phase === ph || (ph === 'attack' && x.phase === 'drain')).map((x) => x.mib)))
    return {
      checkout,
      // the last commit of the product code (a branch adding only bench files measures its base)
      commit: (await import('node:child_process'))
        .execFileSync(
          'git',
          ['-C', checkout, 'log', '-1', '--format=%h', '--', 'src', 'config', 'python', 'package.json'],
          {
            encoding: 'utf8',
          },
        )
        .trim(),
      attack: name,
      size: attack.size,
      outcome,
      loadBefore: load,
      loadAfter: os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' '),
      attackRequestMs: r0(doneAt - attackStart),
      attackWindowMs: r0(windowMs),
      quiet: { lag: lagStats('quiet'), healthz: healthStats('quiet'), rssMaxMiB: rssMax('quiet') },
      attackPhase: { lag: lagStats('attack'), healthz: healthStats('attack'), rssMaxMiB: rssMax('attack') },
      rssBeforeMiB: r0(rssBefore),
      hwmBeforeMiB: r0(hwmBefore),
      hwmEndMiB: r0(hwm),
    }
  } catch (e) {
    if (server) process.stderr.write(`server output:\n${server.output()}\n`)
    throw e
  } finally {
    await server?.stop()
    rmSync(tmp, { recursive: true, force: true })
  }
}

const { checkout, attacks, quietMs, out } = args()
for (const name of attacks) {
  process.stderr.write(
    `[${name}] ${checkout}: load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  )
  const result = await measure(checkout, name, quietMs).catch((e: Error) => ({
    checkout,
    attack: name,
    error: e.message.slice(0, 2000),
  }))
  const line = JSON.stringify(result)
  process.stdout.write(`${line}\n`)
  if (out) appendFileSync(out, `${line}\n`)
}
