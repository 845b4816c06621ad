// The server bench/attack-lag.ts measures: a `rulekeeper serve` of a given checkout in a child
// process (bench/attack-lag-entry.ts) on a temporary data directory, with known bootstrap and log
// source tokens; plus the few HTTP, git and CLI calls the attacks and the probe make against it.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'

const PORT_MARK = 'attack-lag-listening-on-port ' // written by attack-lag-entry.ts
const ENTRY = path.join(import.meta.dirname, 'attack-lag-entry.ts')
export const API_TOKEN = 'rk_attack_lag_bootstrap_token_0123456789abcdef'
export const AUDIT_TOKEN = 'rk_attack_lag_editor_audit_token_0123456789abcdef'
export const run = promisify(execFile)

export interface Server {
  url: string
  pid: number
  checkout: string
  dataDir: string
  stop(): Promise<void>
  output(): string
}

export async function startServer(checkout: string, dataDir: string, configFile?: string): Promise<Server> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--max-semi-space-size=64',
      // extra node flags for the server, e.g. ATTACK_LAG_SERVER_FLAGS='--max-old-space-size=512'
      ...(process.env.ATTACK_LAG_SERVER_FLAGS ?? '').split(/\s+/).filter((f) => f !== ''),
      '--import',
      'tsx',
      ENTRY,
    ],
    {
      env: {
        ...env,
        ATTACK_LAG_CHECKOUT: checkout,
        RULEKEEPER_DATA_DIR: dataDir,
        RULEKEEPER_HOST: '127.0.0.1',
        RULEKEEPER_PORT: '0',
        RULEKEEPER_BOOTSTRAP_TOKEN: API_TOKEN,
        RULEKEEPER_EDITOR_AUDIT_TOKEN: AUDIT_TOKEN,
        RULEKEEPER_LOG_LEVEL: 'warn',
        ...(configFile ? { RULEKEEPER_CONFIG: configFile } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  let out = ''
  const keep = (c: Buffer) => {
    out = (out + c.toString()).slice(-8192)
  }
  child.stdout!.on('data', keep)
  child.stderr!.on('data', keep)
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const killOnExit = () => child.kill('SIGKILL')
  process.on('exit', killOnExit)
  const deadline = Date.now() + 300_000
  let url: string | undefined
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`serve exited before answering:\n${out}`)
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`serve did not answer /healthz within 300 s:\n${out}`)
    }
    const m = new RegExp(`${PORT_MARK}(\\d+)\\n`).exec(out)
    if (m) url = `http://127.0.0.1:${m[1]}`
    if (url) {
      const ok = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) })
        .then(async (r) => {
          await r.arrayBuffer()
          return r.status === 200
        })
        .catch(() => false)
      if (ok) break
    }
    await new Promise((r) => setTimeout(r, 50)) // poll interval of a wait on a condition
  }
  return {
    url: url!,
    pid: child.pid!,
    checkout,
    dataDir,
    output: () => out,
    async stop() {
      child.kill('SIGTERM')
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000)
      await gone
      clearTimeout(t)
      process.off('exit', killOnExit)
    },
  }
}

export interface Answer {
  status: number
  text: string
  /** The parsed JSON answer (of either version of the API), null when not JSON. */
  body: any
}

/** One API call with the bootstrap token (or `token`); JSON in, JSON (or text) out. */
export async function api(
  s: Server,
  method: string,
  route: string,
  body?: unknown,
  token = API_TOKEN,
): Promise<Answer> {
  const res = await fetch(`${s.url}${route}`, {
    method,
    headers: { 'X-API-Key': token, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(600_000),
  })
  const text = await res.text()
  let parsed: unknown = null
  try {
    parsed = JSON.parse(text)
  } catch {
    /* not JSON */
  }
  return { status: res.status, text: text.slice(0, 500), body: parsed }
}

/** Posts NDJSON lines to the editor-audit webhook; resolves with the status. */
export async function postRecords(s: Server, lines: string[]): Promise<number> {
  const res = await fetch(`${s.url}/http/editor-audit`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${AUDIT_TOKEN}`, 'Content-Type': 'application/x-ndjson' },
    body: `${lines.join('\n')}\n`,
    signal: AbortSignal.timeout(600_000),
  })
  await res.arrayBuffer()
  return res.status
}

/** An Editor.Audit login record with this team_id, user and a unique metadata.id. */
export function auditLine(teamId: string, user: string): string {
  return JSON.stringify({
    ip_address: '203.0.113.9',
    team_id: teamId,
    user_email: user,
    metadata: {
      id: crypto.randomUUID(),
      timestamp: new Date().toISOString(),
      context: { auth_id: 'idp|lag', ghost_mode: false, request_id: `req_${teamId}` },
    },
    login: { login_type: 'LOGIN_TYPE_WEB', success: true },
  })
}

/** `rulekeeper token create` of the checkout on the server's data directory; the new secret. */
export async function createToken(s: Server, name: string, permissions: string): Promise<string> {
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', ENTRY, 'token', 'create', '--name', name, '--permissions', permissions],
    { env: { ...process.env, ATTACK_LAG_CHECKOUT: s.checkout, RULEKEEPER_DATA_DIR: s.dataDir } },
  )
  const secret = stdout.trim().split('\n').at(-1)!.trim()
  for (let i = 0; i < 200; i++) {
    if ((await api(s, 'GET', '/status', undefined, secret)).status !== 401) return secret
    await new Promise((r) => setTimeout(r, 100)) // wait until the server honours the new token
  }
  throw new Error('the new token was never honoured')
}

/** A value of /proc/<pid>/status in MiB (VmRSS, VmHWM). */
export async function procMiB(pid: number, key: string): Promise<number> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '')
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)
  return m ? Number(m[1]) / 1024 : Number.NaN
}

/** git with a fixed identity, in `cwd`. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const who = {
    GIT_AUTHOR_NAME: 'Pat',
    GIT_AUTHOR_EMAIL: 'pat@example.com',
    GIT_COMMITTER_NAME: 'Pat',
    GIT_COMMITTER_EMAIL: 'pat@example.com',
  }
  const { stdout } = await run('git', args, { cwd, env: { ...process.env, ...who }, maxBuffer: 64 << 20 })
  return stdout
}
