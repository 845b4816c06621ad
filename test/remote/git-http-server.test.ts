// The smart-HTTP Git test server itself, driven by the real git CLI: clone, commit, push and fetch
// through it; a wrong or missing password is a 401 that makes git fail; stop refuses connections and
// start serves again on the same port; gzip request bodies (as git sends them) are understood.
// Real port: a remote (the git server under test).
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import t from 'tap'
import {
  createGitHttpServer,
  createRemoteRepo,
  PersonClone,
  runGit,
  TEMPLATE_AUTHOR,
} from '../helpers/git-http-server.js'
import { rawRequest } from '../helpers/raw-http.js'
import { tempDir } from '../helpers/rulekeeper.js'

const TEMPLATE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../rules-repo-template')
const alice = { name: 'Alice', email: 'alice@example.com' }
const bob = { name: 'Bob', email: 'bob@example.com' }

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1')
    sock.once('connect', () => {
      sock.destroy()
      resolve(true)
    })
    sock.once('error', () => resolve(false))
  })
}

const send = (port: number, method: string, p: string, headers: Record<string, string>, body?: Buffer) =>
  rawRequest(`http://127.0.0.1:${port}${p}`, { method, headers, body })

t.test('clone, commit, push and fetch through the server with the real git CLI', async (t) => {
  const root = tempDir('rk-githttp-')
  const srv = await createGitHttpServer({ root, username: 'tester', password: 's3cret pass' })
  t.teardown(() => srv.stop())
  const remote = await createRemoteRepo(root, 'rules', TEMPLATE)

  const first = await remote.head()
  t.match(await remote.git('log', '-1', '--format=%an <%ae>'), `${TEMPLATE_AUTHOR.name} <${TEMPLATE_AUTHOR.email}>`)

  const a = await PersonClone.clone(srv.authUrl('rules'), alice)
  t.equal(await a.head(), first, 'the clone is at the remote tip')
  t.ok(a.read('simple_rules/editor/Editor.Audit.LoginFailed.yml'), 'template files are in the clone')

  a.write('simple_rules/alice/alice.yml', 'AnalysisType: rule\nRuleID: Alice.Rule\n')
  const c1 = await a.commitAll('Add Alice.Rule')
  const pushed = await a.push()
  t.ok(pushed.ok, pushed.stderr)
  t.equal(await remote.head(), c1, 'the remote branch moved to the pushed commit')
  t.equal((await remote.git('log', '-1', '--format=%an <%ae>', 'main')).trim(), 'Alice <alice@example.com>')

  // Bob, cloned before Alice's next push, is refused (non-fast-forward), fetches and pushes again.
  const b = await PersonClone.clone(srv.authUrl('rules'), bob)
  a.write('simple_rules/alice/alice2.yml', 'AnalysisType: rule\nRuleID: Alice.Rule2\n')
  const c2 = await a.commitAll('Add Alice.Rule2')
  t.ok((await a.push()).ok)
  b.write('simple_rules/bob/bob.yml', 'AnalysisType: rule\nRuleID: Bob.Rule\n')
  await b.commitAll('Add Bob.Rule')
  const refused = await b.push()
  t.notOk(refused.ok, 'a push behind the tip is refused')
  t.match(refused.stderr, /rejected|fetch first|non-fast-forward/)
  await b.git('pull', '-q', '--rebase', 'origin', 'main')
  t.ok((await b.push()).ok)
  const tip = await remote.head()
  t.equal((await remote.git('rev-parse', `${tip}~1`)).trim(), c2, 'history is linear: Bob on top of Alice')

  // Fetch brings Bob's commit to Alice.
  await a.git('fetch', '-q', 'origin')
  t.equal((await a.git('rev-parse', 'origin/main')).trim(), tip)
  t.ok(srv.requests >= 8, `requests are counted (${srv.requests})`)
  t.ok(
    srv.log.some((r) => r.path.endsWith('/git-receive-pack') && r.status === 200),
    'receive-pack was served',
  )
  t.ok(
    srv.log.every((r) => r.status === 200 || r.status === 401),
    `only 200/401: ${JSON.stringify(srv.log.filter((r) => r.status !== 200 && r.status !== 401))}`,
  )
})

