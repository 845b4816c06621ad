// Python streaming rules in detection, through the real ingest path: records POSTed to the real
// log-source route of a real server, evaluated from the stored log by Python rules in the real
// sandboxed pool (bubblewrap, real python3), grouped and listed by the alert API. The shared
// examples (a data model with udm(), a global helper, severity() returning DEFAULT) and a Python
// twin of the template's privacy-mode rule on the sample events; title()/dedup()/severity() with a
// Threshold and a dedup window; a rule that raises, one that hangs and one that kills its own run
// (rule errors at the record, the other rules and records unaffected); a rule change between
// records; a disabled rule; InlineFilters; and replay (API and CLI) equal to the live run.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { open, readFile } from 'node:fs/promises'
import path from 'node:path'
import t, { type Test } from 'tap'
import { commandRecord, commandRule, DETECT_ENV, postLog, sendAndDetect } from './helpers.js'
import { EXAMPLES } from '../ingest/helpers.js'
import { runCli } from '../helpers/cli.js'
import { gitAs, PAT } from '../helpers/git-as.js'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

const EXAMPLE_RULES = path.resolve(import.meta.dirname, '../../examples/rules')
const cmd = (name: string, timestamp: string, extra: Record<string, unknown> = {}) =>
  commandRecord('py', name, timestamp, extra)
const send = sendAndDetect

/** A Python streaming rule on Editor.Audit through the API (no unit tests, so any body saves). */
async function pyRule(s: InProcessServer, id: string, body: string, extra: Record<string, unknown> = {}) {
  const res = await s.request('POST', '/rules', { ...SAMPLE_BODIES.python(id, { body, tests: [] }), ...extra })
  if (res.status !== 200) throw new Error(`rule ${id}: ${res.status} ${res.text}`)
}

/** rule() for records whose team_command.command_name is `name`. */
const matchCommand = (name: string) =>
  `def rule(event):\n    return event.deep_get("team_command", "command_name") == ${JSON.stringify(name)}\n`

/** Commits the shared examples' data model and Python rules with plain git and reconciles. */
async function pushExamples(t: Test, s: InProcessServer): Promise<void> {
  const work = path.join(tempDir('rk-pydetect-git-'), 'w')
  execFileSync('git', ['clone', '-q', s.gitdir, work])
  for (const dir of ['data_models', 'rules/editor_rules'])
    fs.cpSync(path.join(EXAMPLE_RULES, dir), path.join(work, dir), { recursive: true })
  // A module that raises when imported (the API's import check would refuse it; git does not, and
  // the reconciler's check of the revision's Python makes the file invalid: never served).
  fs.mkdirSync(path.join(work, 'rules', 'broken'), { recursive: true })
  fs.writeFileSync(
    path.join(work, 'rules', 'broken', 'broken_import.yml'),
    'AnalysisType: rule\nRuleID: Py.BrokenImport\nEnabled: true\nFilename: broken_import.py\nLogTypes: [Editor.Audit]\nSeverity: Low\n',
  )
  fs.writeFileSync(
    path.join(work, 'rules', 'broken', 'broken_import.py'),
    'raise RuntimeError("no config at import")\n\n\ndef rule(event):\n    return True\n',
  )
  gitAs(PAT, work, 'add', '-A')
  gitAs(PAT, work, 'commit', '-q', '-m', 'Add the shared examples')
  gitAs(PAT, work, 'push', '-q', 'origin', 'HEAD:main')
  const rec = await s.request('POST', '/reconcile')
  t.equal(rec.status, 200, rec.text)
  t.same(
    rec.body.invalidFiles,
    [
      {
        path: 'rules/broken/broken_import.yml',
        ruleId: 'Py.BrokenImport',
        errors: [
          {
            message:
              'rules/broken/broken_import.py failed to import: RuntimeError: no config at import (rules/broken/broken_import.py, line 1)',
            line: 1,
            column: null,
            file: 'rules/broken/broken_import.py',
          },
        ],
      },
    ],
    'the examples are valid; the module that does not import is invalid',
  )
}

const alertsOf = async (s: InProcessServer, ruleId: string) =>
  (await s.request('GET', `/alerts?rule-id=${encodeURIComponent(ruleId)}&limit=1000`)).body.results as any[]
const errorsOf = async (s: InProcessServer, ruleId: string) =>
  (await s.request('GET', `/rule-errors?rule-id=${encodeURIComponent(ruleId)}&limit=1000`)).body.results as any[]
