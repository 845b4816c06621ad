// Writes that change only the companion .py of a rule (a Python rule's, a scheduled rule's or a
// policy's `body`): the commit touches the .py alone, and the index follows it — the answer, GET,
// the ETag, the history, a revision, detection and the next write of the same batch all see the new
// code, and so does a restart from the persisted index. A restore whose revision differs only in the
// .py is the same. A PUT identical to the stored rule still answers 200 and commits nothing
// (docs/decisions.md). Global helpers and data models (written with git only): a push changing only
// their .py changes what the rules using them compute. A PUT repairing a hand-broken YAML whose .py
// it leaves as it is re-reads that .py from the tree.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { gitAs, PAT } from '../helpers/git-as.js'
import { commandRecord, DETECT_ENV, sendAndDetect } from '../detect/helpers.js'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'
import { waitFor } from '../helpers/wait.js'

const head = (s: InProcessServer) => s.git('rev-parse', 'main').trim()
const touched = (s: InProcessServer, rev = 'main') =>
  s.git('show', '--name-only', '--format=', rev).trim().split('\n').sort()

const matchCommand = (name: string, title: string) =>
  `def rule(event):\n    return event.deep_get("team_command", "command_name") == ${JSON.stringify(name)}\n\n\ndef title(event):\n    return ${JSON.stringify(title)}\n`

t.test('a PUT changing only a Python rule body is stored, served, in the history and run', async (t) => {
  const s = await startInProcess({ env: DETECT_ENV })
  t.teardown(() => s.close())
  const first = SAMPLE_BODIES.python('Py.BodyOnly', { body: matchCommand('bodyonly', 'first'), tests: [] })
  const created = await s.request('POST', '/rules', first)
  t.equal(created.status, 200, created.text)
  await sendAndDetect(s, [commandRecord('bo', 'bodyonly', '2026-11-20T14:00:00Z')])
  const py = 'rules/py/Py.BodyOnly.py'

  const before = head(s)
  const etag = (await s.request('GET', '/rules/Py.BodyOnly')).headers.get('etag')!
  const second = { ...created.body, body: matchCommand('bodyonly', 'second') }
  const put = await s.request('PUT', '/rules/Py.BodyOnly', second, { 'If-Match': etag })
  t.equal(put.status, 200, put.text)
  t.equal(put.body.body, second.body, 'the answer has the new body')
  const after = head(s)
  t.equal(s.git('rev-parse', 'main~1').trim(), before, 'one commit')
  t.same(touched(s), [py], 'touching the .py alone')
  t.equal(s.git('log', '-1', '--format=%s').trim(), 'Update python rule Py.BodyOnly')
  t.equal(s.git('show', `main:${py}`), second.body)

  const got = await s.request('GET', '/rules/Py.BodyOnly')
  t.equal(got.body.body, second.body, 'GET serves the new body')
  t.not(got.headers.get('etag'), etag, 'the ETag changed')
  t.equal(put.headers.get('etag'), got.headers.get('etag'), 'the PUT answered the ETag GET serves')
  t.equal((await s.request('PUT', '/rules/Py.BodyOnly', second, { 'If-Match': etag })).status, 412, 'the old ETag')

  const history = await s.request('GET', '/rules/Py.BodyOnly/history')
  t.same(
    history.body.results.map((e: { revision: string; change: string }) => [e.revision, e.change]),
    [
      [after, 'updated'],
      [before, 'created'],
    ],
  )
  t.equal((await s.request('GET', `/rules/Py.BodyOnly/history/${after}`)).body.body, second.body)
  t.equal((await s.request('GET', `/rules/Py.BodyOnly/history/${before}`)).body.body, first.body)

  // Detection runs the new code: the second record's alert is titled by it.
  await sendAndDetect(s, [commandRecord('bo', 'bodyonly', '2026-11-20T15:00:00Z')])
  const alerts = (await s.request('GET', '/alerts?rule-id=Py.BodyOnly&limit=10')).body.results as any[]
  t.same(
    alerts.map((a) => [a.revision, a.title]).sort(),
    [
      [before, 'first'],
      [after, 'second'],
    ].sort(),
  )

  // GET → PUT of what is stored: 200, no commit (unchanged behaviour).
  const same = await s.request('PUT', '/rules/Py.BodyOnly', got.body)
  t.equal(same.status, 200, same.text)
  t.equal(same.body.body, second.body)
  t.equal(head(s), after, 'an identical PUT commits nothing')
})

