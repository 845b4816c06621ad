// The git token under attack while the remote is fetched with the git binary: a hostile remote that
// echoes the credentials it received back in its error, a wrong password, a host that refuses
// connections, a remote that never answers. The token (plain, URL-encoded, or inside the Basic
// value) is in no log line, no response, no /status, no file of the data directory, and on no
// process's command line while git runs.
// Real port: a remote (the git server and a hostile smart-HTTP server).
import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import t from 'tap'
import { SAMPLE_BODIES, tempDir, type ApiResponse } from '../helpers/rulekeeper.js'
import { waitFor } from '../helpers/wait.js'
import { GIT_TOKEN, GIT_USER, remoteWorld } from '../remote/remote-fixture.js'

const WRONG_TOKEN = 'ghp_WRONGPASSWORD_qq11ww22ee33'
const NO_TESTS = '?run-tests-first=false'

/** One pkt-line. */
const pkt = (s: string) => `${(s.length + 4).toString(16).padStart(4, '0')}${s}`

/**
 * A smart-HTTP "remote" that asks for Basic credentials, then answers the ref advertisement with
 * an `ERR` line repeating them (as a hostile or badly written server could); under /hang/ it
 * takes the request and never answers.
 */
async function hostileRemote(): Promise<{ url(p: string): string; hung: number; close(): Promise<void> }> {
  const held = new Set<http.ServerResponse>()
  const state = { hung: 0 }
  const server = http.createServer((req, res) => {
    req.resume()
    const auth = req.headers.authorization
    if (!auth) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' })
      res.end()
      return
    }
    if (req.url?.startsWith('/hang/')) {
      state.hung++
      held.add(res)
      return
    }
    const decoded = Buffer.from(auth.replace(/^Basic\s+/i, ''), 'base64').toString('utf8')
    res.writeHead(200, { 'Content-Type': 'application/x-git-upload-pack-advertisement', 'Cache-Control': 'no-cache' })
    res.end(`${pkt('# service=git-upload-pack\n')}0000${pkt(`ERR you sent ${decoded} as ${auth}\n`)}`)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as AddressInfo).port
  return {
    url: (p) => `http://127.0.0.1:${port}${p}`,
    get hung() {
      return state.hung
    },
    close: () =>
      new Promise<void>((r) => {
        for (const res of held) res.destroy()
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}

/** Every process's command line, as the kernel shows it to any user of the machine. */
function commandLines(): string[] {
  const out: string[] = []
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      out.push(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' '))
    } catch {
      // The process ended meanwhile.
    }
  }
  return out
}

function filesUnder(dir: string): string[] {
  const out: string[] = []
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) out.push(...filesUnder(p))
    else if (e.isFile()) out.push(p)
  }
  return out
}

t.test('the git token stays secret when the remote fails, even a remote that echoes it', async (t) => {
  t.setTimeout(180_000)
  const w = await remoteWorld(t)
  const hostile = await hostileRemote()
  t.teardown(() => hostile.close())
  const logLines: string[] = []
  const responses: Array<{ what: string; res: ApiResponse }> = []
  const dataDir = tempDir()
  const exercise = async (
    s: { request: (m: string, p: string, b?: unknown) => Promise<ApiResponse> },
    label: string,
  ) => {
    for (const [what, p] of [
      ['reconcile', s.request('POST', '/reconcile')],
      ['write', s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple(`Cred.${label}`))],
      ['status', s.request('GET', '/status')],
    ] as const)
      responses.push({ what: `${label} ${what}`, res: await p })
  }

  // A local copy first, from the real remote: the server then starts whatever the remote does.
  const first = await w.startServer({ dataDir, logLines })
  t.equal((await first.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple('Cred.First'))).status, 200)
  await first.close()

  // 1. A remote that repeats the credentials it received in its error.
  const echo = await w.startServer({ dataDir, logLines, env: { RULEKEEPER_GIT_URL: hostile.url('/rules.git') } })
  await exercise(echo, 'Echo')
  await echo.close()

  // 2. A wrong password against the real remote.
  const wrong = await w.startServer({ dataDir, logLines, env: { RULEKEEPER_GIT_TOKEN: WRONG_TOKEN } })
  await exercise(wrong, 'Wrong')
  await wrong.close()

  // 3. A host that refuses connections.
  await w.git.stop()
  const down = await w.startServer({ dataDir, logLines })
  await exercise(down, 'Down')
  await down.close()
  await w.git.start()

  // 4. A remote that never answers: look at every command line while git waits on it.
  const hang = await w.startServer({
    dataDir,
    logLines,
    env: { RULEKEEPER_GIT_URL: hostile.url('/hang/rules.git') },
    config: { git: { remote: { timeoutMs: 3000 } } },
  })
  const hungBefore = hostile.hung
  const hangingReconcile = hang.request('POST', '/reconcile')
  await waitFor('git to wait on the silent remote', () => hostile.hung > hungBefore, 20_000, 20)
  const lines = commandLines()
  const fetching = lines.filter((l) => l.includes('/hang/rules.git'))
  responses.push({ what: 'Hang reconcile', res: await hangingReconcile })
  responses.push({ what: 'Hang status', res: await hang.request('GET', '/status') })
  await hang.close()

  const status = (what: string) => responses.find((r) => r.what === what)!.res
  t.equal(status('Echo write').status, 503, 'the echoing remote: the write is refused')
  t.equal(status('Wrong write').status, 503, 'the wrong password: the write is refused')
  t.equal(status('Down write').status, 503, 'the host down: the write is refused')
  t.match(status('Echo status').body?.remote, { reachable: false }, 'the echoing remote is not a working remote')
  t.match(JSON.stringify(status('Wrong status').body), /refused the credentials/, 'the wrong password is named')
  t.match(status('Down write').body?.message, /cannot be reached: ECONNREFUSED/, 'the host down is named')
  t.equal(status('Hang reconcile').status, 200, 'the silent remote does not hold the reconcile')
  t.match(status('Hang status').body?.remote, { reachable: false }, 'the silent remote is unreachable')
  t.ok(fetching.length > 0, `git was seen fetching from the silent remote (${fetching.length} processes)`)
  t.ok(
    logLines.some((l) => l.includes('you sent')),
    'the echoing remote was heard: its words reached the log (redacted)',
  )

  const secrets: Array<[string, string]> = []
  for (const [name, tok] of [
    ['the git token', GIT_TOKEN],
    ['the wrong token', WRONG_TOKEN],
  ] as const) {
    secrets.push([name, tok])
    secrets.push([`${name}, URL-encoded`, encodeURIComponent(tok)])
    secrets.push([`${name} in the Basic value`, Buffer.from(`${GIT_USER}:${tok}`).toString('base64')])
  }
  const files = filesUnder(dataDir)
  for (const [name, secret] of secrets) {
    t.same(
      logLines.filter((l) => l.includes(secret)),
      [],
      `${name} is in no log line`,
    )
    t.same(
      responses.filter(({ res }) => res.text.includes(secret)).map((r) => r.what),
      [],
      `${name} is in no response`,
    )
    t.same(
      lines.filter((l) => l.includes(secret)),
      [],
      `${name} is on no command line`,
    )
    t.same(
      files.filter((f) => fs.readFileSync(f).includes(secret)),
      [],
      `${name} is in no file of the data directory`,
    )
  }
})
