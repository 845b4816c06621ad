// `rulekeeper test` over a repository of Python streaming rules (quality.md, "Python rule tests";
// issue 14 point 6): ~900 rules with ~3,000 tests, written synthetically here — six global helpers
// (some importing each other), four data models with Path and Method mappings (one Method imports a
// global) used through `event.udm()`, a log type without a data model (udm's p_udm/event fallback),
// `Mocks` of an imported global and of a module-level function, `InlineFilters`, `deep_walk`, the
// caching helpers, tests with a `LogType` of their own, `title`/`dedup`/`severity`/`alert_context`.
// Eight rule templates, each rule with its own constants, so no two modules are the same.
//
// Measured end to end: the real CLI (`rulekeeper test DIR --json`, from the sources through tsx as
// the CLI tests run it) in a child process, from spawn to exit: Node start, reading and checking
// the directory, one confined run per rule on the worker pool, the JSON report. Checked: every
// test passes; a second, small repository with every ExpectedResult flipped fails every test.
// Baseline, same run: one plain `python3` process (no sandbox, no isolation between rules) that
// imports the same rule, helper and data model modules from the same files and calls the same
// functions on the same events, with a minimal stand-in for the event (a dict with `deep_get`,
// `deep_walk` and `udm` over the same mappings) and the mocks patched on the module.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import YAML from 'yaml'
import type { BenchContext, BenchModule } from './lib.js'

const ROOT = path.resolve(import.meta.dirname, '..')
const CLI_ENTRY = path.join(ROOT, 'test', 'helpers', 'cli-entry.ts')
const RUNTIME_DIR = path.join(ROOT, 'python')
const TARGET_S = 30
const FULL_RULES = 900
const TEMPLATES = 8

// ---------------------------------------------------------------------------------------------
// The repository

interface DataModelSpec {
  id: string
  logType: string
  file: string
  source: string
  /** name -> Path (JSONPath as the data model file has it) */
  paths: Record<string, string>
  /** name -> the function of the module */
  methods: Record<string, string>
}

const DATA_MODELS: DataModelSpec[] = [
  {
    id: 'Synth.Standard.Auth',
    logType: 'Synth.Auth',
    file: 'synth_auth',
    paths: { actor_user: 'user.email', source_ip: '$.client.ip', user_agent: 'client.user_agent' },
    methods: { event_outcome: 'get_outcome' },
    source: `def get_outcome(event):
    result = event.deep_get("outcome", "result")
    if result is None:
        return None
    return "success" if result == "SUCCESS" else "failure"
`,
  },
  {
    id: 'Synth.Standard.Network',
    logType: 'Synth.Network',
    file: 'synth_network',
    paths: { source_ip: 'src_addr', destination_ip: '$.dst.addr', destination_port: 'dst.port' },
    methods: { action: 'get_action' },
    source: `def get_action(event):
    return "allow" if event.get("verdict") == "ACCEPT" else "deny"
`,
  },
  {
    id: 'Synth.Standard.Cloud',
    logType: 'Synth.Cloud',
    file: 'synth_cloud',
    paths: { actor_user: '$.userIdentity.arn', source_ip: 'sourceIPAddress', event_name: 'eventName' },
    methods: { region: 'get_region' },
    source: `def get_region(event):
    return event.get("awsRegion") or "global"
`,
  },
  {
    id: 'Synth.Standard.Admin',
    logType: 'Synth.Admin',
    file: 'synth_admin',
    paths: { actor_user: 'actor.email', target_user: '$.target.email' },
    methods: { privileged: 'is_privileged_change' },
    source: `from synth_base_helpers import is_admin_role


def is_privileged_change(event):
    return is_admin_role(event.deep_get("target", "role"))
`,
  },
]

