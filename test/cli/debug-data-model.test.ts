// `rulekeeper debug RULE TEST` says which data model the test's event used and why (the event's
// p_log_type, else the test's LogType, else the rule's first log type), through the real command,
// on a Python rule over two log types whose data models map the same field differently.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/rulekeeper.js'

const hasPython = spawnSync('python3', ['--version']).status === 0

function tree(): string {
  const dir = tempDir('rk-debug-dm-')
  const put = (p: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true })
    fs.writeFileSync(path.join(dir, p), text)
  }
  for (const [id, logType, p] of [
    ['Model.A', 'Log.A', 'a_user'],
    ['Model.B', 'Log.B', 'b.user'],
  ] as const) {
    put(
      `data_models/${id}.yml`,
      `AnalysisType: datamodel\nDataModelID: ${id}\nEnabled: true\nLogTypes: [${logType}]\nMappings:\n  - Name: actor\n    Path: ${p}\n`,
    )
  }
  put(
    'rules/two.yml',
    [
      'AnalysisType: rule',
      'RuleID: Two.LogTypes',
      'Enabled: true',
      'Filename: two.py',
      'Severity: Low',
      'LogTypes: [Log.A, Log.B]',
      'Tests:',
      '  - Name: event of B',
      '    ExpectedResult: true',
      '    Log: { p_log_type: Log.B, b: { user: alice } }',
      '  - Name: no p_log_type',
      '    ExpectedResult: true',
      '    Log: { a_user: alice }',
      '',
    ].join('\n'),
  )
  put('rules/two.py', 'def rule(event):\n    return event.udm("actor") == "alice"\n')
  return dir
}

t.test('debug prints the data model and log type the test used', { skip: !hasPython && 'no python3' }, async (t) => {
  const dir = tree()
  const b = await runCli(['debug', 'Two.LogTypes', 'event of B', dir])
  if (/sandbox/i.test(b.stdout + b.stderr) && !/functions:/.test(b.stdout)) {
    t.comment('the Python sandbox is not available here')
    return
  }
  t.equal(b.code, 0, b.stdout + b.stderr)
  t.match(b.stdout, /^data model: Model\.B \(log type Log\.B: the event's p_log_type, else/m)
  const a = await runCli(['debug', 'Two.LogTypes', 'no p_log_type', dir])
  t.equal(a.code, 0, a.stdout + a.stderr)
  t.match(a.stdout, /^data model: Model\.A \(log type Log\.A:/m)
  const json = await runCli(['debug', 'Two.LogTypes', 'event of B', dir, '--json'])
  t.same(JSON.parse(json.stdout).test.dataModel, { logType: 'Log.B', id: 'Model.B' })
})
