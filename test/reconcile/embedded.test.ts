// The reconciler in embedded mode (no remote): commits pushed into the local repository with plain
// git are picked up by POST /reconcile; a broken file keeps its rule's last good version served and
// is reported with path, line and column until fixed; a duplicated id is reported; a revision that
// deletes most rules is held back (Stalled) until a person confirms it.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

const who = {
  GIT_AUTHOR_NAME: 'Pat',
  GIT_AUTHOR_EMAIL: 'pat@example.com',
  GIT_COMMITTER_NAME: 'Pat',
  GIT_COMMITTER_EMAIL: 'pat@example.com',
}

function clone(s: InProcessServer): { dir: string; run(...args: string[]): string } {
  const dir = path.join(tempDir('rk-embedded-'), 'w')
  execFileSync('git', ['clone', '-q', s.gitdir, dir])
  return {
    dir,
    run: (...args) => execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: { ...process.env, ...who } }),
  }
}

const condition = (
  status: { conditions: Array<{ type: string; status: string; reason: string; message: string }> },
  type: string,
) => status.conditions.find((c) => c.type === type)!

t.test(
  'a broken file keeps the last good version served and is reported until fixed; duplicates are reported',
  async (t) => {
    const s = await startInProcess()
    t.teardown(() => s.close())
    const c = clone(s)
    const file = path.join(c.dir, 'simple_rules/editor/Editor.Audit.LoginFailed.yml')
    const good = fs.readFileSync(file, 'utf8')
    fs.writeFileSync(file, good.replace('Severity: Info', 'Severity: Info\n  bad: [indent'))
    const dup = path.join(c.dir, 'simple_rules/editor/copy.yml')
    fs.writeFileSync(
      dup,
      fs.readFileSync(path.join(c.dir, 'simple_rules/editor/Editor.Audit.LoginSucceeded.yml'), 'utf8'),
    )
    const detection = path.join(c.dir, 'simple_rules/editor/Editor.Audit.PrivacyModeEnforcementDisabled.yml')
    fs.writeFileSync(detection, fs.readFileSync(detection, 'utf8').replace('Condition: IsIn', 'Condition: IsInside'))
    c.run('add', '-A')
    c.run('commit', '-q', '-m', 'break things')
    c.run('push', '-q', 'origin', 'HEAD:main')

    const st = (await s.request('POST', '/reconcile')).body
    t.equal(st.lastAppliedRevision, c.run('rev-parse', 'HEAD').trim(), 'the revision is applied')
    const byPath = new Map(
      (
        st.invalidFiles as Array<{
          path: string
          ruleId: string | null
          errors: Array<{ message: string; line: number; column: number }>
        }>
      ).map((f) => [f.path, f]),
    )
    const broken = byPath.get('simple_rules/editor/Editor.Audit.LoginFailed.yml')!
    t.ok(broken, 'the broken YAML is reported')
    t.equal(broken.ruleId, 'Editor.Audit.LoginFailed')
    t.same([broken.errors[0]!.line, broken.errors[0]!.column], [8, 11], 'where the bad nested mapping starts')
    const cond = byPath.get('simple_rules/editor/Editor.Audit.PrivacyModeEnforcementDisabled.yml')!
    t.match(cond.errors[0]!.message, /IsInside/)
    t.type(cond.errors[0]!.line, 'number')
    const duplicate = byPath.get('simple_rules/editor/copy.yml')!
    t.match(duplicate.errors[0]!.message, /duplicate id Editor\.Audit\.LoginSucceeded/)
    t.equal(condition(st, 'Ready').reason, 'AppliedWithInvalidFiles')

    const stale = await s.request('GET', '/simple-rules/Editor.Audit.LoginFailed')
    t.equal(stale.status, 200, 'the last good version is served')
    t.equal(stale.body.severity, 'INFO')
    t.match(stale.body.warnings[0].message, /last valid version/)
    t.ok(st.staleRules.some((r: { id: string }) => r.id === 'Editor.Audit.LoginFailed'))
    t.equal(
      (await s.request('GET', '/simple-rules/Editor.Audit.LoginSucceeded')).status,
      200,
      'the older file keeps serving',
    )
    t.equal(
      (await s.request('GET', '/correlation-rules/Editor.Audit.BruteForceThenSuccess')).status,
      200,
      'other rules are served',
    )

    fs.writeFileSync(file, good.replace('Severity: Info', 'Severity: Low'))
    fs.rmSync(dup)
    c.run('add', '-A')
    c.run('commit', '-q', '-m', 'fix things')
    c.run('push', '-q', 'origin', 'HEAD:main')
    const fixed = (await s.request('POST', '/reconcile')).body
    t.same(
      fixed.invalidFiles.map((f: { path: string }) => f.path),
      ['simple_rules/editor/Editor.Audit.PrivacyModeEnforcementDisabled.yml'],
    )
    const back = await s.request('GET', '/simple-rules/Editor.Audit.LoginFailed')
    t.equal(back.body.severity, 'LOW')
    t.same(back.body.warnings, [])
    t.same(back.body.lastModifiedBy, { id: 'pat@example.com', type: 'user' })
  },
)

t.test('a revision deleting most rules is held back until confirmed', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  for (let i = 0; i < 20; i++)
    t.equal(
      (await s.request('POST', '/simple-rules?run-tests-first=false', SAMPLE_BODIES.simple(`Bulk.Rule${i}`))).status,
      200,
    )
  const c = clone(s)
  c.run('rm', '-q', '-r', 'simple_rules/bulk')
  c.run('commit', '-q', '-m', 'remove the bulk rules')
  c.run('push', '-q', 'origin', 'HEAD:main')
  const pushed = c.run('rev-parse', 'HEAD').trim()

  const st = (await s.request('POST', '/reconcile')).body
  t.not(st.lastAppliedRevision, pushed, 'not applied')
  t.equal(st.lastAttemptedRevision, pushed)
  t.equal(condition(st, 'Stalled').status, 'True')
  t.equal(condition(st, 'Stalled').reason, 'MassDeletion')
  t.match(condition(st, 'Stalled').message, /delete 20 of 26 rules/)
  t.equal((await s.request('GET', '/simple-rules/Bulk.Rule3')).status, 200, 'still served')
  const write = await s.request('POST', '/simple-rules?run-tests-first=false', SAMPLE_BODIES.simple('During.Stall'))
  t.equal(write.status, 503)
  t.match(write.body.message, /allow-mass-delete/)

  const confirmed = (await s.request('POST', '/reconcile?allow-mass-delete=true')).body
  t.equal(confirmed.lastAppliedRevision, pushed)
  t.equal(condition(confirmed, 'Stalled').status, 'False')
  t.equal((await s.request('GET', '/simple-rules/Bulk.Rule3')).status, 404)
  t.equal(
    (await s.request('POST', '/simple-rules?run-tests-first=false', SAMPLE_BODIES.simple('After.Stall'))).status,
    200,
  )
})
