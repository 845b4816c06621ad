// Test fixture: a real rulekeeper server on 127.0.0.1 (port 0) with its own temporary data
// directory, a bootstrap token, helpers to make more tokens, and a small JSON HTTP client.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { pino } from 'pino'
import { startServer, type RunningServer, type StartOptions } from '../../src/main.js'
import { TokenStore, type Permission } from '../../src/auth/token-store.js'

export interface TestServer {
  server: RunningServer
  url: string
  dataDir: string
  gitdir: string
  /** Bootstrap token: View Rules + Manage Rules. */
  token: string
  /** Creates a token beside the running server (as the CLI does) and waits until it is honoured. */
  makeToken(name: string, permissions: Permission[]): Promise<string>
  request(method: string, urlPath: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse>
  git(...args: string[]): string
  close(): Promise<void>
}

export interface ApiResponse {
  status: number
  headers: Headers
  body: any
  text: string
}

export function tempDir(prefix = 'rk-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix))
}

/** A response body parsed as JSON, or undefined when it is empty or not JSON. */
export function parseJsonOrUndefined(text: string): any {
  try {
    return text ? JSON.parse(text) : undefined
  } catch {
    return undefined
  }
}

export async function httpRequest(
  base: string,
  method: string,
  urlPath: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<ApiResponse> {
  const init: RequestInit = { method, headers: { ...headers } }
  if (body !== undefined) {
    init.body = typeof body === 'string' || body instanceof Uint8Array ? (body as string) : JSON.stringify(body)
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
      (init.headers as Record<string, string>)['Content-Type'] = 'application/json'
  }
  const res = await fetch(`${base}${urlPath}`, init)
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: parseJsonOrUndefined(text), text }
}

function hostEnv(): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && (k === 'PATH' || k === 'HOME' || k.startsWith('PYENV'))) out[k] = v
  return out
}

export interface TestServerOptions {
  dataDir?: string
  config?: Record<string, unknown>
  env?: Record<string, string>
  engines?: StartOptions['engines']
  logLines?: string[]
  /** The correlation schedule's clock and minute length. */
  correlationSchedule?: StartOptions['correlationSchedule']
  scheduledQueries?: StartOptions['scheduledQueries']
  /** Any other start option, given as is (e.g. a stand-in evaluator). */
  start?: Partial<StartOptions>
}

/** What a test's service is started with (startTestServer here, startInProcess in in-process.ts). */
export function testStartOptions(opts: TestServerOptions, dataDir: string): StartOptions {
  const lines = opts.logLines
  const logger = pino(
    { level: lines ? 'info' : 'silent' },
    lines ? { write: (s: string) => void lines.push(s) } : undefined,
  )
  return {
    // The server finds python3 on PATH (pyenv needs HOME and PYENV_*); nothing else leaks in.
    env: { ...hostEnv(), RULEKEEPER_DATA_DIR: dataDir, ...(opts.env ?? {}) },
    configOverrides: {
      server: { host: '127.0.0.1', port: 0 },
      reconcile: { schedule: '0 0 1 1 *' },
      ...(opts.config ?? {}),
    },
    logger,
    defaultMetrics: false,
    engines: opts.engines,
    correlationSchedule: opts.correlationSchedule,
    scheduledQueries: opts.scheduledQueries,
    ...opts.start,
  }
}

/** The bootstrap token of a started test service: the one given in the env, or the one it wrote. */
export function bootstrapToken(opts: TestServerOptions, dataDir: string): string {
  return opts.env?.RULEKEEPER_BOOTSTRAP_TOKEN ?? fs.readFileSync(path.join(dataDir, 'bootstrap-token'), 'utf8').trim()
}

/** How long makeTokenBeside waits for a new token to be honoured. */
const HONOURED_WITHIN_MS = 10_000

/**
 * Creates a token beside the service (as the CLI does) and waits until `GET <base>/status` honours it.
 * This only prepares a test, so its deadline is generous (a loaded machine may delay the server's
 * reload of the token file, every api.tokenReloadMs); the reload latency itself is asserted by
 * test/cli/cli.test.ts (create and revoke honoured within a second) and
 * test/security/whoami-attacks.test.ts (a revocation within the reload interval).
 */
export async function makeTokenBeside(
  tokens: TokenStore,
  basePath: string,
  send: (urlPath: string, headers: Record<string, string>) => Promise<ApiResponse>,
  name: string,
  permissions: Permission[],
): Promise<string> {
  const secret = tokens.create({ name, permissions }).secret
  const deadline = Date.now() + HONOURED_WITHIN_MS
  for (;;) {
    const base = basePath.replace(/\/+$/, '')
    const res = await send(`${base}/status`, { 'X-API-Key': secret })
    if (res.status !== 401) return secret
    if (Date.now() > deadline) throw new Error(`a new token was not honoured within ${HONOURED_WITHIN_MS / 1000} s`)
    await new Promise((r) => setTimeout(r, 50)) // wait: poll interval of a wait on a condition
  }
}