const matchesOf = async (s: InProcessServer, ruleId: string) =>
  (
    await s.server.detection.store.readMatches(
      Date.parse('2026-11-01T00:00:00Z'),
      Date.parse('2026-12-01T00:00:00Z'),
      (m) => m.ruleId === ruleId,
    )
  ).sort((a: any, b: any) => (a.eventTime < b.eventTime ? -1 : 1)) as any[]
const byFirst = (a: any[]) => [...a].sort((x, y) => (x.firstEventTime < y.firstEventTime ? -1 : 1))

/** The stored record at a rule error's or match's location. */
async function recordAt(s: InProcessServer, at: { partition: string; offset: number }): Promise<any> {
  const fh = await open(path.join(s.dataDir, 'logs', at.partition), 'r')
  try {
    const buf = Buffer.alloc(64 * 1024)
    const { bytesRead } = await fh.read(buf, 0, buf.length, at.offset)
    return JSON.parse(buf.subarray(0, bytesRead).toString('utf8').split('\n')[0]!)
  } finally {
    await fh.close()
  }
}

const PRIVACY_PY = `def rule(event):
    settings = event.get("team_settings") or {}
    return settings.get("setting_name") == "privacy_mode_enforced" and settings.get("new_value") in ("false", "off", "0")


def title(event):
    return f"Privacy-mode enforcement disabled by [{event.get('user_email')}] for team [{event.get('team_id')}]"


def dedup(event):
    return event.get("team_id")


def alert_context(event):
    return {"actor": event.get("user_email"), "old_value": event.deep_get("team_settings", "old_value")}
`

