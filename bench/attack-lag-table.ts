// The Markdown table of bench/attack-lag.ts results (its --out JSON lines), one row per attack and
// checkout, for BENCHMARKS.md: npx tsx bench/attack-lag-table.ts FILE.jsonl [...]
import { readFileSync } from 'node:fs'

interface Lag {
  probes: number
  failed: number
  lagP50: number
  lagP99: number
  lagMax: number
  ackMax: number
  sentToSeenP50?: number
  sentToSeenMax?: number
}
interface Row {
  commit?: string
  attack: string
  error?: string
  loadBefore?: string
  attackWindowMs?: number
  quiet: { lag: Lag; healthz: { p50: number; max: number }; rssMaxMiB: number }
  attackPhase: { lag: Lag; healthz: { p50: number; max: number }; rssMaxMiB: number }
  rssBeforeMiB: number
}

const s = (ms: number | undefined) =>
  ms === undefined || ms === null ? '–' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`
const rows: Row[] = process.argv
  .slice(2)
  .flatMap((f) => readFileSync(f, 'utf8').split('\n'))
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as Row)
// grouped by attack (in the order first seen), runs in file order within a group
const order = [...new Set(rows.map((r) => r.attack))]
rows.sort((a, b) => order.indexOf(a.attack) - order.indexOf(b.attack))
const lines = [
  '| attack | commit | load (1 min) | attack window | lag 2xx→alert p50 / p99 / max: quiet | during the attack | sent→alert p50 / max (attack) | webhook 2xx max (attack) | /healthz p50 / max: quiet | during the attack | RSS before → peak (attack) |',
  '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
]
for (const r of rows) {
  if (r.error) {
    lines.push(`| ${r.attack} | ${r.commit ?? '?'} | | | failed: ${r.error.split('\n')[0]} | | | | | | |`)
    continue
  }
  const q = r.quiet
  const a = r.attackPhase
  lines.push(
    `| ${r.attack} | ${r.commit} | ${r.loadBefore?.split(' ')[0]} | ${s(r.attackWindowMs)} (${a.lag.probes} probes${a.lag.failed ? `, ${a.lag.failed} failed` : ''}) | ${s(q.lag.lagP50)} / ${s(q.lag.lagP99)} / ${s(q.lag.lagMax)} | ${s(a.lag.lagP50)} / ${s(a.lag.lagP99)} / ${s(a.lag.lagMax)} | ${s(a.lag.sentToSeenP50)} / ${s(a.lag.sentToSeenMax)} | ${s(a.lag.ackMax)} | ${s(q.healthz.p50)} / ${s(q.healthz.max)} | ${s(a.healthz.p50)} / ${s(a.healthz.max)} | ${r.rssBeforeMiB} → ${a.rssMaxMiB} MiB |`,
  )
}
process.stdout.write(`${lines.join('\n')}\n`)