const GLOBALS: Array<{ id: string; source: string }> = [
  {
    id: 'synth_base_helpers',
    source: `ADMIN_ROLES = frozenset({"admin", "owner", "superuser"})


def is_admin_role(role):
    return str(role or "").strip().lower() in ADMIN_ROLES


def normalize_email(value):
    return str(value or "").strip().lower()
`,
  },
  {
    id: 'synth_ip_helpers',
    source: `import ipaddress


def _parse(value):
    try:
        return ipaddress.ip_address(str(value))
    except ValueError:
        return None


def is_external(value):
    address = _parse(value)
    return address is not None and address.is_global


def is_private(value):
    address = _parse(value)
    return address is not None and address.is_private
`,
  },
  {
    id: 'synth_time_helpers',
    source: `from datetime import datetime


def parse_ts(value):
    return datetime.strptime(str(value)[:19], "%Y-%m-%dT%H:%M:%S")


def is_off_hours(value, start=8, end=20):
    try:
        hour = parse_ts(value).hour
    except ValueError:
        return False
    return hour < start or hour >= end
`,
  },
  {
    id: 'synth_string_helpers',
    source: `from fnmatch import fnmatch


def matches_any(value, patterns):
    return any(fnmatch(str(value), pattern) for pattern in patterns)
`,
  },
  {
    id: 'synth_cloud_helpers',
    source: `from synth_base_helpers import normalize_email
from synth_ip_helpers import is_external


def arn_user(arn):
    return normalize_email(str(arn or "").rsplit("/", 1)[-1])


def cloud_context(event):
    ip = event.udm("source_ip")
    return {"user": arn_user(event.udm("actor_user")), "ip": ip, "external": is_external(ip), "region": event.udm("region")}
`,
  },
  {
    id: 'synth_lookup_helpers',
    source: `def lookup_user_risk(user):
    # An external service in production: tests mock it.
    raise RuntimeError("the risk service is not reachable from a test: mock lookup_user_risk")
`,
  },
]

interface TestSpec {
  Name: string
  ExpectedResult: boolean
  LogType?: string
  Mocks?: Array<{ objectName: string; returnValue: unknown }>
  Log: Record<string, unknown>
  /** Not in the file: the InlineFilters reject this event (the baseline skips rule(), as the engine). */
  filtered?: boolean
}

interface RuleSpec {
  id: string
  file: string
  logTypes: string[]
  source: string
  yaml: Record<string, unknown>
  tests: TestSpec[]
}

const SEVERITIES = ['Info', 'Low', 'Medium', 'High', 'Critical']

const authLog = (email: string, result: string | null, published: string, ip = '8.8.4.4') => ({
  eventType: 'user.session.start',
  published,
  user: { email, id: `u-${email.length}` },
  client: { ip, user_agent: 'Mozilla/5.0 (X11; Linux x86_64)' },
  ...(result === null ? {} : { outcome: { result } }),
})
const netLog = (dst: string, port: number, verdict: string, proto = 'tcp') => ({
  src_addr: '10.1.2.3',
  dst: { addr: dst, port },
  verdict,
  proto,
  bytes: 1234,
})
const cloudLog = (eventName: string, user: string, resources: string[], eventTime = '2026-11-20T10:00:00Z') => ({
  eventName,
  eventSource: 'iam.amazonaws.com',
  awsRegion: 'eu-west-1',
  sourceIPAddress: '1.1.1.1',
  eventTime,
  userIdentity: { type: 'IAMUser', arn: `arn:aws:iam::123456789012:user/${user}` },
  resources: resources.map((arn) => ({ ARN: arn, type: 'AWS::S3::Bucket' })),
})
const adminLog = (action: string, actor: string, target: string, role: string) => ({
  action,
  ts: '2026-11-20T10:00:00Z',
  actor: { email: actor },
  target: { email: target, role },
})