t.test('a wrong or missing password is answered 401 with a Basic challenge, and git fails', async (t) => {
  const root = tempDir('rk-githttp-')
  const srv = await createGitHttpServer({ root, username: 'tester', password: 'right' })
  t.teardown(() => srv.stop())
  await createRemoteRepo(root, 'rules', TEMPLATE)

  const noAuth = await send(srv.port, 'GET', '/rules.git/info/refs?service=git-upload-pack', {})
  t.equal(noAuth.status, 401)
  t.match(noAuth.headers['www-authenticate'], /^Basic/)
  const wrong = await send(srv.port, 'GET', '/rules.git/info/refs?service=git-upload-pack', {
    Authorization: `Basic ${Buffer.from('tester:wrong').toString('base64')}`,
  })
  t.equal(wrong.status, 401)
  const right = await send(srv.port, 'GET', '/rules.git/info/refs?service=git-upload-pack', {
    Authorization: `Basic ${Buffer.from('tester:right').toString('base64')}`,
  })
  t.equal(right.status, 200)
  t.equal(right.headers['content-type'], 'application/x-git-upload-pack-advertisement')

  const dir = path.join(tempDir('rk-githttp-clone-'), 'w')
  const r = await runGit(['clone', '-q', srv.authUrl('rules', 'tester', 'wrong'), dir])
  t.not(r.code, 0, 'git clone with a wrong password fails')
  t.match(r.stderr, /Authentication failed|401/)
  t.notOk(fs.existsSync(path.join(dir, 'simple_rules')))
})

t.test('stop refuses connections; start serves again on the same port', async (t) => {
  const root = tempDir('rk-githttp-')
  const srv = await createGitHttpServer({ root })
  t.teardown(() => srv.stop())
  const remote = await createRemoteRepo(root, 'rules', TEMPLATE)
  const a = await PersonClone.clone(srv.url('rules'), alice)
  const port = srv.port

  await srv.stop()
  t.notOk(await connects(port), 'connection refused while stopped')
  a.write('x.yml', 'AnalysisType: rule\nRuleID: X\n')
  const c = await a.commitAll('Add X')
  const down = await a.push()
  t.notOk(down.ok, 'push fails while the server is down')
  t.match(down.stderr, /Failed to connect|Connection refused|Could not connect/i)
  t.not(await remote.head(), c)

  await srv.start()
  t.equal(srv.port, port, 'same port')
  t.ok(await connects(port))
  const up = await a.push()
  t.ok(up.ok, up.stderr)
  t.equal(await remote.head(), c)
})

t.test('gzip-encoded request bodies reach git http-backend intact', async (t) => {
  const root = tempDir('rk-githttp-')
  const srv = await createGitHttpServer({ root })
  t.teardown(() => srv.stop())
  const remote = await createRemoteRepo(root, 'rules', TEMPLATE)
  const tip = await remote.head()
  // A protocol-v0 upload-pack request: want the tip, done.
  const pkt = (s: string) => (s.length + 4).toString(16).padStart(4, '0') + s
  const body = Buffer.from(`${pkt(`want ${tip} ofs-delta\n`)}0000${pkt('done\n')}`)
  const res = await send(
    srv.port,
    'POST',
    '/rules.git/git-upload-pack',
    { 'Content-Type': 'application/x-git-upload-pack-request', 'Content-Encoding': 'gzip' },
    gzipSync(body),
  )
  t.equal(res.status, 200)
  t.equal(res.headers['content-type'], 'application/x-git-upload-pack-result')
  t.ok(res.body.includes(Buffer.from('PACK')), 'a pack comes back')
})
