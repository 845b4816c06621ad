// The Python files of a pushed revision are compiled and imported when the reconciler indexes it:
// a syntax error, an exception at import time, a helper that does not import, a data model's module
// that does not import — each makes its file invalid in /status within one reconcile, with the line
// (and column where Python gives one), while the last good version of a rule keeps serving; a fix
// makes it valid again. A module the interpreter lacks is reported as not run; a module that hangs
// at import is invalid with "timed out"; without a sandbox the files are served and "not checked".
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { tempDir } from '../helpers/rulekeeper.js'

const who = {
  GIT_AUTHOR_NAME: 'Pat',
  GIT_AUTHOR_EMAIL: 'pat@example.com',
  GIT_COMMITTER_NAME: 'Pat',
  GIT_COMMITTER_EMAIL: 'pat@example.com',
}

interface Problem {
  message: string
  line: number | null
  column: number | null
  file?: string
}
interface Status {
  lastAppliedRevision: string
  invalidFiles: Array<{ path: string; ruleId: string | null; errors: Problem[] }>
  notRunFiles: Array<{ path: string; ruleId: string | null; status: string; problem: Problem }>
  staleRules: Array<{ id: string; path: string }>
  files: { valid: number; invalid: number; notRun: number; unchecked: number }
  conditions: Array<{ type: string; status: string; reason: string; message: string }>
}

function clone(s: InProcessServer) {
  const dir = path.join(tempDir('rk-pycheck-'), 'w')
  execFileSync('git', ['clone', '-q', s.gitdir, dir])
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: { ...process.env, ...who } })
  return {
    write(files: Record<string, string>) {
      for (const [p, text] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true })
        fs.writeFileSync(path.join(dir, p), text)
      }
    },
    /** Commits and pushes everything, then runs one reconcile; answers its status. */
    async push(s: InProcessServer, message: string): Promise<Status> {
      git('add', '-A')
      git('commit', '-q', '-m', message)
      git('push', '-q', 'origin', 'HEAD:main')
      const res = await s.request('POST', '/reconcile')
      if (res.status !== 200) throw new Error(`reconcile: ${res.status} ${res.text}`)
      const st = res.body as Status
      if (st.lastAppliedRevision !== git('rev-parse', 'HEAD').trim()) throw new Error('the revision was not applied')
      return st
    },
  }
}

const ruleYaml = (id: string, file: string, logType = 'Editor.Audit') =>
  `AnalysisType: rule\nRuleID: ${id}\nEnabled: true\nFilename: ${file}\nLogTypes: [${logType}]\nSeverity: Low\n`
const invalid = (st: Status, p: string) => st.invalidFiles.find((f) => f.path === p)
const ready = (st: Status) => st.conditions.find((c) => c.type === 'Ready')!

t.test('a pushed syntax error is invalid within one reconcile; the last good version serves until fixed', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const c = clone(s)
  const good = 'def rule(event):\n    return event.get("action") == "delete"\n'
  c.write({ 'rules/py/syntax.yml': ruleYaml('Py.Syntax', 'syntax.py'), 'rules/py/syntax.py': good })
  let st = await c.push(s, 'a good Python rule')
  t.same(st.invalidFiles, [], 'valid at first')
  t.equal((await s.request('GET', '/rules/Py.Syntax')).body.body, good)

  // Only the .py changes (as a plain-git push of a half-edited file would).
  c.write({ 'rules/py/syntax.py': 'def rule(event):\n    return (event.get("action") ==\n' })
  st = await c.push(s, 'break the module')
  const broken = invalid(st, 'rules/py/syntax.yml')
  t.ok(broken, 'the rule file is invalid')
  t.equal(broken?.ruleId, 'Py.Syntax')
  t.match(broken?.errors[0], { file: 'rules/py/syntax.py', line: 2, column: 12, message: /SyntaxError/ })
  t.equal(st.files.invalid, 1, 'counted invalid in the file accounting')
  t.equal(ready(st).reason, 'AppliedWithInvalidFiles')
  t.ok(
    st.staleRules.some((r) => r.id === 'Py.Syntax'),
    'marked stale',
  )
  const served = await s.request('GET', '/rules/Py.Syntax')
  t.equal(served.status, 200, 'the last good version is served')
  t.equal(served.body.body, good)

  c.write({ 'rules/py/syntax.py': 'def rule(event):\n    return True\n' })
  st = await c.push(s, 'fix the module')
  t.same(st.invalidFiles, [], 'a fix of the .py alone makes it valid again')
  t.same(st.staleRules, [])
  t.equal((await s.request('GET', '/rules/Py.Syntax')).body.body, 'def rule(event):\n    return True\n')
  t.equal(ready(st).reason, 'Applied')
})