/** The n-th rule: template n % 8, constants of its own. */
function ruleSpec(n: number): RuleSpec {
  const t = n % TEMPLATES
  const tag = String(n).padStart(4, '0')
  const four = n % 10 === 0 || n % 10 === 3 || n % 10 === 6
  let logTypes: string[]
  let source: string
  let tests: TestSpec[]
  let extra: Record<string, unknown> = {}
  switch (t) {
    case 0: {
      // udm Path + Method (Synth.Auth), the caching helpers.
      const domain = `@corp${n}.example`
      logTypes = ['Synth.Auth']
      source = `from panther_detection_helpers.caching import increment_counter

DOMAIN = "${domain}"


def rule(event):
    if event.udm("event_outcome") != "failure":
        return False
    user = event.udm("actor_user") or ""
    if not user.endswith(DOMAIN):
        return False
    return increment_counter("failures:" + user) >= 1


def title(event):
    return f"Failed logins for {event.udm('actor_user')} from {event.udm('source_ip')}"


def dedup(event):
    return event.udm("actor_user") or "unknown"
`
      tests = [
        {
          Name: 'failed login in the domain',
          ExpectedResult: true,
          Log: authLog(`kim${domain}`, 'FAILURE', '2026-11-20T10:00:00Z'),
        },
        {
          Name: 'successful login',
          ExpectedResult: false,
          Log: authLog(`kim${domain}`, 'SUCCESS', '2026-11-20T10:00:00Z'),
        },
        {
          Name: 'failed login elsewhere',
          ExpectedResult: false,
          Log: authLog('kim@other.example', 'FAILURE', '2026-11-20T10:00:00Z'),
        },
        { Name: 'no outcome', ExpectedResult: false, Log: authLog(`kim${domain}`, null, '2026-11-20T10:00:00Z') },
      ]
      break
    }
    case 1: {
      // udm Path + Method (Synth.Network), a global helper, InlineFilters.
      const port = 1024 + n
      logTypes = ['Synth.Network']
      extra = { InlineFilters: [{ KeyPath: 'proto', Condition: 'Equals', Value: 'tcp' }] }
      source = `from synth_ip_helpers import is_external

PORT = ${port}


def rule(event):
    return (event.udm("action") == "allow" and event.udm("destination_port") == PORT
            and is_external(event.udm("destination_ip")))


def title(event):
    return f"Outbound connection to {event.udm('destination_ip')}:{PORT}"


def alert_context(event):
    return {"src": event.udm("source_ip"), "dst": event.udm("destination_ip"), "port": event.udm("destination_port")}
`
      tests = [
        { Name: 'accepted to an external address', ExpectedResult: true, Log: netLog('93.184.216.34', port, 'ACCEPT') },
        { Name: 'accepted to a private address', ExpectedResult: false, Log: netLog('10.9.8.7', port, 'ACCEPT') },
        {
          Name: 'udp, filtered out',
          ExpectedResult: false,
          Log: netLog('93.184.216.34', port, 'ACCEPT', 'udp'),
          filtered: true,
        },
        { Name: 'rejected', ExpectedResult: false, Log: netLog('93.184.216.34', port, 'REJECT') },
      ]
      break
    }
    case 2: {
      // Mocks of an imported global (which raises unmocked), globals importing globals.
      const watched = `CreateAccessKey${n}`
      logTypes = ['Synth.Cloud']
      source = `from synth_cloud_helpers import arn_user, cloud_context
from synth_lookup_helpers import lookup_user_risk

WATCHED = {"${watched}", "PutRolePolicy", "AttachUserPolicy"}


def rule(event):
    if event.udm("event_name") not in WATCHED:
        return False
    return lookup_user_risk(arn_user(event.udm("actor_user"))) == "high"


def title(event):
    return f"{event.udm('event_name')} by {arn_user(event.udm('actor_user'))} in {event.udm('region')}"


def alert_context(event):
    return cloud_context(event)
`
      const high = [{ objectName: 'lookup_user_risk', returnValue: 'high' }]
      tests = [
        { Name: 'watched call by a risky user', ExpectedResult: true, Mocks: high, Log: cloudLog(watched, 'ana', []) },
        {
          Name: 'watched call by a low-risk user',
          ExpectedResult: false,
          Mocks: [{ objectName: 'lookup_user_risk', returnValue: 'low' }],
          Log: cloudLog(watched, 'ana', []),
        },
        { Name: 'another call', ExpectedResult: false, Mocks: high, Log: cloudLog('ListBuckets', 'ana', []) },
        {
          Name: 'policy put by a risky user',
          ExpectedResult: true,
          Mocks: high,
          Log: cloudLog('PutRolePolicy', 'bo', []),
        },
      ]
      break
    }
    case 3: {
      // A data model whose Method imports a global; severity(); DEFAULT severity.
      const action = ['role.grant', 'role.assign', 'member.promote'][n % 3]!
      logTypes = ['Synth.Admin']
      source = `from synth_base_helpers import is_admin_role

ACTION = "${action}"


def rule(event):
    return event.get("action") == ACTION and bool(event.udm("privileged"))


def severity(event):
    role = event.deep_get("target", "role")
    return "HIGH" if is_admin_role(role) and role == "owner" else "DEFAULT"


def title(event):
    return f"{event.udm('actor_user')} made {event.udm('target_user')} {event.deep_get('target', 'role')} ({${n}})"
`
      tests = [
        {
          Name: 'admin granted',
          ExpectedResult: true,
          Log: adminLog(action, 'lee@corp.example', 'max@corp.example', 'admin'),
        },
        {
          Name: 'viewer granted',
          ExpectedResult: false,
          Log: adminLog(action, 'lee@corp.example', 'max@corp.example', 'viewer'),
        },
        {
          Name: 'another action',
          ExpectedResult: false,
          Log: adminLog('role.revoke', 'lee@corp.example', 'max@corp.example', 'admin'),
        },
        {
          Name: 'owner granted',
          ExpectedResult: true,
          Log: adminLog(action, 'lee@corp.example', 'max@corp.example', 'Owner'),
        },
      ]
      break
    }
    case 4: {
      // A log type without a data model: udm() falls back to p_udm, then the event.
      logTypes = ['Synth.File']
      source = `from synth_string_helpers import matches_any

PATTERNS = ["/etc/secret${n}/*", "*.pem", "/home/*/.ssh/id_*"]
OPS = {"write", "delete"}


def rule(event):
    return event.get("op") in OPS and matches_any(event.udm("path", default=""), PATTERNS)


def dedup(event):
    return event.udm("host") or "unknown-host"


def description(event):
    return f"{event.get('op')} of {event.udm('path')} on {event.udm('host')}"
`
      tests = [
        {
          Name: 'secret written (p_udm)',
          ExpectedResult: true,
          Log: { op: 'write', host: 'web-1', p_udm: { path: `/etc/secret${n}/db.conf`, host: 'web-1' } },
        },
        {
          Name: 'key deleted (event field)',
          ExpectedResult: true,
          Log: { op: 'delete', host: 'web-2', path: '/srv/tls/site.pem' },
        },
        { Name: 'other file', ExpectedResult: false, Log: { op: 'write', host: 'web-1', path: '/var/log/syslog' } },
        { Name: 'secret read', ExpectedResult: false, Log: { op: 'read', p_udm: { path: `/etc/secret${n}/db.conf` } } },
      ]
      break
    }
    case 5: {
      // deep_walk over a list of objects, a time helper.
      const prefix = `arn:aws:s3:::bucket-${n}`
      logTypes = ['Synth.Cloud']
      source = `from synth_time_helpers import is_off_hours

PREFIX = "${prefix}"


def rule(event):
    arns = event.deep_walk("resources", "ARN", default=[])
    if isinstance(arns, str):
        arns = [arns]
    return any(str(arn).startswith(PREFIX) for arn in arns) and is_off_hours(event.get("eventTime"))


def title(event):
    return f"Bucket {PREFIX} touched off hours by {event.udm('actor_user')}"


def alert_context(event):
    return {"arns": event.deep_walk("resources", "ARN"), "time": event.get("eventTime")}
`
      tests = [
        {
          Name: 'bucket at night',
          ExpectedResult: true,
          Log: cloudLog('PutObject', 'ana', [`${prefix}/a`], '2026-11-20T02:00:00Z'),
        },
        { Name: 'bucket by day', ExpectedResult: false, Log: cloudLog('PutObject', 'ana', [`${prefix}/a`]) },
        {
          Name: 'another bucket at night',
          ExpectedResult: false,
          Log: cloudLog('PutObject', 'ana', ['arn:aws:s3:::other/a'], '2026-11-20T02:00:00Z'),
        },
        {
          Name: 'two buckets late',
          ExpectedResult: true,
          Log: cloudLog('PutObject', 'ana', ['arn:aws:s3:::other/a', `${prefix}/b`], '2026-11-20T23:00:00Z'),
        },
      ]
      break
    }
    case 6: {
      // Mocks of a module-level function; udm Method; off-hours helper.
      const svc = `svc-${n}@corp.example`
      logTypes = ['Synth.Auth']
      source = `import json

from synth_time_helpers import is_off_hours


def allowlisted_users():
    # A lookup table in production (a JSON list): tests mock it.
    return '["${svc}"]'


def rule(event):
    return (event.udm("event_outcome") == "success" and is_off_hours(event.get("published"))
            and event.udm("actor_user") not in json.loads(allowlisted_users()))


def title(event):
    return f"Login off hours by {event.udm('actor_user')}"


def severity(event):
    return "MEDIUM"
`
      tests = [
        {
          Name: 'off hours, not allowlisted',
          ExpectedResult: true,
          Mocks: [{ objectName: 'allowlisted_users', returnValue: '["ops@corp.example"]' }],
          Log: authLog(svc, 'SUCCESS', '2026-11-20T03:00:00Z'),
        },
        {
          Name: 'off hours, allowlisted',
          ExpectedResult: false,
          Mocks: [{ objectName: 'allowlisted_users', returnValue: JSON.stringify([svc]) }],
          Log: authLog(svc, 'SUCCESS', '2026-11-20T03:00:00Z'),
        },
        { Name: 'by day', ExpectedResult: false, Log: authLog('kim@corp.example', 'SUCCESS', '2026-11-20T11:00:00Z') },
        {
          Name: 'failed at night',
          ExpectedResult: false,
          Log: authLog('kim@corp.example', 'FAILURE', '2026-11-20T03:00:00Z'),
        },
      ]
      break
    }
    default: {
      // Two log types, tests with their own LogType: one udm name through two data models.
      const watch = `watch${n}@corp.example`
      logTypes = ['Synth.Auth', 'Synth.Admin']
      source = `from synth_base_helpers import normalize_email

WATCHED_USERS = {"${watch}", "intern${n}@corp.example"}


def rule(event):
    return normalize_email(event.udm("actor_user")) in WATCHED_USERS


def title(event):
    return f"Watched user {event.udm('actor_user')} active"


def dedup(event):
    return normalize_email(event.udm("actor_user"))
`
      tests = [
        {
          Name: 'watched user logs in',
          ExpectedResult: true,
          Log: authLog(watch.toUpperCase(), 'SUCCESS', '2026-11-20T10:00:00Z'),
        },
        {
          Name: 'watched user administers',
          ExpectedResult: true,
          LogType: 'Synth.Admin',
          Log: adminLog('role.grant', watch, 'max@corp.example', 'viewer'),
        },
        {
          Name: 'another admin',
          ExpectedResult: false,
          LogType: 'Synth.Admin',
          Log: adminLog('role.grant', 'lee@corp.example', 'max@corp.example', 'viewer'),
        },
        {
          Name: 'another user logs in',
          ExpectedResult: false,
          Log: authLog('kim@corp.example', 'SUCCESS', '2026-11-20T10:00:00Z'),
        },
      ]
    }
  }
  if (!four) tests = tests.slice(0, 3)
  const id = `Synth.T${t}.Rule${tag}`
  const file = `synth_rule_${tag}`
  const yaml: Record<string, unknown> = {
    AnalysisType: 'rule',
    RuleID: id,
    DisplayName: `Synthetic rule ${tag} (template ${t})`,
    Enabled: n % 50 !== 49,
    Filename: `${file}.py`,
    LogTypes: logTypes,
    Severity: SEVERITIES[n % SEVERITIES.length],
    Tags: ['Synthetic', `Template${t}`],
    DedupPeriodMinutes: 60,
    ...extra,
    Tests: tests.map(({ filtered: _, ...rest }) => rest),
  }
  return { id, file, logTypes, source, yaml, tests }
}

