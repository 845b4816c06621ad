// A real `rulekeeper serve` to attack: started as root (with the interpreter pyenv keeps under
// /root) or as an ordinary user created for the test (with Debian's /usr/bin/python3), with a
// secret in its environment, an acknowledged audit record on disk and its bootstrap token read
// from the data directory. `attack()` posts a scheduled rule with ?run-tests-only=true (nothing is
// saved) whose one test expects `False`: the rule returns True when its attack worked, so a 204
// means the boundary held and a 400 names what got through.
// Real port: a second process (a real `rulekeeper serve`, as root or an ordinary user).
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, chownSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import type { Test } from 'tap'
import { dirname, join } from 'node:path'
import { startChild, type ChildServer } from '../helpers/child-server.js'
import { httpRequest, tempDir, type ApiResponse } from '../helpers/rulekeeper.js'

const ATTACK_USER = 'rk-attacker-test'

export interface Target {
  mode: 'root' | 'user'
  server: ChildServer
  dataDir: string
  token: string
  sourceToken: string
  secret: string
  /** The uid the server runs as. */
  uid: number
  attack(source: string, opts?: { expected?: boolean; name?: string }): Promise<ApiResponse>
  /** Hashes of every file under the data directory that must never change through an attack. */
  fingerprint(): Map<string, string>
}

export function isRoot(): boolean {
  return process.geteuid?.() === 0
}

/**
 * Why a server cannot be started as an ordinary user here, or undefined when it can: root is needed
 * to create the user, Debian's interpreter to run rules (the pyenv one under /root is out of its
 * reach), and the checkout must be reachable by other users (o+x on every parent folder).
 */
export function ordinaryUserUnavailable(): string | undefined {
  if (!isRoot()) return 'creating the test user needs root'
  if (!existsSync('/usr/bin/python3')) return '/usr/bin/python3 is not installed (.ci/run installs it)'
  for (let dir = dirname(import.meta.dirname); dir !== '/'; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0)
      return `${dir} is not reachable by other users (no o+x), so a server running as one cannot load this checkout`
  }
  return undefined
}

/** The uid of an ordinary user made for these tests (created once, kept: useradd is slow). */
function ordinaryUser(): number {
  try {
    return Number(execFileSync('id', ['-u', ATTACK_USER], { encoding: 'utf8' }).trim())
  } catch {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', ATTACK_USER])
    return Number(execFileSync('id', ['-u', ATTACK_USER], { encoding: 'utf8' }).trim())
  }
}

function chownTree(path: string, uid: number): void {
  chownSync(path, uid, uid)
  if (statSync(path).isDirectory()) for (const e of readdirSync(path)) chownTree(join(path, e), uid)
}

async function waitForFile(path: string, ms = 10_000): Promise<string> {
  const until = Date.now() + ms
  while (!existsSync(path)) {
    if (Date.now() > until) throw new Error(`${path} did not appear`)
    await new Promise((r) => setTimeout(r, 50)) // wait: poll interval of a wait on a condition
  }
  return readFileSync(path, 'utf8').trim()
}

const PROTECTED =
  /^(tokens\.json|bootstrap-token|log-sources\/.*|audit\/.*|repo\.git\/(HEAD|config|refs\/.*|packed-refs))$/

function walk(dir: string, base = ''): string[] {
  const out: string[] = []
  for (const e of readdirSync(join(dir, base), { withFileTypes: true })) {
    const rel = base ? `${base}/${e.name}` : e.name
    if (e.isDirectory()) out.push(...walk(dir, rel))
    else out.push(rel)
  }
  return out
}