t.test('import-time errors: the module, a helper it imports, a data model; fixes re-check the users', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const c = clone(s)
  c.write({
    'global_helpers/team_helpers.yml': 'AnalysisType: global\nGlobalID: team_helpers\nFilename: team_helpers.py\n',
    'global_helpers/team_helpers.py': 'def is_admin(event):\n    return event.get("role") == "admin"\n',
    'rules/py/uses_helper.yml': ruleYaml('Py.UsesHelper', 'uses_helper.py'),
    'rules/py/uses_helper.py': 'from team_helpers import is_admin\n\n\ndef rule(event):\n    return is_admin(event)\n',
    'rules/py/name_error.yml': ruleYaml('Py.NameError', 'name_error.py'),
    'rules/py/name_error.py': 'def rule(event):\n    return True\n',
    'data_models/team.yml':
      'AnalysisType: datamodel\nDataModelID: Team.Model\nEnabled: true\nFilename: team.py\nLogTypes: [Team.Log]\nMappings:\n  - Name: actor\n    Method: get_actor\n',
    'data_models/team.py': 'def get_actor(event):\n    return event.get("user")\n',
  })
  let st = await c.push(s, 'rules, a helper and a data model')
  t.same(st.invalidFiles, [], 'all valid at first')

  c.write({
    'rules/py/name_error.py': 'PREFIX = undefined_prefix + "x"\n\n\ndef rule(event):\n    return True\n',
    'data_models/team.py': 'import json\n\nSETTINGS = json.loads("{")\n\n\ndef get_actor(event):\n    return None\n',
  })
  st = await c.push(s, 'import-time errors')
  t.match(invalid(st, 'rules/py/name_error.yml')?.errors[0], {
    file: 'rules/py/name_error.py',
    line: 1,
    message: /NameError: name 'undefined_prefix' is not defined/,
  })
  t.match(invalid(st, 'data_models/team.yml')?.errors[0], {
    file: 'data_models/team.py',
    line: 3,
    message: /JSONDecodeError/,
  })
  t.notOk(invalid(st, 'rules/py/uses_helper.yml'), 'the rule using the helper is untouched')

  // The helper breaks; the rule importing it did not change, and is checked again because of it.
  c.write({ 'global_helpers/team_helpers.py': 'raise RuntimeError("no settings")\n' })
  st = await c.push(s, 'break the helper')
  t.match(invalid(st, 'global_helpers/team_helpers.yml')?.errors[0], {
    file: 'global_helpers/team_helpers.py',
    line: 1,
    message: /RuntimeError: no settings/,
  })
  t.match(
    invalid(st, 'rules/py/uses_helper.yml')?.errors[0],
    {
      file: 'global_helpers/team_helpers.py',
      line: 1,
      message: /^rules\/py\/uses_helper\.py failed to import: RuntimeError/,
    },
    'a user of the broken helper is invalid, pointed at the helper',
  )
  t.equal((await s.request('GET', '/rules/Py.UsesHelper')).status, 200, 'its last good version serves')

  c.write({
    'global_helpers/team_helpers.py': 'def is_admin(event):\n    return True\n',
    'rules/py/name_error.py': 'def rule(event):\n    return True\n',
    'data_models/team.py': 'def get_actor(event):\n    return event.get("user")\n',
  })
  st = await c.push(s, 'fix everything')
  t.same(st.invalidFiles, [], 'the helper fixed, its user is valid again without changing')
  t.same(st.staleRules, [])
})

