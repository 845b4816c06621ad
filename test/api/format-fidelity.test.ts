// The format as real repositories write it, through the API (issue 13, points 3, 5 and 6): files
// committed with plain git (default-valued keys, comments, numbers in Reports, a test's LogType,
// InlineFilters on a scheduled rule) survive a GET → PUT byte for byte with no commit, a PUT that
// changes one field changes one line, correlation transitions in any list order and without
// Match are accepted, and one 400 lists structure and language problems together.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'
import { gitAs } from '../helpers/git-as.js'

const HAND_WRITTEN_SIMPLE = `# Written by a person; every line below must survive a GET → PUT.
AnalysisType: rule
RuleID: Fidelity.Simple
Enabled: true
LogTypes: [AWS.CloudTrail]
Severity: high          # the file's own spelling
DedupPeriodMinutes: 60  # the default, written anyway
Threshold: 1
CreateAlert: true
Tags: []
Reports:
  CIS: [3.10, 3.5]
  MITRE ATT&CK:
    - TA0005:T1562
Detection:
  # the event we care about
  - KeyPath: eventName
    Condition: Equals
    Value: DeleteTrail
Tests:
  - Name: delete trail
    LogType: AWS.CloudTrail
    ExpectedResult: true
    Log: { eventName: DeleteTrail }
  - Name: other
    ExpectedResult: false
    Mocks: []
    Log: { eventName: GetObject }
`

const HAND_WRITTEN_SCHEDULED = `AnalysisType: scheduled_rule
Filename: grants.py
RuleID: Fidelity.Scheduled
Enabled: true
ScheduledQueries: [Editor.Audit.AdminGrants.Hourly]
Severity: Medium
InlineFilters:
  - KeyPath: actor.type
    Condition: Equals
    Value: user
Threshold: 1
Tests:
  - Name: a person with many grants
    ExpectedResult: true
    Log: { grants: 5, actor: { type: user } }
  - Name: a service is filtered out before rule()
    ExpectedResult: false
    Log: { grants: 5, actor: { type: service } }
`
const GRANTS_PY = 'def rule(event):\n    return event.get("grants", 0) > 1\n'

const CAROL = { name: 'Carol', email: 'carol@example.com' }

function gitIn(cwd: string, args: string[]): string {
  return gitAs(CAROL, cwd, ...args)
}

/** Commits `files` with plain git into the server's repository and reconciles. */
async function pushByHand(t: Test, s: InProcessServer, files: Record<string, string>): Promise<void> {
  const work = path.join(tempDir('rk-fidelity-'), 'w')
  execFileSync('git', ['clone', '-q', s.gitdir, work])
  for (const [p, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(work, p)), { recursive: true })
    fs.writeFileSync(path.join(work, p), text)
  }
  gitIn(work, ['add', '-A'])
  gitIn(work, ['commit', '-q', '-m', 'Add rules by hand'])
  gitIn(work, ['push', '-q', 'origin', 'HEAD:main'])
  const rec = await s.request('POST', '/reconcile')
  t.equal(rec.status, 200, rec.text)
  t.same(rec.body.invalidFiles, [], 'the hand-written files are valid')
}

const head = (s: InProcessServer) => s.git('rev-parse', 'main').trim()