for (const [kind, route, sample] of [
  ['scheduled', '/scheduled-rules', SAMPLE_BODIES.scheduled],
  ['policy', '/policies', SAMPLE_BODIES.policy],
] as const) {
  t.test(`a PUT changing only a ${kind} rule's body is stored and served`, async (t) => {
    const s = await startInProcess()
    t.teardown(() => s.close())
    const created = await s.request('POST', route, sample('Body.Only'))
    t.equal(created.status, 200, created.text)
    const before = head(s)
    const pyPath = touched(s).find((p) => p.endsWith('.py'))!
    const body = `${created.body.body}\n\n# reviewed\n`
    const put = await s.request('PUT', `${route}/Body.Only`, { ...created.body, body })
    t.equal(put.status, 200, put.text)
    t.equal(put.body.body, body, 'the answer has the new body')
    t.equal(s.git('rev-parse', 'main~1').trim(), before, 'one commit')
    t.same(touched(s), [pyPath], 'touching the .py alone')
    const got = await s.request('GET', `${route}/Body.Only`)
    t.equal(got.body.body, body, 'GET serves the new body')
    t.equal(put.headers.get('etag'), got.headers.get('etag'))
    const history = await s.request('GET', `${route}/Body.Only/history`)
    t.same(
      history.body.results.map((e: { revision: string }) => e.revision),
      [head(s), before],
    )
    const same = await s.request('PUT', `${route}/Body.Only`, got.body)
    t.equal(same.status, 200, same.text)
    t.equal(head(s), history.body.results[0].revision, 'an identical PUT commits nothing')
  })
}

t.test('a restore whose revision differs only in the .py serves the restored body', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const created = await s.request('POST', '/rules', SAMPLE_BODIES.python('Py.Restored'))
  t.equal(created.status, 200, created.text)
  const v1 = head(s)
  const body2 = `${created.body.body}\n\n# second version\n`
  t.equal((await s.request('PUT', '/rules/Py.Restored', { ...created.body, body: body2 })).status, 200)
  t.equal((await s.request('GET', '/rules/Py.Restored')).body.body, body2)
  const r = await s.request('POST', `/rules/Py.Restored/restore?revision=${v1}`)
  t.equal(r.status, 200, r.text)
  t.equal(r.body.body, created.body.body, 'the answer has the restored body')
  t.same(touched(s), ['rules/py/Py.Restored.py'], 'the restore touched the .py alone')
  t.equal((await s.request('GET', '/rules/Py.Restored')).body.body, created.body.body, 'GET serves it')
})

t.test('two body-only PUTs of one rule in one write batch: both committed, the last one served', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const created = await s.request('POST', '/rules', SAMPLE_BODIES.python('Py.Batched'))
  t.equal(created.status, 200, created.text)
  const original = created.body.body as string
  const changed = `${original}\n\n# changed\n`
  const gate = await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('Gate.Rule'))
  t.equal(gate.status, 200, gate.text)
  const before = head(s)

  // The writer is held on a no-op PUT while the two writes queue up behind it: they form one batch.
  const writer = s.server.writer as unknown as { queue: unknown[]; running: boolean }
  let release!: () => void
  const held = s.server.catalog.exclusive(() => new Promise<void>((r) => (release = r)))
  const noop = s.request('PUT', '/simple-rules/Gate.Rule', gate.body)
  await waitFor('the writer to hold the no-op', () => writer.running && writer.queue.length === 0, 20_000, 5)
  const toChanged = s.request('PUT', '/rules/Py.Batched', { ...created.body, body: changed })
  await waitFor('the first write queued', () => writer.queue.length === 1, 20_000, 5)
  const back = s.request('PUT', '/rules/Py.Batched', { ...created.body, body: original })
  await waitFor('both writes queued', () => writer.queue.length === 2, 20_000, 5)
  release()
  await held
  t.equal((await noop).status, 200)
  const [a, b] = await Promise.all([toChanged, back])
  t.equal(a!.status, 200, a!.text)
  t.equal(b!.status, 200, b!.text)
  t.equal(a!.body.body, changed)
  t.equal(b!.body.body, original, 'the second write is judged against the first: a change back')
  t.equal(s.git('rev-parse', 'main~2').trim(), before, 'two commits')
  t.equal(s.git('show', 'main:rules/py/Py.Batched.py'), original, 'the tree has the last body')
  t.equal((await s.request('GET', '/rules/Py.Batched')).body.body, original, 'and GET serves it')
})

