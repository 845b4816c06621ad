// alerts.md §4: an OutputIds entry naming no configured destination is a warning, never an error,
// on each surface: the rule's API answers (POST's answer and GET: `warnings`), `GET /status`
// (`destinations.unknown`), and `rulekeeper validate --config FILE` (the rule's warnings; exit 0).
// Without --config, validate does not judge OutputIds (destinations are per deployment).
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { runCli } from '../helpers/cli.js'
import { startInProcess } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

const TEMPLATE = path.resolve(import.meta.dirname, '../../rules-repo-template')
const destinations = [
  { id: 'ops', type: 'webhook', url: 'http://127.0.0.1:9/ops', severities: [] },
  // A secret named but unset: the server would refuse to start; validate needs only the ids.
  { id: 'signed', type: 'webhook', url: 'http://127.0.0.1:9/s', severities: [], secretEnv: 'RK_UNSET_SECRET' },
]

t.test('the API: warnings on the rule, /status lists each (rule, OutputId)', async (t) => {
  const s = await startInProcess({ config: { destinations: destinations.slice(0, 1) } })
  t.teardown(() => s.close())
  const post = async (id: string, outputIDs: string[]) => {
    const res = await s.request('POST', '/simple-rules?run-tests-first=false', {
      ...SAMPLE_BODIES.simple(id),
      outputIDs,
    })
    t.equal(res.status, 200, `${id}: saved, not refused (${res.text.slice(0, 200)})`)
    return res.body
  }
  const mixed = await post('Out.Mixed', ['ops', 'nowhere'])
  t.same(
    mixed.warnings,
    [
      {
        message:
          'OutputIds: "nowhere" is not a configured destination; alerts of this rule go only to the configured ones it names',
      },
    ],
    'the write answer warns about the unknown one only',
  )
  const none = await post('Out.None', ['gone-a', 'gone-b'])
  t.same(
    none.warnings.map((w: { message: string }) => w.message),
    [
      'OutputIds: "gone-a" is not a configured destination; alerts of this rule go to no destination (OutputIds overrides severity routing)',
      'OutputIds: "gone-b" is not a configured destination; alerts of this rule go to no destination (OutputIds overrides severity routing)',
    ],
  )
  const fine = await post('Out.Fine', ['ops'])
  t.same(fine.warnings, [], 'a configured destination: no warning')
  t.same(
    (await s.request('GET', '/simple-rules/Out.Mixed')).body.warnings,
    mixed.warnings,
    'GET shows the same warning',
  )
  const listed = (await s.request('GET', '/simple-rules?limit=100')).body.results as any[]
  t.same(listed.find((r) => r.id === 'Out.None').warnings, none.warnings, 'and so does the list')
  t.same(
    (await s.request('GET', '/status')).body.destinations,
    {
      configured: 1,
      unknown: [
        { ruleId: 'Out.Mixed', outputId: 'nowhere' },
        { ruleId: 'Out.None', outputId: 'gone-a' },
        { ruleId: 'Out.None', outputId: 'gone-b' },
      ],
    },
    '/status lists every unknown pair',
  )
})

t.test('rulekeeper validate --config: unknown OutputIds are warnings, exit 0', async (t) => {
  const dir = tempDir('rk-validate-outputs-')
  fs.cpSync(TEMPLATE, dir, { recursive: true })
  const file = path.join(dir, 'simple_rules/editor/Editor.Audit.LoginFailed.yml')
  fs.writeFileSync(
    file,
    fs.readFileSync(file, 'utf8').replace('Severity: Info\n', 'Severity: Info\nOutputIds:\n  - ops\n  - nowhere\n'),
  )
  const configDir = tempDir('rk-validate-config-')
  const config = path.join(configDir, 'rulekeeper.yaml')
  fs.writeFileSync(config, JSON.stringify({ destinations }))

  const v = await runCli(['validate', dir, '--json', '--config', config])
  t.equal(v.code, 0, `a warning is not a failure: ${v.stderr}`)
  const rules = JSON.parse(v.stdout).rules as any[]
  const rule = rules.find((r) => r.id === 'Editor.Audit.LoginFailed')
  t.same(rule.warnings, [
    {
      message:
        'OutputIds: "nowhere" is not a configured destination; alerts of this rule go only to the configured ones it names',
      line: null,
      column: null,
    },
  ])
  t.same(
    rules.filter((r) => r.id !== 'Editor.Audit.LoginFailed' && r.warnings?.length),
    [],
    'rules without OutputIds: no warning',
  )

  const human = await runCli(['validate', dir, '--config', config])
  t.equal(human.code, 0)
  t.match(human.stdout, /\[WARN\] Editor\.Audit\.LoginFailed: OutputIds: "nowhere" is not a configured destination/)

  const without = await runCli(['validate', dir, '--json'])
  t.equal(without.code, 0)
  t.notOk(
    JSON.parse(without.stdout).rules.find((r: any) => r.id === 'Editor.Audit.LoginFailed').warnings,
    'without --config OutputIds are not judged',
  )

  const missing = await runCli(['validate', dir, '--config', path.join(configDir, 'nope.yaml')])
  t.equal(missing.code, 2, 'a --config that is not a file is a usage error')
  t.match(missing.stderr, /--config: .*nope\.yaml is not a file/)

  fs.writeFileSync(config, JSON.stringify({ destinations: [{ id: 'x', type: 'email' }] }))
  const bad = await runCli(['validate', dir, '--config', config])
  t.equal(bad.code, 1, 'an invalid destinations section fails as serve would')
  t.match(bad.stderr, /destinations\[0\]\.type: must be webhook or slack/)
})