t.test('GET → PUT of a hand-written file changes nothing; one changed field changes one line', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const file = 'simple_rules/hand/fidelity.yml'
  await pushByHand(t, s, { [file]: HAND_WRITTEN_SIMPLE })

  const got = await s.request('GET', '/simple-rules/Fidelity.Simple')
  t.equal(got.status, 200, got.text)
  t.same(got.body.reports, { CIS: ['3.10', '3.5'], 'MITRE ATT&CK': ['TA0005:T1562'] }, 'numbers read as written')
  t.equal(got.body.tests[0].logType, 'AWS.CloudTrail', 'a test’s LogType is shown')
  t.equal(got.body.tests[1].logType, undefined)
  t.equal(got.body.threshold, 1)
  t.equal(got.body.dedupPeriodMinutes, 60)

  // api.md: a replace that changes nothing (same bytes) makes no commit and returns 200.
  const before = head(s)
  const same = await s.request('PUT', '/simple-rules/Fidelity.Simple', got.body)
  t.equal(same.status, 200, same.text)
  t.equal(head(s), before, 'no commit')
  t.equal(s.git('show', `main:${file}`), HAND_WRITTEN_SIMPLE, 'the file is byte for byte what was written')
  t.equal(same.headers.get('etag'), got.headers.get('etag'), 'the same files')

  // One field changed: exactly its line changes (its comment kept).
  const changed = await s.request('PUT', '/simple-rules/Fidelity.Simple', { ...got.body, dedupPeriodMinutes: 90 })
  t.equal(changed.status, 200, changed.text)
  t.not(head(s), before, 'a commit')
  const diff = s.git('diff', '--unified=0', before, 'main', '--', file)
  const lines = diff.split('\n').filter((l) => /^[-+][^-+]/.test(l))
  t.same(lines, [
    '-DedupPeriodMinutes: 60  # the default, written anyway',
    '+DedupPeriodMinutes: 90  # the default, written anyway',
  ])

  // A test edited: the other tests (and their flow style) stay as written.
  const now = (await s.request('GET', '/simple-rules/Fidelity.Simple')).body
  const tests = structuredClone(now.tests)
  tests[1].name = 'another event'
  const before2 = head(s)
  const edited = await s.request('PUT', '/simple-rules/Fidelity.Simple', { ...now, tests })
  t.equal(edited.status, 200, edited.text)
  const diff2 = s.git('diff', '--unified=0', before2, 'main', '--', file)
  t.same(
    diff2.split('\n').filter((l) => /^[-+][^-+]/.test(l)),
    ['-  - Name: other', '+  - Name: another event'],
  )
  t.match(s.git('show', `main:${file}`), /Log: \{ eventName: DeleteTrail \}\n/)
  t.match(s.git('show', `main:${file}`), /LogType: AWS\.CloudTrail\n/)
})

t.test('a scheduled rule’s InlineFilters: shown, kept, and applied before rule()', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const file = 'scheduled_rules/hand/grants.yml'
  await pushByHand(t, s, { [file]: HAND_WRITTEN_SCHEDULED, 'scheduled_rules/hand/grants.py': GRANTS_PY })
  const got = await s.request('GET', '/scheduled-rules/Fidelity.Scheduled')
  t.equal(got.status, 200, got.text)
  t.match(got.body.inlineFilters, /KeyPath: actor\.type/)
  const before = head(s)
  // run-tests-first (the default): the second test passes only because the filters apply.
  const same = await s.request('PUT', '/scheduled-rules/Fidelity.Scheduled', got.body)
  t.equal(same.status, 200, same.text)
  t.equal(head(s), before, 'no commit')
  t.equal(s.git('show', `main:${file}`), HAND_WRITTEN_SCHEDULED)

  // Through the API: a filtered-out event is a non-match, whatever rule() would say.
  const serviceTest = { name: 'a service', expectedResult: true, log: { grants: 5, actor: { type: 'service' } } }
  const body = SAMPLE_BODIES.scheduled('Fidelity.Scheduled.New', {
    inlineFilters: '- KeyPath: actor.type\n  Condition: Equals\n  Value: user\n',
    tests: [serviceTest],
  })
  const refused = await s.request('POST', '/scheduled-rules', body)
  t.equal(refused.status, 400, refused.text)
  t.match(refused.body.testResults[0], {
    name: 'a service',
    passed: false,
    error: /InlineFilters did not pass/,
    functions: { detection: { output: false, error: null } },
  })
  const saved = await s.request('POST', '/scheduled-rules', {
    ...body,
    tests: [{ ...serviceTest, expectedResult: false }],
  })
  t.equal(saved.status, 200, saved.text)
  const yaml = s.git('show', 'main:scheduled_rules/fidelity/Fidelity.Scheduled.New.yml')
  t.match(yaml, /InlineFilters:\n {2}- KeyPath: actor\.type\n/)
  // A filter in a language error is a 400 at the field, with its line.
  const bad = await s.request('POST', '/scheduled-rules', {
    ...SAMPLE_BODIES.scheduled('Fidelity.Scheduled.Bad'),
    inlineFilters: '- KeyPath: actor.type\n  Condition: Matches\n  Value: user\n',
  })
  t.equal(bad.status, 400, bad.text)
  t.match(bad.body.errors, [{ path: '/inlineFilters', message: /Matches/, line: 2 }])
})