export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = opts.dataDir ?? tempDir()
  const server = await startServer(testStartOptions(opts, dataDir))
  const token = bootstrapToken(opts, dataDir)
  const gitdir = path.join(dataDir, 'repo.git')
  const tokens = new TokenStore(dataDir)
  return {
    server,
    url: server.url,
    dataDir,
    gitdir,
    token,
    makeToken: (name, permissions) =>
      makeTokenBeside(
        tokens,
        server.config.api.basePath,
        (urlPath, headers) => httpRequest(server.url, 'GET', urlPath, undefined, headers),
        name,
        permissions,
      ),
    request: (method, urlPath, body, headers = {}) =>
      httpRequest(server.url, method, urlPath, body, { 'X-API-Key': token, ...headers }),
    git: (...args) => execFileSync('git', ['--git-dir', gitdir, ...args], { encoding: 'utf8' }),
    close: () => server.close(),
  }
}

/** Every (method, path) of a service's routers, HEAD included, as mounted on its Koa app. */
export function routeTable(app: RunningServer['app']): Array<{ method: string; path: string }> {
  const out: Array<{ method: string; path: string }> = []
  // `router.routes()` returns a dispatch function that carries its router.
  for (const mw of app.middleware as Array<{
    router?: { stack: Array<{ methods: string[]; path: unknown }> }
  }>) {
    for (const layer of mw.router?.stack ?? [])
      for (const method of layer.methods) out.push({ method, path: String(layer.path) })
  }
  return out
}

/** A valid write body for each kind (with passing tests where the kind's engine exists). */
export const SAMPLE_BODIES = {
  simple: (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    severity: 'HIGH',
    displayName: `Rule ${id}`,
    logTypes: ['AWS.CloudTrail'],
    detection: '- KeyPath: eventName\n  Condition: Equals\n  Value: ConsoleLogin\n',
    tests: [
      { name: 'console login', expectedResult: true, log: { eventName: 'ConsoleLogin' } },
      { name: 'other', expectedResult: false, log: { eventName: 'GetObject' } },
    ],
    ...extra,
  }),
  scheduled: (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    severity: 'MEDIUM',
    scheduledQueries: ['Editor.Audit.AdminGrants.Hourly'],
    body: 'def rule(event):\n    return event.get("grants", 0) > 1\n',
    ...extra,
  }),
  python: (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    severity: 'LOW',
    displayName: `Rule ${id}`,
    logTypes: ['Editor.Audit'],
    body: 'def rule(event):\n    return event.get("action") == "delete"\n\n\ndef title(event):\n    return f"deleted by {event.get(\'user\')}"\n',
    tests: [
      { name: 'a deletion', expectedResult: true, log: { action: 'delete', user: 'kim' } },
      { name: 'a creation', expectedResult: false, log: { action: 'create', user: 'kim' } },
    ],
    ...extra,
  }),
  policy: (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    severity: 'MEDIUM',
    displayName: `Policy ${id}`,
    resourceTypes: ['AWS.S3.Bucket'],
    body: 'def policy(resource):\n    return resource.get("Versioning") == "Enabled"\n\n\ndef title(resource):\n    return f"bucket {resource.get(\'Name\')} is not versioned"\n',
    tests: [
      { name: 'versioned', expectedResult: true, resource: { Name: 'logs', Versioning: 'Enabled' } },
      { name: 'not versioned', expectedResult: false, resource: { Name: 'logs', Versioning: 'Suspended' } },
    ],
    ...extra,
  }),
  scheduledQuery: (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    enabled: true,
    description: `Query ${id}`,
    query: "SELECT user_email, COUNT(*) AS n FROM editor_audit WHERE p_occurs_since('1 hour') GROUP BY 1",
    schedule: { RateMinutes: 60, TimeoutMinutes: 5 },
    ...extra,
  }),
  savedQuery: (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    description: `Query ${id}`,
    query: 'SELECT p_event_time, user_email FROM panther_logs.public.editor_audit ORDER BY p_event_time DESC',
    ...extra,
  }),
  correlation: (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    severity: 'HIGH',
    detection:
      '- Sequence:\n    - ID: Failures\n      RuleID: Editor.Audit.LoginFailed\n    - ID: Success\n      RuleID: Editor.Audit.LoginSucceeded\n  Transitions:\n    - ID: Failures FOLLOWED BY Success\n      From: Failures\n      To: Success\n      WithinTimeFrameMinutes: 30\n      Match:\n        - On: p_alert_context.actor\n  LookbackWindowMinutes: 60\n  Schedule:\n    RateMinutes: 60\n    TimeoutMinutes: 5\n',
    tests: [
      {
        name: 'failure then success',
        expectedResult: true,
        ruleOutputs: [
          { id: 'Failures', matches: { 'p_alert_context.actor': { 'a@example.com': [0] } } },
          { id: 'Success', matches: { 'p_alert_context.actor': { 'a@example.com': [5] } } },
        ],
      },
    ],
    ...extra,
  }),
}