/** Writes the repository; `flip` inverts every ExpectedResult (every test must then fail). */
export function writeRepository(dir: string, rules: number, flip = false): RuleSpec[] {
  fs.mkdirSync(path.join(dir, 'global_helpers'), { recursive: true })
  fs.mkdirSync(path.join(dir, 'data_models'), { recursive: true })
  for (const g of GLOBALS) {
    fs.writeFileSync(path.join(dir, 'global_helpers', `${g.id}.py`), g.source)
    fs.writeFileSync(
      path.join(dir, 'global_helpers', `${g.id}.yml`),
      YAML.stringify({ AnalysisType: 'global', GlobalID: g.id, Filename: `${g.id}.py`, Description: 'synthetic' }),
    )
  }
  for (const m of DATA_MODELS) {
    fs.writeFileSync(path.join(dir, 'data_models', `${m.file}.py`), m.source)
    const mappings = [
      ...Object.entries(m.paths).map(([Name, Path]) => ({ Name, Path })),
      ...Object.entries(m.methods).map(([Name, Method]) => ({ Name, Method })),
    ]
    fs.writeFileSync(
      path.join(dir, 'data_models', `${m.file}.yml`),
      YAML.stringify({
        AnalysisType: 'datamodel',
        DataModelID: m.id,
        Enabled: true,
        LogTypes: [m.logType],
        Filename: `${m.file}.py`,
        Mappings: mappings,
      }),
    )
  }
  const specs: RuleSpec[] = []
  for (let n = 0; n < rules; n++) {
    const spec = ruleSpec(n)
    const group = path.join(dir, 'rules', `synth_group_${String(Math.floor(n / 100)).padStart(2, '0')}`)
    fs.mkdirSync(group, { recursive: true })
    const data = flip
      ? {
          ...spec.yaml,
          Tests: (spec.yaml.Tests as TestSpec[]).map((x) => ({ ...x, ExpectedResult: !x.ExpectedResult })),
        }
      : spec.yaml
    fs.writeFileSync(path.join(group, `${spec.file}.py`), spec.source)
    fs.writeFileSync(path.join(group, `${spec.file}.yml`), YAML.stringify(data))
    specs.push({ ...spec, file: path.join(group, `${spec.file}.py`) })
  }
  return specs
}