t.test('correlation transitions: the order is From → To, and Match may be left out', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  // Listed Success, Failures; the transition goes Failures → Success; it joins nothing.
  const detection = `- Sequence:
    - ID: Success
      RuleID: Editor.Audit.LoginSucceeded
    - ID: Failures
      RuleID: Editor.Audit.LoginFailed
  Transitions:
    - ID: Failures FOLLOWED BY Success
      From: Failures
      To: Success
      WithinTimeFrameMinutes: 30
  LookbackWindowMinutes: 60
  Schedule:
    RateMinutes: 60
    TimeoutMinutes: 5
`
  const out = (failures: number, success: number, who = 'b@example.com') => [
    { id: 'Failures', matches: { 'p_alert_context.actor': { 'a@example.com': [failures] } } },
    { id: 'Success', matches: { 'p_alert_context.actor': { [who]: [success] } } },
  ]
  const res = await s.request(
    'POST',
    '/correlation-rules',
    SAMPLE_BODIES.correlation('Fidelity.Correlation', {
      detection,
      tests: [
        { name: 'failure then success, any actors', expectedResult: true, ruleOutputs: out(0, 5) },
        { name: 'success then failure', expectedResult: false, ruleOutputs: out(5, 0) },
        { name: 'too late', expectedResult: false, ruleOutputs: out(0, 31) },
      ],
    }),
  )
  t.equal(res.status, 200, res.text)
})

t.test('one 400 lists a bad severity and a bad condition together', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const res = await s.request(
    'POST',
    '/simple-rules',
    SAMPLE_BODIES.simple('Fidelity.Bad', {
      severity: 'SEVERE',
      detection: '- KeyPath: eventName\n  Condition: Equalz\n  Value: ConsoleLogin\n',
    }),
  )
  t.equal(res.status, 400, res.text)
  const errors = res.body.errors as Array<{ path: string; message: string; line?: number; column?: number }>
  t.match(errors, [{ path: '/severity', message: /severity must be one of/ }, { path: '/detection' }])
  const condition = errors.find((e) => e.path === '/detection')
  t.match(condition, { message: /Equalz/, line: 2, column: 3 })
  t.equal(errors.filter((e) => e.path === '/severity').length, 1, 'the severity is reported once')
})

t.test('a title continued at column 0 (read as PyYAML reads it) survives an edit of another field', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const file = 'simple_rules/hand/continued.yml'
  const text = `AnalysisType: rule
RuleID: Fidelity.Continued
Enabled: true
LogTypes: [AWS.CloudTrail]
Severity: High
AlertTitle: "Trail deleted
in account {recipientAccountId}"
Detection:
  - KeyPath: eventName
    Condition: Equals
    Value: DeleteTrail
Tests:
  - Name: delete trail
    ExpectedResult: true
    Log: { eventName: DeleteTrail }
`
  await pushByHand(t, s, { [file]: text })
  const got = await s.request('GET', '/simple-rules/Fidelity.Continued')
  t.equal(got.status, 200, got.text)
  // alertTitle is a YAML-text field (api.md): the folded string, as YAML.
  t.equal(got.body.alertTitle, 'Trail deleted in account {recipientAccountId}\n', 'folded as PyYAML folds it')
  const same = await s.request('PUT', '/simple-rules/Fidelity.Continued', got.body)
  t.equal(same.status, 200, same.text)
  t.equal(s.git('show', `main:${file}`), text, 'an unchanged PUT leaves the bytes')
  const changed = await s.request('PUT', '/simple-rules/Fidelity.Continued', { ...got.body, severity: 'LOW' })
  t.equal(changed.status, 200, changed.text)
  const after = s.git('show', `main:${file}`)
  t.match(after, /Severity: (LOW|Low)\n/)
  t.equal(after.replace(/Severity: \w+\n/, 'Severity: High\n'), text, 'only the severity line changed')
  const reread = await s.request('GET', '/simple-rules/Fidelity.Continued')
  t.equal(reread.body.alertTitle, got.body.alertTitle, 'the title is unchanged')
  t.equal(reread.body.severity, 'LOW')
  t.same({ ...reread.body, severity: 'HIGH' }, { ...got.body, ...pickReadOnly(reread.body) }, 'nothing else changed')
})

/** The fields a write changes by itself (history metadata). */
function pickReadOnly(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const k of ['lastModified', 'lastModifiedBy', 'lastModifiedCommit', 'revision']) if (k in body) out[k] = body[k]
  return out
}
