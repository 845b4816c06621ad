// History: a scripted session of API writes and plain-git commits (a clone, commits by people, a
// move of a file, a push back), then `git log` from the real git CLI on the bare repository, the
// API's history-derived metadata, and `git fsck --strict` must all agree.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { startInProcess } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

function gitIn(cwd: string, args: string[], env: Record<string, string> = {}): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...env } })
}

const person = (name: string, email: string, when: string) => ({
  GIT_AUTHOR_NAME: name,
  GIT_AUTHOR_EMAIL: email,
  GIT_AUTHOR_DATE: when,
  GIT_COMMITTER_NAME: name,
  GIT_COMMITTER_EMAIL: email,
  GIT_COMMITTER_DATE: when,
})

const HAND_WRITTEN = `# Written by hand: this comment must survive API edits.
AnalysisType: rule
RuleID: Hand.Written.Rule
Enabled: true
LogTypes:
  - AWS.CloudTrail
Severity: Low   # low for now
Description: kept as written
Detection:
  # the event we care about
  - KeyPath: eventName
    Condition: Equals
    Value: DeleteTrail
Tests:
  - Name: delete trail
    ExpectedResult: true
    Log: { eventName: DeleteTrail }
`

t.test('API writes and plain-git commits give one consistent history', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const alice = await s.makeToken('alice', ['View Rules', 'Manage Rules'])
  const bob = await s.makeToken('bob', ['View Rules', 'Manage Rules'])
  const as = (tok: string) => ({ 'X-API-Key': tok })

  // 1. API: alice creates, bob updates with a reason.
  t.equal((await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('Hist.A'), as(alice))).status, 200)
  const created = await s.request('GET', '/simple-rules/Hist.A')
  const upd = await s.request('PUT', '/simple-rules/Hist.A', SAMPLE_BODIES.simple('Hist.A', { severity: 'LOW' }), {
    ...as(bob),
    'X-Change-Reason': 'too noisy, see SEC-42',
  })
  t.equal(upd.status, 200)

  // 2. plain git: Carol adds a hand-written rule, Dave moves Hist.A's file and edits nothing else.
  const work = path.join(tempDir('rk-clone-'), 'w')
  execFileSync('git', ['clone', '-q', s.gitdir, work])
  fs.mkdirSync(path.join(work, 'simple_rules/hand'), { recursive: true })
  fs.writeFileSync(path.join(work, 'simple_rules/hand/hand_written.yml'), HAND_WRITTEN)
  gitIn(work, ['add', '-A'])
  gitIn(
    work,
    ['commit', '-q', '-m', 'Add a hand-written rule'],
    person('Carol', 'carol@example.com', '2026-01-02T03:04:05Z'),
  )
  fs.mkdirSync(path.join(work, 'simple_rules/moved'), { recursive: true })
  gitIn(work, ['mv', 'simple_rules/hist/Hist.A.yml', 'simple_rules/moved/Hist.A.yml'])
  gitIn(work, ['commit', '-q', '-m', 'Move Hist.A'], person('Dave', 'dave@example.com', '2026-01-03T00:00:00Z'))
  gitIn(work, ['push', '-q', 'origin', 'HEAD:main'])

  // 3. The service notices the push (reconcile), then alice edits the hand-written rule via the API.
  const rec = await s.request('POST', '/reconcile')
  t.equal(rec.status, 200, rec.text)
  t.equal(rec.body.lastAppliedRevision, gitIn(work, ['rev-parse', 'HEAD']).trim())
  const hand = await s.request('GET', '/simple-rules/Hand.Written.Rule')
  t.equal(hand.status, 200, hand.text)
  t.same(hand.body.createdBy, { id: 'carol@example.com', type: 'user' })
  t.equal(hand.body.createdAt, '2026-01-02T03:04:05.000Z')
  const edit = await s.request('PUT', '/simple-rules/Hand.Written.Rule', { ...hand.body, severity: 'HIGH' }, as(alice))
  t.equal(edit.status, 200, edit.text)

  // 4. Delete and re-create: a new life starts.
  t.equal((await s.request('DELETE', '/simple-rules/Hist.A', undefined, as(alice))).status, 204)
  t.equal((await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('Hist.A'), as(bob))).status, 200)

  // The real git CLI on the bare repository.
  const log = s.git('log', '--format=%an <%ae>|%cn <%ce>|%s').trim().split('\n')
  const aliceId = (await s.request('GET', '/status', undefined, as(alice))).status === 200 ? 'alice' : ''
  t.equal(aliceId, 'alice')
  t.match(
    log[0],
    /^bob <tok_\w+@api-token\.rulekeeper>\|rulekeeper <rulekeeper@localhost>\|Create simple rule Hist\.A$/,
  )
  t.match(
    log[1],
    /^alice <tok_\w+@api-token\.rulekeeper>\|rulekeeper <rulekeeper@localhost>\|Delete simple rule Hist\.A$/,
  )
  t.match(log[2], /^alice <.*>\|rulekeeper <rulekeeper@localhost>\|Update simple rule Hand\.Written\.Rule$/)
  t.equal(log[3], 'Dave <dave@example.com>|Dave <dave@example.com>|Move Hist.A')
  t.equal(log[4], 'Carol <carol@example.com>|Carol <carol@example.com>|Add a hand-written rule')
  t.match(log[5], /^bob <.*>\|rulekeeper <rulekeeper@localhost>\|Update simple rule Hist\.A$/)
  t.match(log[6], /^alice <.*>\|.*\|Create simple rule Hist\.A$/)
  t.match(log[7], /^rulekeeper <rulekeeper@localhost>\|.*\|Initialize rules repository from template$/)
  const bodyOfUpdate = s.git('log', '--format=%B', '-1', '--grep', 'Update simple rule Hist.A')
  t.match(
    bodyOfUpdate,
    /^Update simple rule Hist\.A\n\ntoo noisy, see SEC-42\n\nRule-Id: Hist\.A\nRule-Kind: simple\nActor-Id: tok_\w+\nActor-Type: api-token\nRequest-Id: \S+\n/,
  )
  t.equal(
    s.git('log', '--format=%s', '--grep', 'Rule-Id: Hand.Written.Rule').trim(),
    'Update simple rule Hand.Written.Rule',
  )
  t.same(s.git('log', '--format=%s', '--', 'simple_rules/moved/Hist.A.yml').trim().split('\n'), [
    'Delete simple rule Hist.A',
    'Move Hist.A',
  ])
  // The re-created rule starts a new life at the default path.
  t.same(s.git('log', '--format=%s', '-1', '--', 'simple_rules/hist/Hist.A.yml').trim(), 'Create simple rule Hist.A')

  // The API's metadata agrees with the log.
  const a = (await s.request('GET', '/simple-rules/Hist.A')).body
  t.equal(a.createdBy.type, 'api-token')
  t.equal(a.createdBy.id, a.lastModifiedBy.id, 're-created: a new life by bob')
  t.not(a.createdBy.id, created.body.createdBy.id)
  const h = (await s.request('GET', '/simple-rules/Hand.Written.Rule')).body
  t.same(h.createdBy, { id: 'carol@example.com', type: 'user' })
  t.equal(h.lastModifiedBy.type, 'api-token')
  t.equal((await s.request('GET', `/simple-rules?created-by=carol%40example.com`)).body.results.length, 1)

  // Comments, key order and untouched fields of the hand-written file survived the API edit.
  const text = s.git('show', 'HEAD:simple_rules/hand/hand_written.yml')
  t.match(
    text,
    /^# Written by hand: this comment must survive API edits\.\nAnalysisType: rule\nRuleID: Hand\.Written\.Rule\n/,
  )
  t.match(text, /Severity: High +# low for now\n/)
  t.match(text, / {2}# the event we care about\n/)
  t.match(text, /Description: kept as written\n/)
  t.equal(
    execFileSync('git', ['--git-dir', s.gitdir, 'fsck', '--strict'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
    '',
  )
})

t.test('a move keeps the creation; metadata is served from the persisted cache after a restart', async (t) => {
  const dir = tempDir()
  let s = await startInProcess({ dataDir: dir })
  t.equal((await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('Move.Me'))).status, 200)
  const before = (await s.request('GET', '/simple-rules/Move.Me')).body
  await s.close()
  t.ok(fs.existsSync(path.join(dir, 'cache', 'history.json')))
  s = await startInProcess({ dataDir: dir })
  t.teardown(() => s.close())
  const after = (await s.request('GET', '/simple-rules/Move.Me')).body
  t.same(
    [after.createdAt, after.createdBy, after.lastModified],
    [before.createdAt, before.createdBy, before.lastModified],
  )
})
