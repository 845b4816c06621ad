// Benchmark runner (`npm run bench [-- name-filter...] [--scale 0.1]`): discovers every
// bench/*.bench.ts, runs them one after another (each with its own scratch directory), prints
// progress to stderr, writes bench/results/latest.json and rewrites BENCHMARKS.md's results table at
// the repo root (the rows of modules not run are kept, and so are the hand-written sections after it).
// A bench module that throws is reported as a failed row with its error; the run goes on.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { BenchModule, BenchResult } from './lib.js'

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url))
const ROOT = path.resolve(BENCH_DIR, '..')
const RESULTS_DIR = path.join(BENCH_DIR, 'results')

export interface ModuleRun {
  module: string
  /** When this module ran (ISO); modules not re-run by a filtered run keep their previous entry. */
  date: string
  scale: number
  seconds: number
  results: BenchResult[]
  error?: string
}

export interface RunReport {
  date: string
  machine: { nproc: number; cpus: string; node: string; platform: string; loadavg: number[] }
  scale: number
  filter: string[]
  modules: ModuleRun[]
}

function parseArgs(argv: string[]): { scale: number; filter: string[]; help: boolean } {
  let scale = 1
  const filter: string[] = []
  let help = false
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '--help' || a === '-h') help = true
    else if (a === '--scale' || a.startsWith('--scale=')) {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i]
      scale = Number(v)
      if (!Number.isFinite(scale) || scale <= 0)
        throw new Error(`--scale needs a positive number, got ${JSON.stringify(v)}`)
    } else filter.push(a)
  }
  return { scale, filter, help }
}

export function discoverModules(filter: string[]): string[] {
  return fs
    .readdirSync(BENCH_DIR)
    .filter((f) => f.endsWith('.bench.ts'))
    .map((f) => f.slice(0, -'.bench.ts'.length))
    .filter((name) => filter.length === 0 || filter.some((x) => name.includes(x)))
    .sort()
}

const log = (m: string) => process.stderr.write(`${m}\n`)

export async function runModule(name: string, scale: number): Promise<ModuleRun> {
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), `rk-bench-${name}-`))
  const started = performance.now()
  const date = new Date().toISOString()
  try {
    const mod = (await import(pathToFileURL(path.join(BENCH_DIR, `${name}.bench.ts`)).href)) as { default?: unknown }
    if (typeof mod.default !== 'function') throw new Error(`bench/${name}.bench.ts has no default-exported BenchModule`)
    const fn = mod.default as BenchModule
    const results = await fn({ progress: (m) => log(`  [${name}] ${m}`), tmpDir, scale })
    if (!Array.isArray(results)) throw new Error('the bench module returned no result list')
    return { module: name, date, scale, seconds: (performance.now() - started) / 1000, results }
  } catch (err) {
    const message = err instanceof Error ? (err.stack ?? err.message) : String(err)
    log(`  [${name}] FAILED: ${message}`)
    return { module: name, date, scale, seconds: (performance.now() - started) / 1000, results: [], error: message }
  } finally {
    fs.rmSync(tmpDir, { recursive: true, force: true })
  }
}

