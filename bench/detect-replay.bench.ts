// Replay and rule evaluation over the stored log: 1M stored Editor.Audit records (written as the
// log source stores them), replayed (src/detect/replay.ts: read, merge in stored order, evaluate,
// group) with 10 simple rules (target ≥ 200,000 records/s) and with 100 (rule evaluations/s),
// against the same replay with no rules in the same run (reading, parsing and merging alone). The
// process CPU time is in the notes: on a shared machine it moves less than the wall time.
import { mkdir, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { replay } from '../src/detect/replay.js'
import { createEngineRegistry } from '../src/engine/registry.js'
import { simpleEngine } from '../src/engine/simple/index.js'
import { RuleIndex } from '../src/rules/rule-index.js'
import { loadDirectory } from '../src/service/directory-loader.js'
import type { BenchContext, BenchModule, BenchResult } from './lib.js'

const FULL_RECORDS = 1_000_000
const FILES = 8 // hours of event time, one data file each
const USERS = 200

function storedLine(i: number, hour: number): string {
  const event = new Date(Date.UTC(2026, 10, 20, hour, 0, 0) + (i % 3_600_000)).toISOString()
  return JSON.stringify({
    ip_address: `198.51.100.${i % 250}`,
    team_id: String(4800 + (i % 40)),
    user_email: `user${i % USERS}@example.com`,
    metadata: { id: `r${i}`, timestamp: event, context: { auth_id: `idp|u${i % USERS}`, request_id: `req_${i}` } },
    login: { login_type: i % 2 ? 'LOGIN_TYPE_WEB' : 'LOGIN_TYPE_APP', success: i % 9 !== 0 },
    p_log_type: 'Editor.Audit',
    p_event_time: event,
    p_parse_time: new Date(Date.UTC(2026, 10, 21, 0, 0, 0) + Math.floor(i / 100)).toISOString(),
    p_row_id: `bench${String(i).padStart(10, '0')}`,
  })
}

/** Rule k: a two-condition detection (one fails most records early, as real rules do). */
function ruleYaml(k: number): string {
  return [
    'AnalysisType: rule',
    `RuleID: Bench.Replay.${String(k).padStart(3, '0')}`,
    'Enabled: true',
    'LogTypes: [Editor.Audit]',
    'Severity: Medium',
    'DedupPeriodMinutes: 60',
    'Threshold: 2',
    'GroupBy: [{ Key: user_email }]',
    'Detection:',
    '  - KeyPath: login.success',
    '    Condition: Equals',
    `    Value: ${k % 2 === 0 ? 'false' : 'true'}`,
    '  - KeyPath: team_id',
    '    Condition: IsIn',
    `    Values: ["${4800 + (k % 40)}", "${4800 + ((k + 7) % 40)}"]`,
    'Tests: []',
    '',
  ].join('\n')
}

async function rulesOf(dir: string, n: number): Promise<RuleIndex> {
  if (n === 0) return RuleIndex.empty()
  await mkdir(dir, { recursive: true })
  for (let k = 0; k < n; k++) await writeFile(path.join(dir, `rule${k}.yml`), ruleYaml(k))
  return loadDirectory(dir, createEngineRegistry())
}

const bench: BenchModule = async (ctx: BenchContext): Promise<BenchResult[]> => {
  const n = Math.max(20_000, Math.round(FULL_RECORDS * ctx.scale))
  const logsRoot = path.join(ctx.tmpDir, 'logs')
  ctx.progress(`detect-replay: writing ${n} stored records in ${FILES} hour partitions`)
  let bytes = 0
  for (let f = 0; f < FILES; f++) {
    const dir = path.join(logsRoot, 'Editor.Audit', 'dt=2026-11-20', `hour=${String(f).padStart(2, '0')}`)
    await mkdir(dir, { recursive: true })
    const lines: string[] = []
    for (let i = f; i < n; i += FILES) lines.push(storedLine(i, f))
    const text = `${lines.join('\n')}\n`
    bytes += text.length
    await writeFile(path.join(dir, 'bench.ndjson'), text)
  }
  const run = async (rules: number) => {
    const index = await rulesOf(path.join(ctx.tmpDir, `rules${rules}`), rules)
    ctx.progress(`detect-replay: replay with ${rules} rules`)
    const c0 = process.cpuUsage()
    const t0 = performance.now()
    const r = await replay({
      logsRoot,
      index,
      engines: { simple: simpleEngine },
      fromMs: Date.UTC(2026, 10, 20),
      toMs: Date.UTC(2026, 10, 21),
    })
    const seconds = (performance.now() - t0) / 1000
    const cu = process.cpuUsage(c0)
    const cpu = (cu.user + cu.system) / 1e6
    if (r.records !== n) throw new Error(`replayed ${r.records} records of ${n}`)
    return { seconds, cpu, perSecond: n / seconds, matches: r.matches, alerts: r.alertCount }
  }
  await run(0) // warm-up: the page cache and the JIT
  const none = await run(0)
  const ten = await run(10)
  const hundred = await run(100)
  // The rules' share of the time, over the no-rule floor measured in this run.
  const evalSeconds = Math.max(1e-9, hundred.seconds - none.seconds)
  const evalsPerSecond = (n * 100) / evalSeconds
  const mb = (bytes / 1e6).toFixed(0)
  return [
    {
      name: `replay, ${n} stored records, 10 simple rules`,
      target: '>= 200,000 records/s',
      value: Math.round(ten.perSecond),
      unit: 'records/s',
      baseline: {
        name: 'the same replay with no rules (read, parse, merge)',
        value: Math.round(none.perSecond),
        unit: 'records/s',
      },
      ratio: ten.perSecond / none.perSecond,
      pass: ten.perSecond >= 200_000,
      notes: `${ten.seconds.toFixed(2)} s (process CPU ${ten.cpu.toFixed(2)} s, GC and I/O threads included: ${Math.round(n / ten.cpu)} records per CPU-second; without rules ${none.cpu.toFixed(2)} s); load average ${os.loadavg()[0]!.toFixed(1)} at the end; ${ten.matches} matches, ${ten.alerts} alerts; ${FILES} data files, ${mb} MB; one process (replay runs on one core)`,
    },
    {
      name: `rule evaluations in detection, 100 simple rules, ${n} records`,
      target: '>= 1M rule evaluations/s per core',
      value: Math.round(evalsPerSecond),
      unit: 'evaluations/s',
      baseline: { name: 'replay with no rules', value: Math.round(none.perSecond), unit: 'records/s' },
      ratio: none.seconds / hundred.seconds,
      pass: evalsPerSecond >= 1_000_000,
      notes: `replay with 100 rules ${hundred.seconds.toFixed(2)} s (${Math.round(hundred.perSecond)} records/s) vs ${none.seconds.toFixed(2)} s without rules: evaluations/s = records × 100 / the difference; ratio = records/s with 100 rules ÷ without; ${hundred.matches} matches, ${hundred.alerts} alerts`,
    },
  ]
}

export default bench