t.test('a push changing only a global helper or a data model .py: the rules using them run the new code', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const work = path.join(tempDir('rk-bodyonly-'), 'w')
  execFileSync('git', ['clone', '-q', s.gitdir, work])
  const push = async (files: Record<string, string>) => {
    for (const [p, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(work, p)), { recursive: true })
      fs.writeFileSync(path.join(work, p), text)
    }
    gitAs(PAT, work, 'add', '-A')
    gitAs(PAT, work, 'commit', '-q', '-m', 'by hand')
    gitAs(PAT, work, 'push', '-q', 'origin', 'HEAD:main')
    const rec = await s.request('POST', '/reconcile')
    t.equal(rec.status, 200, rec.text)
    t.same(rec.body.invalidFiles, [])
  }
  await push({
    'global_helpers/team_helpers.yml': 'AnalysisType: global\nGlobalID: team_helpers\nFilename: team_helpers.py\n',
    'global_helpers/team_helpers.py': 'def is_admin(event):\n    return event.get("role") == "admin"\n',
    'data_models/editor_model.yml':
      'AnalysisType: datamodel\nDataModelID: Editor.Model\nEnabled: true\nFilename: editor_model.py\nLogTypes: [Editor.Audit]\nMappings:\n  - Name: actor\n    Method: get_actor\n',
    'data_models/editor_model.py': 'def get_actor(event):\n    return event.get("user")\n',
  })
  // Unit tests of rules using the helper and the data model, run against the served index.
  const usesHelper = SAMPLE_BODIES.python('Py.UsesHelper', {
    body: 'from team_helpers import is_admin\n\n\ndef rule(event):\n    return is_admin(event)\n',
    tests: [{ name: 'an admin', expectedResult: true, log: { role: 'admin' } }],
  })
  const usesModel = SAMPLE_BODIES.python('Py.UsesModel', {
    body: 'def rule(event):\n    return event.udm("actor") == "kim"\n',
    tests: [{ name: 'kim', expectedResult: true, log: { user: 'kim', user_email: 'kim@example.com' } }],
  })
  /** true when the rule's test passes (204), false when it ran and failed, else the answer. */
  const testsOf = async (body: unknown) => {
    const res = await s.request('POST', '/rules?run-tests-only=true', body)
    return res.status === 400 && res.body.testResults?.[0]?.passed === false ? false : res.status === 204 || res.text
  }
  t.equal(await testsOf(usesHelper), true)
  t.equal(await testsOf(usesModel), true)

  await push({
    'global_helpers/team_helpers.py': 'def is_admin(event):\n    return event.get("role") == "owner"\n',
    'data_models/editor_model.py': 'def get_actor(event):\n    return event.get("user_email")\n',
  })
  t.same(touched(s), ['data_models/editor_model.py', 'global_helpers/team_helpers.py'], 'the .py files alone')
  t.equal(await testsOf(usesHelper), false, "the helper's new code runs: the test fails")
  t.equal(await testsOf(usesModel), false, "the data model's new code runs: the test fails")
})

t.test('after a body-only PUT a restart (from the persisted index) serves the new body', async (t) => {
  const dataDir = tempDir('rk-bodyonly-restart-')
  const s = await startInProcess({ dataDir })
  const created = await s.request('POST', '/rules', SAMPLE_BODIES.python('Py.Persisted'))
  t.equal(created.status, 200, created.text)
  const body = `${created.body.body}\n\n# persisted\n`
  t.equal((await s.request('PUT', '/rules/Py.Persisted', { ...created.body, body })).status, 200)
  await s.close()
  const again = await startInProcess({ dataDir })
  t.teardown(() => again.close())
  t.equal((await again.request('GET', '/rules/Py.Persisted')).body.body, body)
})

t.test('a PUT repairing a hand-broken YAML, its .py unchanged, makes the rule valid and served', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const created = await s.request('POST', '/rules', SAMPLE_BODIES.python('Py.Repaired'))
  t.equal(created.status, 200, created.text)
  const yml = 'rules/py/Py.Repaired.yml'
  const work = path.join(tempDir('rk-bodyonly-'), 'w')
  execFileSync('git', ['clone', '-q', s.gitdir, work])
  const text = fs.readFileSync(path.join(work, yml), 'utf8')
  fs.writeFileSync(path.join(work, yml), text.replace('Severity: Low', 'Severity: Nope'))
  gitAs(PAT, work, 'commit', '-qam', 'break the severity')
  gitAs(PAT, work, 'push', '-q', 'origin', 'HEAD:main')
  const rec = await s.request('POST', '/reconcile')
  t.same(
    rec.body.invalidFiles.map((f: { path: string }) => f.path),
    [yml],
  )

  // The PUT rewrites the YAML only; the record is rebuilt with the .py the tree still holds.
  const put = await s.request('PUT', '/rules/Py.Repaired', { ...created.body, severity: 'HIGH' })
  t.equal(put.status, 200, put.text)
  t.same(touched(s), [yml])
  t.equal(put.body.severity, 'HIGH', 'the answer is the repaired rule')
  t.same((await s.request('GET', '/status')).body.invalidFiles, [], 'the file is valid')
  const got = await s.request('GET', '/rules/Py.Repaired')
  t.equal(got.body.severity, 'HIGH')
  t.equal(got.body.body, created.body.body)
})
