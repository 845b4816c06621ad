// Actor trailers are believed on commits signed by the service's key (issue 31, part 3), checked in
// process against OpenSSH's own signatures (Ed25519, ECDSA, RSA): the service's commits keep their
// actor without the service-commits record (a fresh data directory over the same repository), while
// forged trailers — on a commit signed with another key, or under a copy of the service's own
// signature — are credited to the commit's git author.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { splitSignature } from '../../src/git/commit-signature.js'
import { publicKeyBlob, verifySshSignature } from '../../src/git/sshsig.js'
import { gitAs } from '../helpers/git-as.js'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

const MALLORY = { name: 'Mallory', email: 'mallory@example.com' }
const mallory = { id: MALLORY.email, type: 'user' }

function makeKey(dir: string, type: string, bits?: string): { key: string; pub: Buffer } {
  const key = path.join(dir, `key-${type}${bits ?? ''}`)
  execFileSync('ssh-keygen', ['-q', '-t', type, ...(bits ? ['-b', bits] : []), '-N', '', '-C', 'x', '-f', key])
  return { key, pub: publicKeyBlob(fs.readFileSync(`${key}.pub`, 'utf8'))! }
}

const sshSign = (key: string, message: Buffer, namespace = 'git') =>
  execFileSync('ssh-keygen', ['-Y', 'sign', '-n', namespace, '-f', key], { input: message, stdio: 'pipe' }).toString()

t.test('OpenSSH signatures check out in process, and nothing else does', async (t) => {
  const dir = tempDir('rk-sshsig-')
  const message = Buffer.from('tree 1234\n\nhello\n')
  const keys = [
    makeKey(dir, 'ed25519'),
    makeKey(dir, 'ecdsa', '256'),
    makeKey(dir, 'ecdsa', '384'),
    makeKey(dir, 'ecdsa', '521'),
    makeKey(dir, 'rsa', '2048'),
  ]
  for (const [i, { key, pub }] of keys.entries()) {
    const sig = sshSign(key, message)
    const name = path.basename(key)
    t.ok(verifySshSignature(sig, message, pub), `${name}: good`)
    t.notOk(verifySshSignature(sig, Buffer.from('tree 1234\n\nhellO\n'), pub), `${name}: another message`)
    t.notOk(verifySshSignature(sig, message, keys[(i + 1) % keys.length]!.pub), `${name}: another key`)
    t.notOk(verifySshSignature(sshSign(key, message, 'file'), message, pub), `${name}: another namespace`)
    const body = sig.split('\n').slice(1, -2).join('')
    const raw = Buffer.from(body, 'base64')
    raw[raw.length - 3]! ^= 1 // a bit of the signature proper
    const flipped = `-----BEGIN SSH SIGNATURE-----\n${raw.toString('base64')}\n-----END SSH SIGNATURE-----\n`
    t.notOk(verifySshSignature(flipped, message, pub), `${name}: a flipped bit`)
  }
  t.notOk(verifySshSignature('not a signature', message, keys[0]!.pub))
})

/** Mallory's clone of the server's repository. */
function cloneAsMallory(s: InProcessServer): string {
  const work = path.join(tempDir('rk-signed-forge-'), 'w')
  execFileSync('git', ['clone', '-q', s.gitdir, work])
  return work
}

async function pushAndReconcile(s: InProcessServer, work: string): Promise<string> {
  gitAs(MALLORY, work, 'push', '-q', 'origin', 'HEAD:main')
  const rec = await s.request('POST', '/reconcile')
  if (rec.status !== 200) throw new Error(rec.text)
  return gitAs(MALLORY, work, 'rev-parse', 'HEAD').trim()
}