// ---------------------------------------------------------------------------------------------
// The baseline: one plain interpreter, no isolation

const BASELINE_PY = `import importlib.util
import json
import sys
import time

start = time.perf_counter()
manifest = json.load(open(sys.argv[1]))
sys.path[:0] = [manifest["globalsDir"], manifest["runtimeDir"]]
FUNCTIONS = ("rule", "title", "dedup", "alert_context", "severity", "description", "reference", "runbook", "destinations")


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def walk(value, keys):
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


class Event(dict):
    """The minimal stand-in: the event as a dict, deep_get, deep_walk and udm over the same mappings."""

    def __init__(self, data, model):
        super().__init__(data)
        self.model = model

    def deep_get(self, *keys, default=None):
        value = walk(self, keys)
        return default if value is None else value

    def deep_walk(self, *keys, default=None):
        found = []

        def go(value, rest):
            if isinstance(value, list):
                for item in value:
                    go(item, rest)
            elif not rest:
                if value is not None and value not in found:
                    found.append(value)
            elif isinstance(value, dict):
                go(value.get(rest[0]), rest[1:])

        go(self, list(keys))
        if not found:
            return default
        return found[0] if len(found) == 1 else found

    def udm(self, *key, default=None):
        model = self.model
        if len(key) == 1 and model:
            name = key[0]
            path = model["paths"].get(name)
            if path is not None:
                value = walk(self, path)
                if value is not None:
                    return value
            method = model["methods"].get(name)
            if method is not None:
                return method(self)
            if path is not None:
                return default
        return self.deep_get("p_udm", *key) or self.deep_get(*key) or default


def mocked(value):
    return lambda *args, **kwargs: value


loaded = time.perf_counter()
models = {}
for log_type, entry in manifest["dataModels"].items():
    module = load(entry["file"], "synth_dm_" + log_type.replace(".", "_"))
    models[log_type] = {
        "paths": {name: path.removeprefix("$.").split(".") for name, path in entry["paths"].items()},
        "methods": {name: getattr(module, fn) for name, fn in entry["methods"].items()},
    }
rules = [(load(rule["file"], "synth_rule_%d" % k), rule) for k, rule in enumerate(manifest["rules"])]
imported = time.perf_counter()
passed = failed = tests = 0
failures = []
for module, rule in rules:
    for test in rule["tests"]:
        tests += 1
        if test["filtered"]:
            matched = False
        else:
            saved = {}
            for mock in test["mocks"]:
                saved[mock["objectName"]] = getattr(module, mock["objectName"])
                setattr(module, mock["objectName"], mocked(mock["returnValue"]))
            event = Event(test["log"], models.get(test["logType"]))
            matched = None
            for name in FUNCTIONS:
                fn = getattr(module, name, None)
                if callable(fn):
                    value = fn(event)
                    if name == "rule":
                        matched = value
            for name, fn in saved.items():
                setattr(module, name, fn)
        if matched is test["expected"]:
            passed += 1
        else:
            failed += 1
            failures.append([rule["id"], test["name"], matched])
end = time.perf_counter()
print(json.dumps({"tests": tests, "passed": passed, "failed": failed, "failures": failures[:5],
                  "importSeconds": imported - loaded, "loopSeconds": end - imported, "totalSeconds": end - start}))
`

