// What the contract suite does not say about Python streaming rules (`/rules`, api.md): the .yml and
// .py of a write are one commit; `logTypes` is required and non-empty; InlineFilters run before
// rule(); a hand-pushed `rule` file with `Filename` is served here and one with `Detection` is not;
// a commit changing only the .py modifies the rule; correlation rules reference Python rules.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { type InProcessServer, startInProcess } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'
import { gitAs, PAT } from '../helpers/git-as.js'

function gitIn(cwd: string, args: string[]): string {
  return gitAs(PAT, cwd, ...args)
}

/** Commits `files` (null deletes) by hand, pushes, reconciles; returns the new tip. */
async function pushByHand(s: InProcessServer, files: Record<string, string | null>): Promise<string> {
  const work = path.join(tempDir('rk-pyrules-'), 'w')
  execFileSync('git', ['clone', '-q', s.gitdir, work])
  for (const [p, text] of Object.entries(files)) {
    const full = path.join(work, p)
    if (text === null) fs.rmSync(full)
    else {
      fs.mkdirSync(path.dirname(full), { recursive: true })
      fs.writeFileSync(full, text)
    }
  }
  gitIn(work, ['add', '-A'])
  gitIn(work, ['commit', '-q', '-m', 'by hand'])
  gitIn(work, ['push', '-q', 'origin', 'HEAD:main'])
  const rec = await s.request('POST', '/reconcile')
  if (rec.status !== 200) throw new Error(rec.text)
  return gitIn(work, ['rev-parse', 'HEAD']).trim()
}

const HAND_YML = `AnalysisType: rule
RuleID: Hand.Python
Filename: hand_python.py
Enabled: true
LogTypes:
  - GitHub.Audit
  - Editor.Audit
Severity: High
Tests:
  - Name: a push
    ExpectedResult: true
    LogType: GitHub.Audit
    Log: {action: git.push}
`
const HAND_PY = 'def rule(event):\n    return event.get("action") == "git.push"\n'

t.test('a create is one commit holding the .yml and the .py, under rules/<group>/', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const res = await s.request('POST', '/rules', SAMPLE_BODIES.python('Editor.Audit.Deleted'), {
    'X-Change-Reason': 'watch deletions',
  })
  t.equal(res.status, 200, res.text)
  const files = s.git('show', '--name-only', '--format=', 'HEAD').trim().split('\n').sort()
  t.same(files, ['rules/editor/Editor.Audit.Deleted.py', 'rules/editor/Editor.Audit.Deleted.yml'])
  const message = s.git('log', '-1', '--format=%B')
  t.match(message, /^Create python rule Editor\.Audit\.Deleted\n\nwatch deletions\n/)
  t.match(message, /Rule-Kind: python/)
  const yml = s.git('show', 'HEAD:rules/editor/Editor.Audit.Deleted.yml')
  t.match(yml, /^AnalysisType: rule\nFilename: Editor\.Audit\.Deleted\.py\nRuleID: Editor\.Audit\.Deleted\n/)
  t.match(yml, /LogTypes:\n {2}- Editor\.Audit\n/)
  t.notMatch(yml, /Detection/)

  const del = await s.request('DELETE', '/rules/Editor.Audit.Deleted')
  t.equal(del.status, 204)
  const gone = s.git('show', '--name-only', '--format=', 'HEAD').trim().split('\n').sort()
  t.same(gone, files, 'the delete is one commit removing both files')
})

t.test('logTypes is required and has at least one entry; a bad inlineFilters is located', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const { logTypes: _l, ...noLogTypes } = SAMPLE_BODIES.python('Py.NoLogTypes')
  const missing = await s.request('POST', '/rules', noLogTypes)
  t.equal(missing.status, 400)
  t.same(
    missing.body.errors.map((e: { path: string }) => e.path),
    ['/logTypes'],
  )
  const empty = await s.request('POST', '/rules', SAMPLE_BODIES.python('Py.Empty', { logTypes: [] }))
  t.equal(empty.status, 400)
  t.equal(empty.body.errors[0].path, '/logTypes')
  const filters = await s.request(
    'POST',
    '/rules',
    SAMPLE_BODIES.python('Py.BadFilter', { inlineFilters: '- KeyPath: a\n  Condition: NoSuchCondition\n' }),
  )
  t.equal(filters.status, 400, filters.text)
  t.equal(filters.body.errors[0].path, '/inlineFilters')
  t.type(filters.body.errors[0].line, 'number')
})