function fmt(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return String(n ?? '')
  const a = Math.abs(n)
  if (a >= 1000) return Math.round(n).toLocaleString('en-US')
  if (a >= 100) return n.toFixed(0)
  if (a >= 10) return n.toFixed(1)
  if (a >= 1) return n.toFixed(2)
  return n.toPrecision(2)
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ')

export function renderMarkdown(report: RunReport): string {
  const m = report.machine
  const lines = [
    '# Benchmarks',
    '',
    'Produced by `npm run bench` (bench/run.ts runs every `bench/*.bench.ts`; raw numbers in',
    '`bench/results/latest.json`, not committed). Run one module with `npm run bench -- rules-api`;',
    'a quick smoke run with `npm run bench -- --scale 0.1`. Targets are those of the spec (quality.md,',
    'Performance); every ratio is against a baseline measured in the same run.',
    '',
    `Last run: ${report.date} on ${m.nproc} CPU(s) (${m.cpus}), Node ${m.node}, ${m.platform}, load average at start ${m.loadavg.map((x) => x.toFixed(2)).join(' / ')}, scale ${report.scale}${report.filter.length ? `, filter ${report.filter.join(' ')}` : ''}.`,
    'The machines are small and shared with other work, so absolute numbers are noisy; compare ratios.',
    '',
    '| module | name | target | value | baseline | ratio | pass | notes |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ]
  for (const mod of report.modules) {
    const carried = mod.date !== undefined && mod.date < report.date
    const label = `${mod.module}${carried ? ` (run ${mod.date.slice(0, 16).replace('T', ' ')}, scale ${mod.scale})` : ''}`
    if (mod.error) {
      const first = mod.error.split('\n')[0] ?? mod.error
      lines.push(`| ${label} | (module failed) | | | | | ✗ | ${cell(first)} |`)
      continue
    }
    for (const r of mod.results) {
      const baseline = r.baseline ? `${r.baseline.name}: ${fmt(r.baseline.value)} ${r.baseline.unit}` : ''
      const ratio = r.ratio !== undefined ? fmt(r.ratio) : ''
      lines.push(
        `| ${label} | ${cell(r.name)} | ${cell(r.target)} | ${fmt(r.value)} ${cell(r.unit)} | ${cell(baseline)} | ${ratio} | ${r.pass ? '✓' : '✗'} | ${cell(r.notes ?? '')} |`,
      )
    }
  }
  return `${lines.join('\n')}\n`
}

/** The module a row of the results table belongs to (its first cell, without a "(run …)" label). */
const rowModule = (row: string) => (row.split('|')[1] ?? '').trim().replace(/ \(run .*\)$/, '')

/**
 * The new BENCHMARKS.md: the table of this run (with the modules latest.json carries), plus the
 * rows of the previous file for modules neither carries (a fresh checkout has no latest.json), and
 * the previous file's hand-written sections after the table (every `## ` section), kept as they are.
 */
export function mergeMarkdown(previous: string, report: RunReport): string {
  const fresh = renderMarkdown(report)
  const known = new Set(report.modules.map((m) => m.module))
  const old = previous.split('\n')
  const start = old.findIndex((l) => l.startsWith('## '))
  const table = start < 0 ? old : old.slice(0, start)
  const kept = table.filter(
    (l) => l.startsWith('| ') && !l.startsWith('| module |') && !l.startsWith('| --- |') && !known.has(rowModule(l)),
  )
  const rows = [...fresh.trimEnd().split('\n'), ...kept]
  const head = rows.findIndex((l) => l.startsWith('| --- |')) + 1
  const body = rows.slice(head).sort((a, b) => rowModule(a).localeCompare(rowModule(b)))
  const hand = start < 0 ? '' : `\n${old.slice(start).join('\n')}`
  return `${[...rows.slice(0, head), ...body].join('\n')}\n${hand}`
}

function readPrevious(): RunReport | undefined {
  try {
    const r = JSON.parse(fs.readFileSync(path.join(RESULTS_DIR, 'latest.json'), 'utf8')) as RunReport
    return Array.isArray(r.modules) ? r : undefined
  } catch {
    return undefined
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2))
  if (args.help) {
    log(
      'usage: npm run bench [-- [name-filter...] [--scale N]]\n  runs bench/*.bench.ts, writes bench/results/latest.json and BENCHMARKS.md',
    )
    return
  }
  const names = discoverModules(args.filter)
  if (names.length === 0) throw new Error(`no bench module matches ${args.filter.join(' ')}`)
  const cpus = os.cpus()
  const report: RunReport = {
    date: new Date().toISOString(),
    machine: {
      nproc: os.availableParallelism?.() ?? cpus.length,
      cpus: cpus[0]?.model.trim() ?? 'unknown',
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      loadavg: os.loadavg(),
    },
    scale: args.scale,
    filter: args.filter,
    modules: [],
  }
  log(`bench: ${names.length} module(s) at scale ${args.scale}: ${names.join(', ')}`)
  for (const [i, name] of names.entries()) {
    log(`[${i + 1}/${names.length}] ${name} …`)
    const run = await runModule(name, args.scale)
    report.modules.push(run)
    for (const r of run.results)
      log(
        `  ${r.pass ? '✓' : '✗'} ${r.name}: ${fmt(r.value)} ${r.unit}${r.ratio !== undefined ? ` (ratio ${fmt(r.ratio)})` : ''} — target ${r.target}`,
      )
    log(`[${i + 1}/${names.length}] ${name} done in ${run.seconds.toFixed(1)} s${run.error ? ' (FAILED)' : ''}`)
  }
  if (args.filter.length > 0) {
    // A filtered run updates its modules and keeps the other modules' last results.
    const previous = readPrevious()
    const ran = new Set(report.modules.map((m) => m.module))
    for (const m of previous?.modules ?? [])
      if (!ran.has(m.module) && fs.existsSync(path.join(BENCH_DIR, `${m.module}.bench.ts`))) report.modules.push(m)
    report.modules.sort((a, b) => a.module.localeCompare(b.module))
  }
  fs.mkdirSync(RESULTS_DIR, { recursive: true })
  fs.writeFileSync(path.join(RESULTS_DIR, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`)
  const file = path.join(ROOT, 'BENCHMARKS.md')
  const previousText = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : ''
  fs.writeFileSync(file, mergeMarkdown(previousText, report))
  const failed = report.modules.filter((m) => m.error).length
  const missed = report.modules.flatMap((m) => m.results).filter((r) => !r.pass).length
  log(
    `bench: wrote bench/results/latest.json and BENCHMARKS.md (${failed} module(s) failed, ${missed} target(s) missed)`,
  )
  // Stray handles (a pool, a timer) of a bench module must not keep the run alive.
  process.exit(0)
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    log(`bench: ${err instanceof Error ? err.message : String(err)}`)
    process.exit(1)
  })
}
