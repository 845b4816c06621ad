// `rulekeeper validate` and `test` compile and import every Python file of the directory (rules,
// global helpers, data models) in one sandboxed run, as the server checks a revision: a syntax or
// import error makes the file invalid with the .py's line (and column), in --json and in the human
// output; a module the interpreter lacks is "not run", never a pass; a fixed file is valid again.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/rulekeeper.js'

const ruleYaml = (id: string, file: string, tests = '') =>
  `AnalysisType: rule\nRuleID: ${id}\nEnabled: true\nFilename: ${file}\nLogTypes: [Editor.Audit]\nSeverity: Low\n${tests}`
const ONE_TEST = 'Tests:\n  - Name: any event\n    ExpectedResult: true\n    Log: {action: delete}\n'

function tree(files: Record<string, string>): string {
  const dir = tempDir('rk-cli-pycheck-')
  for (const [p, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true })
    fs.writeFileSync(path.join(dir, p), text)
  }
  return dir
}

const FILES = {
  'rules/syntax.yml': ruleYaml('Py.Syntax', 'syntax.py', ONE_TEST),
  'rules/syntax.py': 'def rule(event):\n    if True\n        return True\n',
  'rules/imports.yml': ruleYaml('Py.Imports', 'imports.py'),
  'rules/imports.py': 'from helpers import ALLOWED\n\n\ndef rule(event):\n    return True\n',
  'global_helpers/helpers.yml': 'AnalysisType: global\nGlobalID: helpers\nFilename: helpers.py\n',
  'global_helpers/helpers.py': 'import os\n\nALLOWED = os.environ["ALLOWED"]\n',
  'data_models/model.yml':
    'AnalysisType: datamodel\nDataModelID: M\nEnabled: true\nFilename: model.py\nLogTypes: [Editor.Audit]\nMappings:\n  - Name: actor\n    Method: actor\n',
  'data_models/model.py': 'def actor(event):\n    return event.get("user")\n\n\nactor(None)\n',
  'rules/no_rule.yml': ruleYaml('Py.NoRule', 'no_rule.py'),
  'rules/no_rule.py': 'def title(event):\n    return "x"\n',
  'rules/third.yml': ruleYaml('Py.Third', 'third.py', ONE_TEST),
  'rules/third.py': 'import policyuniverse\n\n\ndef rule(event):\n    return True\n',
  'rules/good.yml': ruleYaml('Py.Good', 'good.py', ONE_TEST),
  'rules/good.py': 'def rule(event):\n    return True\n',
}

t.test('validate --json: syntax, import, helper, data model and missing-rule errors with their lines', async (t) => {
  const dir = tree(FILES)
  const r = await runCli(['validate', dir, '--json'])
  t.equal(r.code, 1, r.stderr)
  const report = JSON.parse(r.stdout)
  const file = (p: string) => report.files.find((f: { path: string }) => f.path === p)
  t.match(file('rules/syntax.yml'), {
    status: 'invalid',
    problems: [{ file: 'rules/syntax.py', line: 2, column: 12, message: /SyntaxError: expected ':'/ }],
  })
  t.match(file('global_helpers/helpers.yml'), {
    status: 'invalid',
    problems: [{ file: 'global_helpers/helpers.py', line: 3, column: null, message: /KeyError: 'ALLOWED'/ }],
  })
  t.match(file('rules/imports.yml'), {
    status: 'invalid',
    problems: [
      { file: 'global_helpers/helpers.py', line: 3, message: /^rules\/imports\.py failed to import: KeyError/ },
    ],
  })
  t.match(file('data_models/model.yml'), {
    status: 'invalid',
    problems: [{ file: 'data_models/model.py', line: 2, message: /AttributeError/ }],
  })
  t.match(file('rules/no_rule.yml'), {
    status: 'invalid',
    problems: [{ message: /no_rule.py defines no rule\(event\) function/ }],
  })
  t.match(file('rules/third.yml'), {
    status: 'valid',
    python: { status: 'not-run', problem: { file: 'rules/third.py', line: 1, message: /module policyuniverse/ } },
  })
  t.match(file('rules/good.yml'), { status: 'valid', problems: [] })
  t.notOk('python' in file('rules/good.yml'))
  t.match(report.summary, { valid: 2, invalid: 5, pythonNotRun: 1, pythonUnchecked: 0, failedChecks: 1 })
  const third = report.rules.find((x: { id: string }) => x.id === 'Py.Third')
  t.equal(third.valid, false, 'validate never passes a module that cannot run here')
})

t.test('validate (human) points at the .py line; test does not run an invalid rule; fixed is valid', async (t) => {
  const dir = tree(FILES)
  const human = await runCli(['validate', dir])
  t.equal(human.code, 1)
  t.match(
    human.stdout,
    /\[INVALID\] rules\/syntax\.yml \(Py\.Syntax\)\n {4}rules\/syntax\.py:2:12 rules\/syntax\.py failed to import: SyntaxError/,
  )
  t.match(
    human.stdout,
    /\[NOT RUN\] rules\/third\.yml \(Py\.Third\)\n {4}rules\/third\.py:1 not run: module policyuniverse/,
  )
  t.match(human.stdout, /7 files: 2 valid \(1 not run: a module the interpreter lacks\), 5 invalid, 0 unsupported/)

  const tested = JSON.parse((await runCli(['test', dir, '--json'])).stdout)
  const syntax = tested.rules.find((x: { id: string }) => x.id === 'Py.Syntax')
  t.match(syntax, { valid: false, tests: [] }, 'the invalid rule is reported, its tests not run')
  t.same(
    tested.rules.find((x: { id: string }) => x.id === 'Py.Third').tests.map((x: { passed: unknown }) => x.passed),
    [null],
    'the not-run module: its test is not run',
  )

  fs.writeFileSync(path.join(dir, 'rules/syntax.py'), 'def rule(event):\n    return True\n')
  const fixed = JSON.parse((await runCli(['validate', dir, '--json'])).stdout)
  t.match(
    fixed.files.find((f: { path: string }) => f.path === 'rules/syntax.yml'),
    { status: 'valid', problems: [] },
  )
})
