// Verified revisions (issue 31, part 4; Flux's `verify`): with git.verify the reconciler serves only
// revisions whose tip commit is signed by a key of the allowed-signers file. An unsigned tip and a
// tip signed by another key are held — the last verified revision keeps serving, /status says why,
// API writes on the unverified tip answer 503 — until a signed tip is pushed.
// Real port: a remote (the git server).
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import type { PersonClone } from '../helpers/git-http-server.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'
import { condition, remoteWorld, simplePath, simpleRuleYaml } from './remote-fixture.js'

const erin = { name: 'Erin', email: 'erin@example.com' }

function makeKey(dir: string, name: string): { key: string; fingerprint: string; pub: string } {
  const key = path.join(dir, name)
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', key])
  const fingerprint = execFileSync('ssh-keygen', ['-l', '-f', `${key}.pub`], { encoding: 'utf8' }).split(' ')[1]!
  const pub = fs.readFileSync(`${key}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ')
  return { key, fingerprint, pub }
}

/** Commits everything as Erin, signed with `key` (none: unsigned), and pushes. */
async function commitPush(c: PersonClone, message: string, key?: string): Promise<string> {
  await c.git('add', '-A')
  const sign = key ? ['-c', 'gpg.format=ssh', '-c', `user.signingkey=${key}`, 'commit', '-S'] : ['commit']
  await c.git(...sign, '-q', '--allow-empty', '-m', message)
  const pushed = await c.push()
  if (!pushed.ok) throw new Error(pushed.stderr)
  return c.head()
}

t.test('only revisions whose tip is signed by an allowed key are served', async (t) => {
  t.setTimeout(120_000)
  const dir = tempDir('rk-verify-keys-')
  const release = makeKey(dir, 'release')
  const stranger = makeKey(dir, 'stranger')
  const allowed = path.join(dir, 'allowed_signers')
  fs.writeFileSync(allowed, `release@example.com namespaces="git" ${release.pub}\n`)

  const w = await remoteWorld(t)
  const c = await w.clone(erin)
  c.write(simplePath('Signed.One'), simpleRuleYaml('Signed.One'))
  const good = await commitPush(c, 'Add Signed.One', release.key)
  const s = await w.startServer({ config: { git: { verify: { allowedSignersFile: allowed } } } })
  const st0 = (await s.request('GET', '/status')).body
  t.equal(st0.lastAppliedRevision, good, 'a signed tip is served')
  t.equal((await s.request('GET', '/simple-rules/Signed.One')).status, 200)

  const held = async (tip: string, reason: RegExp | string, what: string) => {
    const st = (await s.request('POST', '/reconcile')).body
    t.equal(st.lastAppliedRevision, good, `${what}: the last verified revision serves`)
    t.equal(st.lastAttemptedRevision, tip, `${what}: the tip was looked at`)
    t.equal(st.lastRun.outcome, 'held')
    const stalled = condition(st, 'Stalled')
    t.equal(stalled?.status, 'True')
    t.equal(stalled?.reason, 'UnverifiedRevision')
    t.match(stalled?.message, reason, `${what}: /status says why`)
    t.match(condition(st, 'Ready'), { status: 'False', reason: 'UnverifiedRevision' })
    t.equal((await s.request('GET', '/simple-rules/Unsigned.Two')).status, 404, `${what}: its rule is not served`)
    // A write would sign the unverified content into the service's own commit.
    const put = await s.request('POST', '/simple-rules?run-tests-first=false', SAMPLE_BODIES.simple('Api.Write'))
    t.equal(put.status, 503, `${what}: writes wait for a verified tip`)
    t.match(put.body?.message, /branch tip is not verified/)
  }

  c.write(simplePath('Unsigned.Two'), simpleRuleYaml('Unsigned.Two'))
  const unsigned = await commitPush(c, 'Add Unsigned.Two')
  await held(unsigned, new RegExp(`revision ${unsigned}: commit ${unsigned.slice(0, 12)} is not signed`), 'unsigned')

  const wrong = await commitPush(c, 'Sign it with a key nobody allowed', stranger.key)
  await held(wrong, `is signed by a key that is not an allowed signer (${stranger.fingerprint})`, 'wrong key')

  // The file is read at each check: the key allowed, the held tip is served without a restart.
  fs.appendFileSync(allowed, `stranger@example.com namespaces="git" ${stranger.pub}\n`)
  const allowedNow = (await s.request('POST', '/reconcile')).body
  t.equal(allowedNow.lastAppliedRevision, wrong, 'the held tip is served once its key is allowed')
  t.match(condition(allowedNow, 'Stalled'), { status: 'False' })
  fs.writeFileSync(allowed, `release@example.com namespaces="git" ${release.pub}\n`)

  // The tip only is verified, as Flux does: a signed commit on top serves everything below it.
  const fixed = await commitPush(c, 'Release', release.key)
  const st = (await s.request('POST', '/reconcile')).body
  t.equal(st.lastAppliedRevision, fixed)
  t.match(condition(st, 'Stalled'), { status: 'False' })
  t.match(condition(st, 'Ready'), { status: 'True', reason: 'Applied' })
  t.equal((await s.request('GET', '/simple-rules/Unsigned.Two')).status, 200)
  const put = await s.request('POST', '/simple-rules?run-tests-first=false', SAMPLE_BODIES.simple('Api.Write'))
  t.equal(put.status, 200, put.text)
})

t.test('an allowed-signers file that cannot be read stops the start', async (t) => {
  const w = await remoteWorld(t)
  await t.rejects(w.startServer({ config: { git: { verify: { allowedSignersFile: '/nonexistent/allowed' } } } }), {
    message: /git\.verify\.allowedSignersFile: cannot read the allowed signers: ENOENT/,
  })
})