t.test('InlineFilters apply before rule(): a rejected event is a non-match and rule() is not called', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const body = SAMPLE_BODIES.python('Py.Filtered', {
    inlineFilters: '- KeyPath: action\n  Condition: Equals\n  Value: delete\n',
    // rule() raises on anything but a deletion: were it called for the filtered event, that test fails.
    body: 'def rule(event):\n    if event.get("action") != "delete":\n        raise ValueError("called")\n    return True\n',
  })
  const ok = await s.request('POST', '/rules?run-tests-only=true', body)
  t.equal(ok.status, 204, ok.text)
  const flipped = structuredClone(body)
  flipped.tests[1]!.expectedResult = true
  const bad = await s.request('POST', '/rules?run-tests-only=true', flipped)
  t.equal(bad.status, 400)
  t.match(bad.body.testResults[1], { passed: false, errored: false, error: /InlineFilters did not pass/ })
})

t.test('hand-written files: a rule with Filename is served at /rules, one with Detection is not', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const tip = await pushByHand(s, { 'rules/hand/hand_python.yml': HAND_YML, 'rules/hand/hand_python.py': HAND_PY })
  const got = await s.request('GET', '/rules/Hand.Python')
  t.equal(got.status, 200, got.text)
  t.match(got.body, {
    id: 'Hand.Python',
    severity: 'HIGH',
    logTypes: ['GitHub.Audit', 'Editor.Audit'],
    body: HAND_PY,
    tests: [{ name: 'a push', expectedResult: true, logType: 'GitHub.Audit', log: { action: 'git.push' }, mocks: [] }],
    createdBy: { id: 'pat@example.com', type: 'user' },
  })
  t.equal((await s.request('GET', '/simple-rules/Hand.Python')).status, 404)
  t.equal((await s.request('GET', '/rules/Editor.Audit.LoginFailed')).status, 404, 'a simple rule is not a /rules rule')
  const byLogType = await s.request('GET', '/rules?log-type=GitHub.Audit')
  t.same(
    byLogType.body.results.map((r: { id: string }) => r.id),
    ['Hand.Python'],
  )
  t.same((await s.request('GET', '/rules?log-type=AWS.CloudTrail')).body.results, [])
  const status = await s.request('GET', '/status')
  t.same(status.body.invalidFiles, [])
  t.equal(status.body.lastAppliedRevision, tip)

  // GET → PUT round trip: no commit, the hand-written bytes kept.
  const same = await s.request('PUT', '/rules/Hand.Python', got.body)
  t.equal(same.status, 200, same.text)
  t.equal(s.git('rev-parse', 'main').trim(), tip)
})

t.test('a commit changing only the .py modifies the rule (history follows both files)', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const created = await s.request('POST', '/rules', SAMPLE_BODIES.python('Py.Followed'))
  t.equal(created.status, 200, created.text)
  const py = 'rules/py/Py.Followed.py'
  const tip = await pushByHand(s, {
    [py]: `${SAMPLE_BODIES.python('Py.Followed').body}\n\ndef dedup(event):\n    return "x"\n`,
  })
  const got = await s.request('GET', '/rules/Py.Followed')
  t.equal(got.status, 200)
  t.match(got.body.body, /def dedup/)
  t.same(got.body.createdBy, created.body.createdBy, 'created by the API write')
  t.same(got.body.lastModifiedBy, { id: 'pat@example.com', type: 'user' }, 'modified by the .py commit')
  t.equal(got.body.lastModified, new Date(Number(s.git('log', '-1', '--format=%at', tip)) * 1000).toISOString())
})

t.test('correlation rules reference Python rules: resolved, their log types derived', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  await pushByHand(s, { 'rules/hand/hand_python.yml': HAND_YML, 'rules/hand/hand_python.py': HAND_PY })
  const detection =
    '- Sequence:\n    - ID: Push\n      RuleID: Hand.Python\n    - ID: Success\n      RuleID: Editor.Audit.LoginSucceeded\n  Transitions:\n    - ID: Push FOLLOWED BY Success\n      From: Push\n      To: Success\n      WithinTimeFrameMinutes: 30\n  LookbackWindowMinutes: 60\n  Schedule:\n    RateMinutes: 60\n    TimeoutMinutes: 5\n'
  const res = await s.request(
    'POST',
    '/correlation-rules?run-tests-first=false',
    SAMPLE_BODIES.correlation('Corr.WithPython', { detection, tests: [] }),
  )
  t.equal(res.status, 200, res.text)
  t.same(res.body.correlationRuleReferenceIds, ['Hand.Python', 'Editor.Audit.LoginSucceeded'])
  t.same(res.body.logTypes, ['Editor.Audit', 'GitHub.Audit'])
  t.same(res.body.warnings, [])

  t.equal((await s.request('DELETE', '/rules/Hand.Python')).status, 204)
  const after = await s.request('GET', '/correlation-rules/Corr.WithPython')
  t.match(after.body.warnings[0].message, /Hand\.Python/)
  t.same(after.body.logTypes, ['Editor.Audit'])
})