interface BaselineReport {
  tests: number
  passed: number
  failed: number
  failures: unknown[]
  importSeconds: number
  loopSeconds: number
  totalSeconds: number
}

function writeManifest(file: string, dir: string, specs: RuleSpec[]): void {
  const manifest = {
    globalsDir: path.join(dir, 'global_helpers'),
    runtimeDir: RUNTIME_DIR,
    dataModels: Object.fromEntries(
      DATA_MODELS.map((m) => [
        m.logType,
        { file: path.join(dir, 'data_models', `${m.file}.py`), paths: m.paths, methods: m.methods },
      ]),
    ),
    rules: specs.map((s) => ({
      id: s.id,
      file: s.file,
      tests: s.tests.map((x) => ({
        name: x.Name,
        log: x.Log,
        logType: x.LogType ?? s.logTypes[0],
        mocks: x.Mocks ?? [],
        expected: x.ExpectedResult,
        filtered: x.filtered === true,
      })),
    })),
  }
  fs.writeFileSync(file, JSON.stringify(manifest))
}

// ---------------------------------------------------------------------------------------------
// Running

interface Exec {
  code: number | null
  stdout: string
  stderr: string
  seconds: number
}

function exec(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<Exec> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', (d: Buffer) => out.push(d))
    child.stderr.on('data', (d: Buffer) => err.push(d))
    child.on('error', reject)
    child.on('close', (code) =>
      resolve({
        code,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        seconds: (performance.now() - started) / 1000,
      }),
    )
  })
}