export async function startTarget(
  mode: 'root' | 'user',
  opts: { wrap?: string[]; wrapFor?: (dataDir: string) => string[]; poolSize?: number } = {},
): Promise<Target> {
  // 'root' is the suite's own user (root when run as root); 'user' the ordinary user made for the test.
  const uid = mode === 'root' ? (process.getuid?.() ?? 0) : ordinaryUser()
  const dataDir = tempDir(`rk-attack-${mode}-`)
  const configFile = join(dataDir, '..', `${dataDir.split('/').pop()}.yaml`)
  const python = mode === 'root' ? 'python3' : '/usr/bin/python3'
  writeFileSync(configFile, `python:\n  command: ${python}\n  poolSize: ${opts.poolSize ?? 2}\n  timeoutMs: 4000\n`)
  chmodSync(configFile, 0o644)
  if (mode === 'user') chownTree(dataDir, uid)
  const secret = `rk-server-secret-${process.pid}-${Date.now()}`
  const server = await startChild({
    dataDir,
    uid: mode === 'user' ? uid : undefined,
    wrap: opts.wrap ?? opts.wrapFor?.(dataDir),
    env: { RULEKEEPER_CONFIG: configFile, RK_SERVER_SECRET: secret, HOME: dataDir },
  })
  const token = await waitForFile(join(dataDir, 'bootstrap-token'))
  const sourceToken = await waitForFile(join(dataDir, 'log-sources', 'editor-audit.token'))
  const target: Target = {
    mode,
    server,
    dataDir,
    token,
    sourceToken,
    secret,
    uid,
    attack: (source, o = {}) =>
      httpRequest(
        server.url,
        'POST',
        '/scheduled-rules?run-tests-only=true',
        {
          id: `Attack.${Math.random().toString(36).slice(2)}`,
          severity: 'LOW',
          body: source,
          tests: [{ name: o.name ?? 'the attack found nothing', expectedResult: o.expected ?? false, log: {} }],
        },
        { 'X-API-Key': token },
      ),
    fingerprint() {
      const prints = new Map<string, string>()
      for (const rel of walk(dataDir)) {
        if (!PROTECTED.test(rel)) continue
        prints.set(
          rel,
          createHash('sha256')
            .update(readFileSync(join(dataDir, rel)))
            .digest('hex'),
        )
      }
      return prints
    },
  }
  try {
    const record = readFileSync(
      join(import.meta.dirname, '..', '..', 'examples', 'editor-audit', 'valid.ndjson'),
      'utf8',
    ).split('\n')[0]!
    const status = await ingestRecord(target, record)
    if (status !== 200) throw new Error(`ingesting the audit record answered ${status}`)
  } catch (err) {
    // A failed start must not leave the server holding the test process open.
    await server.kill()
    throw err
  }
  return target
}

/** Posts one ND-JSON record to the audit log source (raw body). */
async function ingestRecord(target: Target, line: string): Promise<number> {
  const res = await fetch(`${target.server.url}/http/editor-audit`, {
    method: 'POST',
    headers: { authorization: `Bearer ${target.sourceToken}`, 'content-type': 'application/x-ndjson' },
    body: `${line}\n`,
  })
  await res.arrayBuffer()
  return res.status
}

/**
 * The checks every attack test shares: `held` posts `prelude + source` and expects 204 (the attack
 * found nothing), then `unharmed` checks that the server answers, that no protected file of the data
 * directory changed since the suite's start, and that no ref lock was planted.
 */
export function attackHarness(t: Test, target: () => Target, prelude: string) {
  const before = new Map<string, string>()
  t.before(() => {
    for (const [k, v] of target().fingerprint()) before.set(k, v)
  })
  const unharmed = async (t: Test) => {
    const s = target()
    const health = await fetch(`${s.server.url}/healthz`)
    await health.arrayBuffer()
    t.equal(health.status, 200, 'the server still answers')
    t.same(s.fingerprint(), before, 'no protected file changed')
    t.notOk(existsSync(join(s.dataDir, 'repo.git', 'refs', 'heads', 'main.lock')), 'no ref lock planted')
  }
  const held = async (t: Test, source: string, what: string) => {
    const res = await target().attack(prelude + source)
    t.equal(res.status, 204, `${what}${res.status !== 204 ? `: ${JSON.stringify(res.body)}` : ''}`)
    await unharmed(t)
  }
  return { held, unharmed }
}
