// Signed commits (issue 31, part 3): with git.signing every commit the service makes carries an SSH
// signature exactly as `git commit -S` makes it with gpg.format=ssh (the same object, byte for
// byte: Ed25519 signatures are deterministic), `git verify-commit` and `git log --show-signature`
// say Good with the published public key, and a key file others can read stops the start.
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { openSshSigner } from '../../src/git/commit-signer.js'
import { readEd25519Key, signEd25519 } from '../../src/git/openssh-key.js'
import { GitRepository } from '../../src/git/repository.js'
import { ObjectBatch } from '../../src/git/write-object-loose.js'
import { startInProcess } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

/** A passphrase-less OpenSSH key made by ssh-keygen, 0600, and an allowed-signers file naming it. */
function makeKey(dir: string, type = 'ed25519', principal = 'rulekeeper@localhost') {
  const key = path.join(dir, `key-${type}`)
  execFileSync('ssh-keygen', ['-q', '-t', type, '-N', '', '-C', 'rk-test', '-f', key])
  const pub = fs.readFileSync(`${key}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ')
  const allowed = path.join(dir, `allowed-${type}`)
  fs.writeFileSync(allowed, `${principal} namespaces="git" ${pub}\n`)
  return { key, pub, allowed }
}

/** git with the allowed-signers file, and no user or system configuration. */
function git(gitdir: string, allowed: string, ...args: string[]) {
  return spawnSync(
    'git',
    ['-c', 'gpg.format=ssh', '-c', `gpg.ssh.allowedSignersFile=${allowed}`, '--git-dir', gitdir, ...args],
    { encoding: 'utf8', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } },
  )
}

t.test('a commit built here is the object `git commit -S` makes with the same key, and verifies', async (t) => {
  const dir = tempDir('rk-sign-')
  const { key, allowed } = makeKey(dir)
  // git's own signed commit of one file, with fixed identities and dates.
  const work = path.join(dir, 'work')
  fs.mkdirSync(work)
  const when = '1700000000 +0000'
  const env = {
    ...process.env,
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Ann',
    GIT_AUTHOR_EMAIL: 'ann@example.com',
    GIT_AUTHOR_DATE: when,
    GIT_COMMITTER_NAME: 'rulekeeper',
    GIT_COMMITTER_EMAIL: 'rulekeeper@localhost',
    GIT_COMMITTER_DATE: when,
  }
  const run = (...args: string[]) => execFileSync('git', args, { cwd: work, env, encoding: 'utf8' })
  run('init', '-q', '-b', 'main')
  fs.writeFileSync(path.join(work, 'a.yml'), 'RuleID: A\n')
  run('add', 'a.yml')
  run('-c', 'gpg.format=ssh', '-c', `user.signingkey=${key}`, 'commit', '-q', '-S', '-m', 'Add A\n\nActor-Id: x')
  const theirs = run('rev-parse', 'HEAD').trim()

  const repo = await GitRepository.init(path.join(dir, 'ours.git'), 'main')
  repo.signer = await openSshSigner(key)
  const batch = new ObjectBatch()
  const person = (name: string, email: string) => ({ name, email, timestamp: 1700000000, tzOffsetMinutes: 0 })
  const built = await repo.buildCommit(batch, {
    parent: null,
    changes: new Map([['a.yml', Buffer.from('RuleID: A\n')]]),
    author: person('Ann', 'ann@example.com'),
    committer: person('rulekeeper', 'rulekeeper@localhost'),
    message: 'Add A\n\nActor-Id: x',
  })
  await repo.writeObjects(batch)
  t.equal(built.commit, theirs, 'the same commit id: the same signed object, header and payload')
  await repo.moveBranch(null, built.commit)
  const v = git(repo.gitdir, allowed, 'verify-commit', '-v', built.commit)
  t.equal(v.status, 0, v.stderr)
  t.match(v.stderr, /Good "git" signature for rulekeeper@localhost with ED25519 key/)
  const c = await repo.readCommit(built.commit)
  t.ok(c.signature?.armored.startsWith('-----BEGIN SSH SIGNATURE-----\n'), 'the signature is read back')
  t.notOk(c.signature?.payload.toString().includes('gpgsig'), 'the payload is the object without its gpgsig header')
  repo.close()
})

t.test('an Ed25519 signature made in process is the one ssh-keygen -Y sign makes', async (t) => {
  const { key } = makeKey(tempDir('rk-sign-ed-'))
  const k = readEd25519Key(fs.readFileSync(key, 'utf8'))
  t.ok(k, 'an unencrypted Ed25519 key is read')
  for (const message of ['', 'tree 1\n\nhello\n', 'é'.repeat(5000)]) {
    const theirs = execFileSync('ssh-keygen', ['-Y', 'sign', '-n', 'git', '-f', key], { input: message, stdio: 'pipe' })
    t.equal(signEd25519(k!, Buffer.from(message)), theirs.toString(), `${message.length} characters`)
  }
  const dir = tempDir('rk-sign-other-')
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', 'secret', '-f', path.join(dir, 'enc')])
  t.equal(
    readEd25519Key(fs.readFileSync(path.join(dir, 'enc'), 'utf8')),
    null,
    'an encrypted key is left to ssh-keygen',
  )
  execFileSync('ssh-keygen', ['-q', '-t', 'ecdsa', '-N', '', '-f', path.join(dir, 'ec')])
  t.equal(readEd25519Key(fs.readFileSync(path.join(dir, 'ec'), 'utf8')), null, 'so is an ECDSA key')
})

t.test('a key of another type is signed by ssh-keygen, and verifies as well', async (t) => {
  const dir = tempDir('rk-sign-ecdsa-')
  const { key, allowed } = makeKey(dir, 'ecdsa')
  const repo = await GitRepository.init(path.join(dir, 'r.git'), 'main')
  t.teardown(() => repo.close())
  repo.signer = await openSshSigner(key)
  const batch = new ObjectBatch()
  const who = { name: 'rulekeeper', email: 'rulekeeper@localhost', timestamp: 1700000000, tzOffsetMinutes: 60 }
  const built = await repo.buildCommit(batch, {
    parent: null,
    changes: new Map([['a.yml', Buffer.from('RuleID: A\n')]]),
    author: who,
    committer: who,
    message: 'Add A',
  })
  await repo.writeObjects(batch)
  const v = git(repo.gitdir, allowed, 'verify-commit', '-v', built.commit)
  t.equal(v.status, 0, v.stderr)
  t.match(v.stderr, /Good "git" signature for rulekeeper@localhost with ECDSA key/)
})

t.test('API writes are signed; git log --show-signature says Good with the published key', async (t) => {
  const dir = tempDir('rk-sign-api-')
  const { key, allowed } = makeKey(dir)
  const lines: string[] = []
  const s = await startInProcess({ config: { git: { signing: { sshKeyFile: key } } }, logLines: lines })
  t.teardown(() => s.close())
  const put = await s.request('PUT', '/simple-rules/Signed.Rule', SAMPLE_BODIES.simple('Signed.Rule'))
  t.equal(put.status, 201, put.text)
  const head = s.git('rev-parse', 'refs/heads/main').trim()
  const log = git(s.gitdir, allowed, 'log', '--show-signature', '-2', 'refs/heads/main')
  t.equal(log.status, 0, log.stderr)
  const good = log.stdout.match(/Good "git" signature for rulekeeper@localhost with ED25519 key/g) ?? []
  t.equal(good.length, 2, 'the write and the template seed are both signed')
  t.equal(git(s.gitdir, allowed, 'verify-commit', head).status, 0)
  const fingerprint = execFileSync('ssh-keygen', ['-l', '-f', `${key}.pub`], { encoding: 'utf8' }).split(' ')[1]!
  t.ok(
    lines.some((l) => l.includes(fingerprint) && l.includes('are signed')),
    'the start names the key by its fingerprint',
  )
  // The key is never in the log, the data directory or the repository.
  const secret = fs.readFileSync(key, 'utf8').split('\n')[1]!
  t.notOk(lines.join('\n').includes(secret), 'not in the log')
  const found = spawnSync('grep', ['-rlF', secret, s.dataDir], { encoding: 'utf8' })
  t.equal(found.stdout, '', 'not in the data directory')
})

t.test('a signing key others can read, or no key at all, stops the start', async (t) => {
  const dir = tempDir('rk-sign-bad-')
  const { key } = makeKey(dir)
  fs.chmodSync(key, 0o644)
  await t.rejects(startInProcess({ config: { git: { signing: { sshKeyFile: key } } } }), {
    code: 'ConfigInvalid',
    message: /git\.signing\.sshKeyFile: the signing key is readable by others \(mode 644\)/,
  })
  const encrypted = path.join(dir, 'encrypted')
  execFileSync('ssh-keygen', ['-q', '-t', 'ecdsa', '-N', 'a passphrase', '-f', encrypted])
  await t.rejects(startInProcess({ config: { git: { signing: { sshKeyFile: encrypted } } } }), {
    message: /git\.signing\.sshKeyFile: not a usable OpenSSH private key \(a passphrase-less one\)/,
  })
  const notKey = path.join(dir, 'not-a-key')
  fs.writeFileSync(notKey, 'hello\n', { mode: 0o600 })
  await t.rejects(startInProcess({ config: { git: { signing: { sshKeyFile: notKey } } } }), {
    message: /git\.signing\.sshKeyFile: not a usable OpenSSH private key/,
  })
})