t.test('a module the interpreter lacks is served and reported as not run, not invalid', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const c = clone(s)
  c.write({
    'rules/py/third_party.yml': ruleYaml('Py.ThirdParty', 'third_party.py'),
    'rules/py/third_party.py':
      'import json\nfrom policyuniverse.arn import ARN\n\n\ndef rule(event):\n    return True\n',
  })
  const st = await c.push(s, 'a rule needing policyuniverse')
  t.same(st.invalidFiles, [])
  t.same(st.notRunFiles, [
    {
      path: 'rules/py/third_party.yml',
      ruleId: 'Py.ThirdParty',
      status: 'not-run',
      problem: {
        message:
          'not run: module policyuniverse is not installed in the configured interpreter, and no global helper of this repository has that GlobalID',
        line: 2,
        column: null,
        file: 'rules/py/third_party.py',
      },
    },
  ])
  t.equal(st.files.notRun, 1)
  t.match(ready(st), { status: 'True', reason: 'AppliedWithFilesNotRun' }, 'not green')
  t.equal((await s.request('GET', '/rules/Py.ThirdParty')).status, 200, 'served')
})

t.test('a module that hangs at import is invalid with "timed out"; the others are still checked', async (t) => {
  const s = await startInProcess({ config: { python: { timeoutMs: 1500 } } })
  t.teardown(() => s.close())
  const c = clone(s)
  c.write({
    'rules/py/a_hangs.yml': ruleYaml('Py.Hangs', 'a_hangs.py'),
    'rules/py/a_hangs.py': 'while True:\n    pass\n',
    'rules/py/b_sleeps.yml': ruleYaml('Py.Sleeps', 'b_sleeps.py'),
    'rules/py/b_sleeps.py': 'import time\ntime.sleep(3600)\n',
    'rules/py/c_fine.yml': ruleYaml('Py.Fine', 'c_fine.py'),
    'rules/py/c_fine.py': 'def rule(event):\n    return True\n',
  })
  const started = Date.now()
  const st = await c.push(s, 'hanging modules')
  t.ok(Date.now() - started < 30_000, 'indexing was not held by the hanging modules')
  t.match(invalid(st, 'rules/py/a_hangs.yml')?.errors[0]?.message, /timed out after 1500 ms/)
  t.match(invalid(st, 'rules/py/b_sleeps.yml')?.errors[0]?.message, /timed out after 1500 ms/)
  t.notOk(invalid(st, 'rules/py/c_fine.yml'), 'the module after them was checked in a fresh run')
  t.equal((await s.request('GET', '/rules/Py.Fine')).status, 200)
  t.equal((await s.request('GET', '/rules/Py.Hangs')).status, 404, 'never valid: nothing to serve')
})

t.test('without a sandbox indexing still works: the files are served and reported not checked', async (t) => {
  // The interpreter by its absolute path, and a PATH without bwrap on it.
  const emptyBin = tempDir('rk-nobwrap-')
  const s = await startInProcess({
    env: { PATH: emptyBin },
    config: { python: { command: fs.realpathSync('/usr/bin/python3') } },
  })
  t.teardown(() => s.close())
  const c = clone(s)
  c.write({
    'rules/py/unchecked.yml': ruleYaml('Py.Unchecked', 'unchecked.py'),
    'rules/py/unchecked.py': 'def rule(event):\n    return (\n',
  })
  const st = await c.push(s, 'a rule no sandbox can check')
  t.same(st.invalidFiles, [], 'nothing is invalid for want of a sandbox')
  const entry = st.notRunFiles.find((f) => f.path === 'rules/py/unchecked.yml')
  t.match(entry, { status: 'unchecked', problem: { message: /^not checked: Python tests cannot run: bubblewrap/ } })
  t.ok(st.files.unchecked >= 1)
  t.match(ready(st), { reason: 'AppliedWithFilesNotRun' })
  t.equal((await s.request('GET', '/rules/Py.Unchecked')).status, 200, 'served as read')
})