interface CliReport {
  summary: {
    files: number
    valid: number
    invalid: number
    rules: number
    tests: number
    passed: number
    failed: number
    notRun: number
  }
  rules: Array<{ id: string | null; tests: Array<{ name: string; passed: boolean | null; error: string | null }> }>
}

function runCli(dir: string): Promise<Exec> {
  // tsx by its resolved location, as test/helpers/cli.ts: the sources, never a stale build.
  const tsx = import.meta.resolve('tsx')
  return exec(process.execPath, ['--import', tsx, CLI_ENTRY, 'test', dir, '--json'], dir, {
    ...process.env,
    NO_COLOR: '1',
  })
}

function parseCli(run: Exec): CliReport {
  try {
    return JSON.parse(run.stdout) as CliReport
  } catch {
    throw new Error(`rulekeeper test printed no JSON report (exit ${run.code}): ${run.stderr.slice(-2000)}`)
  }
}

const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join('/')

const bench: BenchModule = async (ctx: BenchContext) => {
  const ruleCount = Math.max(TEMPLATES, Math.round(FULL_RULES * ctx.scale))
  const repo = path.join(ctx.tmpDir, 'repo')
  ctx.progress(`writing ${ruleCount} Python rules, ${GLOBALS.length} global helpers, ${DATA_MODELS.length} data models`)
  const specs = writeRepository(repo, ruleCount)
  const expectedTests = specs.reduce((a, s) => a + s.tests.length, 0)
  const manifest = path.join(ctx.tmpDir, 'baseline.json')
  writeManifest(manifest, repo, specs)
  const baselineScript = path.join(ctx.tmpDir, 'baseline.py')
  fs.writeFileSync(baselineScript, BASELINE_PY)
  const probe = spawnSync(
    'python3',
    ['-c', 'import sys; print(sys.executable); print("%d.%d.%d" % sys.version_info[:3])'],
    {
      encoding: 'utf8',
    },
  )
  const [python, pyVersion] = probe.stdout.trim().split('\n')
  if (!python) throw new Error(`python3 not found: ${probe.stderr}`)

  // Flipped expectations first (small: every template once, some twice): every test must fail.
  const flipped = path.join(ctx.tmpDir, 'flipped')
  const flippedSpecs = writeRepository(flipped, Math.min(12, ruleCount), true)
  const flippedTests = flippedSpecs.reduce((a, s) => a + s.tests.length, 0)
  ctx.progress(`flipped expectations: ${flippedSpecs.length} rules, ${flippedTests} tests must all fail`)
  const flipRun = await runCli(flipped)
  const flipReport = parseCli(flipRun)
  if (flipRun.code !== 1 || flipReport.summary.failed !== flippedTests || flipReport.summary.passed !== 0) {
    const passing = flipReport.rules.flatMap((r) =>
      r.tests.filter((x) => x.passed !== false).map((x) => `${r.id}: ${x.name}`),
    )
    throw new Error(
      `flipped expectations: exit ${flipRun.code}, ${JSON.stringify(flipReport.summary)}; not failing: ${passing.slice(0, 5).join('; ')}`,
    )
  }

  const loadStart = load()
  ctx.progress(`rulekeeper test --json over ${ruleCount} rules, ${expectedTests} tests (load ${loadStart})`)
  const cli = await runCli(repo)
  const loadAfterCli = load()
  const report = parseCli(cli)
  const s = report.summary
  if (
    cli.code !== 0 ||
    s.tests !== expectedTests ||
    s.passed !== expectedTests ||
    s.invalid !== 0 ||
    s.rules !== ruleCount
  ) {
    const failing = report.rules.flatMap((r) =>
      r.tests.filter((x) => x.passed !== true).map((x) => `${r.id}: ${x.name}: ${x.error}`),
    )
    throw new Error(
      `rulekeeper test: exit ${cli.code}, ${JSON.stringify(s)} (expected ${ruleCount} rules, ${expectedTests} tests); ${failing.slice(0, 5).join('; ')} ${cli.stderr.slice(-1000)}`,
    )
  }

  ctx.progress(`baseline: one plain ${python} process over the same modules and events (load ${load()})`)
  // -B: nothing written beside the runtime's sources (python/); the rule modules compile as in a run.
  const plain = await exec(python, ['-B', baselineScript, manifest], ctx.tmpDir, {})
  const base = JSON.parse(plain.stdout || '{}') as BaselineReport
  if (plain.code !== 0 || base.tests !== expectedTests || base.passed !== expectedTests)
    throw new Error(`baseline: exit ${plain.code}, ${plain.stdout.slice(0, 1000)} ${plain.stderr.slice(-1000)}`)
  const loadEnd = load()

  const testsPerSec = expectedTests / cli.seconds
  const plainPerSec = expectedTests / plain.seconds
  const loopPerSec = expectedTests / base.loopSeconds
  const filtered = specs.reduce((a, x) => a + x.tests.filter((y) => y.filtered).length, 0)
  const mocked = specs.reduce((a, x) => a + x.tests.filter((y) => y.Mocks).length, 0)
  const shape = `${ruleCount} rules (${TEMPLATES} templates), ${expectedTests} tests (${mocked} with Mocks, ${filtered} stopped by InlineFilters), ${GLOBALS.length} global helpers, ${DATA_MODELS.length} data models; Python ${pyVersion}`
  return [
    {
      name: `rulekeeper test, ${ruleCount} Python rules, ${expectedTests} tests (one sandbox per rule)`,
      target: `≤ ${TARGET_S} s wall on 2 cores`,
      value: Number(cli.seconds.toFixed(2)),
      unit: 's (wall, end to end)',
      pass: cli.seconds <= TARGET_S,
      notes: `${testsPerSec.toFixed(0)} tests/s, ${(ruleCount / cli.seconds).toFixed(0)} rules/s; the CLI from spawn to exit (Node + tsx start, directory read and checked, one bubblewrap sandbox per rule, JSON report); every test passed, and all ${flippedTests} tests of ${flippedSpecs.length} rules with flipped ExpectedResult failed (${flipRun.seconds.toFixed(1)} s); ${shape}; load average ${loadStart} before, ${loadAfterCli} after, 2 shared cores`,
    },
    {
      name: 'Python rule tests per second vs one plain python3 process',
      target: 'reported (ratio to a plain python3 loop, no isolation)',
      value: Number(testsPerSec.toFixed(1)),
      unit: 'tests/s',
      baseline: {
        name: 'one plain python3 process, same modules and events, no isolation (start, imports and loop)',
        value: Number(plainPerSec.toFixed(0)),
        unit: 'tests/s',
      },
      ratio: Number((plainPerSec / testsPerSec).toFixed(1)),
      pass: true,
      notes: `ratio = how many times faster the plain process is; baseline wall ${plain.seconds.toFixed(2)} s (imports of ${ruleCount} rule modules ${base.importSeconds.toFixed(2)} s, the loop alone ${base.loopSeconds.toFixed(3)} s = ${loopPerSec.toFixed(0)} tests/s, ${(loopPerSec / testsPerSec).toFixed(0)}× the CLI); the event is a dict with deep_get/deep_walk/udm over the same mappings, mocks patched on the module; load average ${loadEnd} at the end`,
    },
  ]
}

export default bench
