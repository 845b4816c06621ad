// A Python rule whose tests rely on panther_analysis_tool's behaviour is saved with its tests run
// first (the default): events of each of its log types get their own data model by p_log_type, a
// mock is a real MagicMock, event.deep_walk gives a plain list; and Panther's YAML alert keys
// (AlertTitle, GroupBy, …) are accepted on a Python rule, kept, and round-trip through the API.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { gitAs, PAT } from '../helpers/git-as.js'
import { type InProcessServer, startInProcess } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

async function pushByHand(s: InProcessServer, files: Record<string, string>): Promise<void> {
  const work = path.join(tempDir('rk-pat-parity-'), 'w')
  execFileSync('git', ['clone', '-q', s.gitdir, work])
  for (const [p, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(work, p)), { recursive: true })
    fs.writeFileSync(path.join(work, p), text)
  }
  gitAs(PAT, work, 'add', '-A')
  gitAs(PAT, work, 'commit', '-q', '-m', 'data models by hand')
  gitAs(PAT, work, 'push', '-q', 'origin', 'HEAD:main')
  const rec = await s.request('POST', '/reconcile')
  if (rec.status !== 200) throw new Error(rec.text)
}

const model = (id: string, logType: string, p: string) =>
  `AnalysisType: datamodel\nDataModelID: ${id}\nEnabled: true\nLogTypes: [${logType}]\nMappings:\n  - Name: actor_user\n    Path: ${p}\n`

const BODY = `from unittest.mock import MagicMock


def allowed_actors():
    return ["nobody"]


def rule(event):
    if not isinstance(allowed_actors, MagicMock):
        return False
    roles = event.deep_walk("grants", "role")
    if type(roles) is not list:
        return False
    return event.udm("actor_user") not in allowed_actors() and "admin" in roles


def title(event):
    return f"admin granted by {event.udm('actor_user')}"
`

const mocks = [{ objectName: 'allowed_actors', returnValue: 'bob' }]
const grants = [{ role: 'admin' }, { role: 'member' }]

t.test('a rule whose tests rely on PAT behaviour is saved with run-tests-first', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  await pushByHand(s, {
    'data_models/github.yml': model('Model.GitHub', 'GitHub.Audit', 'actor'),
    'data_models/editor.yml': model('Model.Editor', 'Editor.Audit', '$.user.name'),
  })
  const res = await s.request(
    'POST',
    '/rules',
    {
      id: 'Pat.Parity.AdminGrant',
      severity: 'HIGH',
      logTypes: ['GitHub.Audit', 'Editor.Audit'],
      body: BODY,
      tests: [
        {
          name: 'GitHub event',
          expectedResult: true,
          log: { p_log_type: 'GitHub.Audit', actor: 'alice', grants },
          mocks,
        },
        {
          name: 'Editor event',
          expectedResult: true,
          log: { p_log_type: 'Editor.Audit', user: { name: 'alice' }, grants },
          mocks,
        },
        {
          name: 'Editor event by the allowed actor',
          expectedResult: false,
          log: { p_log_type: 'Editor.Audit', user: { name: 'bob' }, grants },
          mocks,
        },
      ],
    },
    { 'X-Change-Reason': 'PAT parity' },
  )
  t.equal(res.status, 200, res.text)
  t.same(res.body.tests?.map?.((x: { name: string }) => x.name) ?? null, [
    'GitHub event',
    'Editor event',
    'Editor event by the allowed actor',
  ])
})

t.test("Panther's YAML alert keys are accepted on a Python rule, kept, and warned about", async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const res = await s.request(
    'POST',
    '/rules',
    {
      ...SAMPLE_BODIES.python('Pat.Parity.AlertKeys'),
      alertTitle: 'Admin granted by {actor}',
      groupBy: '- KeyPath: actor\n',
    },
    { 'X-Change-Reason': 'alert keys' },
  )
  t.equal(res.status, 200, res.text)
  const got = await s.request('GET', '/rules/Pat.Parity.AlertKeys')
  t.equal(got.status, 200)
  t.equal(got.body.alertTitle, 'Admin granted by {actor}\n', 'AlertTitle is kept on a Python rule')
  t.equal(got.body.groupBy, '- KeyPath: actor\n')
  t.match(got.body.warnings, [{ message: /AlertTitle is kept but not evaluated on a Python rule/ }])
  const file = s
    .git('show', '--name-only', '--format=', 'HEAD')
    .split('\n')
    .find((f) => f.endsWith('.yml'))
  const yml = s.git('show', `HEAD:${file}`)
  t.match(yml, /AlertTitle: Admin granted by \{actor\}\n/)
  t.match(yml, /GroupBy:\n {2}- KeyPath: actor\n/)
})