t.test('trailers are believed on commits the service key signed, not on forged ones', async (t) => {
  const dir = tempDir('rk-signed-actor-')
  const service = makeKey(dir, 'ed25519')
  const malloryKey = makeKey(tempDir('rk-mallory-key-'), 'ed25519').key
  const dataDir = tempDir('rk-signed-actor-data-')
  const config = { git: { signing: { sshKeyFile: service.key } } }
  let s = await startInProcess({ dataDir, config })
  t.teardown(() => s.close())
  const boot = (await s.request('GET', '/whoami')).body.id as string
  const token = { id: boot, type: 'api-token' }
  const made = await s.request('POST', '/simple-rules?run-tests-first=false', SAMPLE_BODIES.simple('Svc.Signed'))
  t.equal(made.status, 200, made.text)
  const serviceCommit = s.git('rev-parse', 'main').trim()
  const trailers = `Actor-Id: ${boot}\nActor-Type: api-token\n`

  // 1. Forged trailers on a commit Mallory signed with her own key.
  const work = cloneAsMallory(s)
  fs.mkdirSync(path.join(work, 'simple_rules/forged'), { recursive: true })
  fs.writeFileSync(path.join(work, 'simple_rules/forged/Forged.One.yml'), SAMPLE_YAML('Forged.One'))
  gitAs(MALLORY, work, 'add', '-A')
  gitAs(
    MALLORY,
    work,
    ...['-c', 'gpg.format=ssh', '-c', `user.signingkey=${malloryKey}`, 'commit', '-q', '-S'],
    ...['-m', `Add a rule\n\n${trailers}`],
  )
  const signedByMallory = await pushAndReconcile(s, work)

  // 2. Forged trailers under a copy of the service's own gpgsig header (a valid signature of another payload).
  const own = s.git('cat-file', 'commit', serviceCommit)
  const gpgsig = own.slice(own.indexOf('gpgsig '), own.indexOf('\n\n') + 1)
  fs.writeFileSync(path.join(work, 'simple_rules/forged/Forged.Two.yml'), SAMPLE_YAML('Forged.Two'))
  gitAs(MALLORY, work, 'add', '-A')
  gitAs(MALLORY, work, 'commit', '-q', '-m', `Add another\n\n${trailers}`)
  const plain = gitAs(MALLORY, work, 'cat-file', 'commit', 'HEAD')
  const forged = `${plain.slice(0, plain.indexOf('\n\n') + 1)}${gpgsig}${plain.slice(plain.indexOf('\n\n') + 1)}`
  t.ok(splitSignature(forged), 'the forged commit carries the copied signature')
  const forgedOid = execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], {
    cwd: work,
    input: forged,
    encoding: 'utf8',
  }).trim()
  gitAs(MALLORY, work, 'reset', '-q', '--hard', forgedOid)
  const copied = await pushAndReconcile(s, work)
  t.equal(copied, forgedOid)

  const check = async (when: string) => {
    t.same((await s.request('GET', '/simple-rules/Svc.Signed')).body.createdBy, token, `${when}: the signed write`)
    t.same((await s.request('GET', '/simple-rules/Forged.One')).body.createdBy, mallory, `${when}: her own key`)
    t.same((await s.request('GET', '/simple-rules/Forged.Two')).body.createdBy, mallory, `${when}: a copied signature`)
    const history = (await s.request('GET', '/simple-rules/Forged.Two/history')).body.results
    t.same(
      history.map((h: { revision: string; actor: unknown }) => [h.revision, h.actor]),
      [[copied, mallory]],
    )
  }
  await check('live')
  t.ok(signedByMallory)

  // A fresh data directory over the same repository: no record of the service's commits, no cache.
  await s.close()
  fs.rmSync(path.join(dataDir, 'service-commits'))
  fs.rmSync(path.join(dataDir, 'cache'), { recursive: true, force: true })
  s = await startInProcess({ dataDir, config })
  await check('rebuilt without the record')
  t.same(
    (await s.request('GET', '/simple-rules/Editor.Audit.LoginFailed')).body.createdBy,
    { id: 'system', type: 'system' },
    'the signed template seed stays the system’s',
  )
})

function SAMPLE_YAML(id: string): string {
  return (
    `AnalysisType: rule\nRuleID: ${id}\nEnabled: true\nSeverity: Low\nLogTypes: [AWS.CloudTrail]\n` +
    'Detection:\n  - KeyPath: a\n    Condition: Equals\n    Value: b\n'
  )
}