t.test('Python streaming rules in detection', async (t) => {
  const dataDir = tempDir('rk-pydetect-')
  // A short wall clock per record so the hanging rule costs seconds, not minutes.
  const s = await startInProcess({ dataDir, env: DETECT_ENV, config: { python: { timeoutMs: 1500 } } })
  t.teardown(() => s.close())
  await pushExamples(t, s)
  await pyRule(s, 'Py.PrivacyMode', PRIVACY_PY, { severity: 'HIGH', displayName: 'Privacy mode off (Python)' })

  await t.test('the sample events: the Python twin of the template rule, and the shared examples', async (t) => {
    const body = await readFile(path.join(EXAMPLES, 'valid.ndjson'))
    const res = await postLog(s, body)
    t.equal(res.status, 200)
    await s.server.detection.detector.idle()
    const [simple] = await alertsOf(s, 'Editor.Audit.PrivacyModeEnforcementDisabled')
    const [alert, ...more] = await alertsOf(s, 'Py.PrivacyMode')
    t.equal(more.length, 0, 'one alert')
    t.equal(alert.ruleKind, 'python')
    t.equal(alert.title, simple.title, 'title() gives what the simple rule’s AlertTitle gives')
    t.match(alert.title, /^Privacy-mode enforcement disabled by \[.+\] for team \[4821\]$/)
    t.equal(alert.dedup, '4821', 'dedup() is the dedup string')
    t.equal(alert.severity, 'HIGH')
    t.same(alert.alertContext, simple.alertContext, 'alert_context()')
    t.equal(alert.revision, s.server.catalog.index.revision)
    t.equal(alert.firstEventTime, simple.firstEventTime)
    const events = await s.request('GET', `/alerts/${alert.id}/events`)
    t.equal(events.body.results[0].team_settings.setting_name, 'privacy_mode_enforced')

    // The shared hook rule: a global helper imported, dedup() and severity() returning DEFAULT.
    const records = body
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
    const hooks = records.filter(
      (r) => ['create', 'update'].includes(r.team_hook?.action) && r.team_hook?.script_content,
    )
    t.ok(hooks.length > 0, 'the samples have a hook with a script')
    const hookAlerts = await alertsOf(s, 'Editor.Audit.TeamHookScriptAdded')
    t.same(hookAlerts.map((a) => a.dedup).sort(), [...new Set(hooks.map((h) => h.team_hook.hook_id))].sort())
    const first = hookAlerts.find((a) => a.dedup === hooks[0].team_hook.hook_id)
    t.equal(first.severity, 'MEDIUM', 'severity() returned DEFAULT: the file’s Severity')
    t.equal(
      first.title,
      `Team hook script [${hooks[0].team_hook.script_name}] ${hooks[0].team_hook.action}d by [${hooks[0].user_email}]`,
    )
    t.equal(first.alertContext.script_name, hooks[0].team_hook.script_name)
    t.equal(first.description.trim().startsWith('A team hook runs a script'), true, 'the rule’s Description')

    // The failed-login burst rule: udm() through the data model (Path and Method), Threshold 5.
    const failed = records.filter((r) => r.login?.success === false)
    const matches = await matchesOf(s, 'Editor.Audit.FailedLoginBurst')
    t.equal(matches.length, failed.length, 'one match per failed login (udm event_outcome = failure)')
    t.same(
      matches.map((m) => m.dedup),
      failed.map((r) => r.user_email),
      'dedup() from udm("actor_user") (a Path mapping)',
    )
    t.same(matches[0].alertContext, { actor: failed[0].user_email, ip: failed[0].ip_address })
    t.equal(matches[0].revision, s.server.catalog.index.revision, 'the revision is recorded per match')
    t.same(await alertsOf(s, 'Editor.Audit.FailedLoginBurst'), [], `${failed.length} of Threshold 5: no alert`)
    t.same(await errorsOf(s, 'Py.PrivacyMode'), [])
    // Invalid when its revision was indexed, so never evaluated (a module failing at import in
    // detection is one error per batch: test/engine/python/module-check.test.ts).
    t.same(await errorsOf(s, 'Py.BrokenImport'), [], 'a module that does not import is not served')
    t.same(await matchesOf(s, 'Py.BrokenImport'), [])
    t.same(await errorsOf(s, 'Editor.Audit.TeamHookScriptAdded'), [])
  })

  await t.test('title(), dedup() and severity() from Python with Threshold and the dedup window', async (t) => {
    await pyRule(
      s,
      'Py.Threshold',
      `${matchCommand('pythr')}

def title(event):
    return "burst by " + event.get("user_email")


def dedup(event):
    return event.get("user_email")


def severity(event):
    return "critical" if event.get("ip_address") == "203.0.113.66" else "DEFAULT"
`,
      { threshold: 3, dedupPeriodMinutes: 60, severity: 'LOW', summaryAttributes: ['ip_address'] },
    )
    await send(s, [
      cmd('pythr', '2026-11-20T10:00:00Z', { user_email: 'a@example.com' }),
      cmd('pythr', '2026-11-20T10:05:00Z', { user_email: 'b@example.com' }),
      cmd('pythr', '2026-11-20T10:10:00Z', { user_email: 'a@example.com' }),
    ])
    t.same(await alertsOf(s, 'Py.Threshold'), [], 'two of three for a@: no alert yet')
    await send(s, [
      cmd('pythr', '2026-11-20T10:59:59.999Z', { user_email: 'a@example.com', ip_address: '203.0.113.66' }),
      // exactly t0 + 60 min: outside the first window, a new group
      cmd('pythr', '2026-11-20T11:00:00Z', { user_email: 'a@example.com' }),
    ])
    const alerts = await alertsOf(s, 'Py.Threshold')
    t.equal(alerts.length, 1, 'the third match in the window makes the alert')
    const [a] = alerts
    t.equal(a.dedup, 'a@example.com')
    t.equal(a.title, 'burst by a@example.com')
    t.equal(a.severity, 'LOW', 'the first match’s severity: DEFAULT is the file’s Severity')
    t.equal(a.eventCount, 3)
    t.equal(a.lastEventTime, '2026-11-20T10:59:59.999Z')
    t.same(a.summary.ip_address, [
      { value: '198.51.100.7', count: 2 },
      { value: '203.0.113.66', count: 1 },
    ])
    const matches = await matchesOf(s, 'Py.Threshold')
    t.same(
      matches.map((m) => [m.dedup, m.severity]),
      [
        ['a@example.com', 'LOW'],
        ['b@example.com', 'LOW'],
        ['a@example.com', 'LOW'],
        ['a@example.com', 'CRITICAL'],
        ['a@example.com', 'LOW'],
      ],
      'severity() per match: "critical" read as CRITICAL',
    )
  })

  await t.test('a rule that raises: a rule error at the record; other rules and records go on', async (t) => {
    await pyRule(
      s,
      'Py.Raises',
      `def rule(event):
    name = event.deep_get("team_command", "command_name")
    if name == "pyboom":
        return {}["missing"]
    return name in ("pyboom", "pyok")
`,
    )
    await commandRule(s, 'S.SameRecords', 'pyboom')
    await send(s, [
      cmd('pyok', '2026-11-20T12:00:00Z'),
      cmd('pyboom', '2026-11-20T12:01:00Z'),
      cmd('pyok', '2026-11-20T12:02:00Z'),
    ])
    const errors = await errorsOf(s, 'Py.Raises')
    t.equal(errors.length, 1)
    t.match(errors[0].error, /^KeyError: 'missing' \(.*\.py, line 4\)$/, 'the exception, its file and line')
    t.equal(errors[0].revision, s.server.catalog.index.revision)
    const at = await recordAt(s, errors[0].record)
    t.equal(at.team_command.command_name, 'pyboom', 'the error names the record it happened on')
    t.equal((await matchesOf(s, 'Py.Raises')).length, 2, 'the records before and after it matched')
    t.equal((await alertsOf(s, 'S.SameRecords')).length, 1, 'another rule on the same record matched')
  })

  await t.test('a rule that hangs or kills its run: errors at those records, the pool recovers', async (t) => {
    await pyRule(
      s,
      'Py.Hangs',
      `import os


def rule(event):
    name = event.deep_get("team_command", "command_name")
    if name == "pyhang":
        while True:
            pass
    if name == "pyexit":
        os._exit(3)
    return name in ("pyhang", "pyexit", "pyfine")
`,
    )
    await pyRule(s, 'Py.Beside', matchCommand('pyfine'))
    const started = Date.now()
    await send(s, [
      cmd('pyfine', '2026-11-20T13:00:00Z'),
      cmd('pyhang', '2026-11-20T13:01:00Z'),
      cmd('pyfine', '2026-11-20T13:02:00Z'),
      cmd('pyexit', '2026-11-20T13:03:00Z'),
      cmd('pyfine', '2026-11-20T13:04:00Z'),
    ])
    t.ok(Date.now() - started < 20_000, 'one timeout, not one per record')
    const errors = (await errorsOf(s, 'Py.Hangs')).sort((a, b) => a.record.offset - b.record.offset)
    t.equal(errors.length, 2)
    t.match(errors[0].error, /stopped: timed out after 1500 ms/)
    t.equal((await recordAt(s, errors[0].record)).team_command.command_name, 'pyhang')
    t.match(errors[1].error, /stopped: exited with code 3/)
    t.equal((await recordAt(s, errors[1].record)).team_command.command_name, 'pyexit')
    t.equal((await matchesOf(s, 'Py.Hangs')).length, 3, 'the rule still matched the other records of the batch')
    t.equal((await matchesOf(s, 'Py.Beside')).length, 3, 'another Python rule saw every record')
    // The pool serves the next batch (and unit tests on save) as before.
    await send(s, [cmd('pyfine', '2026-11-20T13:05:00Z')])
    t.equal((await matchesOf(s, 'Py.Hangs')).length, 4)
    const save = await s.request('POST', '/rules', SAMPLE_BODIES.python('Py.Saved'))
    t.equal(save.status, 200, 'unit tests on save still run')
  })

  await t.test('a rule that hangs on every record is skipped for the rest of its batch after 3 stops', async (t) => {
    await pyRule(s, 'Py.AlwaysHangs', 'def rule(event):\n    while True:\n        pass\n')
    await pyRule(s, 'Py.AllSeen', matchCommand('pyall'))
    const started = Date.now()
    await send(
      s,
      Array.from({ length: 6 }, (_, i) => cmd('pyall', `2026-11-20T13:3${i}:00Z`)),
    )
    t.ok(Date.now() - started < 15_000, 'three timeouts, not six')
    const errors = (await errorsOf(s, 'Py.AlwaysHangs')).sort((a, b) => a.record.offset - b.record.offset)
    t.equal(errors.length, 6, 'every record of the batch has its error')
    t.ok(errors.slice(0, 3).every((e) => /stopped: timed out after 1500 ms/.test(e.error)))
    t.ok(
      errors
        .slice(3)
        .every((e) => /^not evaluated: the rule stopped its Python run 3 times in this batch/.test(e.error)),
    )
    t.equal((await matchesOf(s, 'Py.AllSeen')).length, 6, 'the other rule saw every record')
    const off = await s.request('PUT', '/rules/Py.AlwaysHangs', {
      ...SAMPLE_BODIES.python('Py.AlwaysHangs', { body: matchCommand('never'), tests: [], enabled: false }),
    })
    t.equal(off.status, 200, 'disabled for the next subtests')
  })

  await t.test('a rule change between records: each match records the revision it ran with', async (t) => {
    await pyRule(s, 'Py.Change', `${matchCommand('pychg')}\n\ndef title(event):\n    return "first"\n`, {
      dedupPeriodMinutes: 1,
    })
    const r1 = s.server.catalog.index.revision
    await send(s, [cmd('pychg', '2026-11-20T14:00:00Z')])
    const put = await s.request('PUT', '/rules/Py.Change', {
      ...SAMPLE_BODIES.python('Py.Change', {
        body: `${matchCommand('pychg')}\n\ndef title(event):\n    return "second"\n`,
        tests: [],
        severity: 'CRITICAL',
        dedupPeriodMinutes: 1,
      }),
    })
    t.equal(put.status, 200, put.text)
    const r2 = s.server.catalog.index.revision
    t.not(r1, r2)
    await send(s, [cmd('pychg', '2026-11-20T14:10:00Z')])
    t.same(
      byFirst(await alertsOf(s, 'Py.Change')).map((a) => [a.revision, a.title, a.severity]),
      [
        [r1, 'first', 'LOW'],
        [r2, 'second', 'CRITICAL'],
      ],
    )
    t.same(
      (await matchesOf(s, 'Py.Change')).map((m) => m.revision),
      [r1, r2],
    )
  })

  await t.test('a disabled rule never runs; InlineFilters reject before rule()', async (t) => {
    const raises = 'def rule(event):\n    raise ValueError("rule() was called")\n'
    await pyRule(s, 'Py.Disabled', raises, { enabled: false })
    await pyRule(s, 'Py.Filtered', raises, {
      inlineFilters: '- KeyPath: team_command.command_name\n  Condition: Equals\n  Value: pyflt-in\n',
    })
    await send(s, [
      cmd('pyflt-out', '2026-11-20T15:00:00Z'),
      cmd('pyflt-in', '2026-11-20T15:01:00Z'),
      cmd('pyflt-out', '2026-11-20T15:02:00Z'),
    ])
    t.same(await errorsOf(s, 'Py.Disabled'), [], 'a disabled rule raises nowhere: it never ran')
    t.same(await matchesOf(s, 'Py.Disabled'), [])
    const errors = await errorsOf(s, 'Py.Filtered')
    t.equal(errors.length, 1, 'rule() ran only on the record the filters let through')
    t.match(errors[0].error, /^ValueError: rule\(\) was called/)
    t.equal((await recordAt(s, errors[0].record)).team_command.command_name, 'pyflt-in')
  })

  await t.test('replay gives the live run’s Python alerts (API and CLI)', async (t) => {
    // createdAt/updatedAt/status are the replay's own; it runs the served revision, while the live
    // alerts carry the revision each was made with (rules were added since).
    const same = (a: any) => {
      // Triage (status, assignee) is the live alert's own state: a replay has none.
      const { createdAt: _c, updatedAt: _u, status: _s, assignee: _a, revision: _r, ...rest } = a
      return rest
    }
    const byId = (xs: any[]) => [...xs].sort((a, b) => (a.id < b.id ? -1 : 1)).map(same)
    const ids = ['Py.PrivacyMode', 'Py.Threshold', 'Py.Raises', 'Editor.Audit.TeamHookScriptAdded']
    const live = (await Promise.all(ids.map((id) => alertsOf(s, id)))).flat()
    t.same(live.map((a) => a.ruleId).sort(), [...ids].sort(), 'one live alert of each')
    const from = '2026-11-20T00:00:00Z'
    const to = '2026-11-21T00:00:00Z'
    const res = await s.request('POST', '/replay', { from, to, ruleIds: ids })
    t.equal(res.status, 200)
    t.same(byId(res.body.alerts), byId(live), 'the same alerts: ids, counts, times, titles, dedup, severity')
    t.ok(
      res.body.alerts.every((a: any) => a.revision === s.server.catalog.index.revision),
      'replayed with the served revision',
    )
    const liveMatches = (await Promise.all(ids.map((id) => matchesOf(s, id)))).flat().length
    t.equal(res.body.matches, liveMatches, 'the same matches')
    const cli = await runCli(['replay', '--from', from, '--to', to, '--json', '--data-dir', dataDir, '--rule', ids[1]!])
    t.equal(cli.code, 0, cli.stderr)
    t.same(byId(JSON.parse(cli.stdout).alerts), byId(live.filter((a) => a.ruleId === ids[1])))
    const broken = await errorsOf(s, 'Py.BrokenImport')
    t.ok(
      broken.every((e) => e.record === null),
      'the broken module: never an error per record',
    )
    t.equal(new Set(broken.map((e) => e.revision)).size, broken.length, 'one error per revision it was served in')
  })
})
