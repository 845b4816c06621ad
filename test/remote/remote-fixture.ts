// Shared by the remote scenario tests: a smart-HTTP git server with a remote seeded from
// rules-repo-template/, a rulekeeper server in-process configured to follow it, signed webhooks,
// hand-written rule files, and bounded polling. Every server is stopped in t.teardown.
// Real port: a remote (the git server).
import { createHmac } from 'node:crypto'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  createGitHttpServer,
  createRemoteRepo,
  PersonClone,
  type GitHttpServer,
  type Person,
  type RemoteRepo,
} from '../helpers/git-http-server.js'
import { httpRequest, startTestServer, tempDir, type ApiResponse, type TestServer } from '../helpers/rulekeeper.js'
import { sleep, waitFor } from '../helpers/wait.js'

const TEMPLATE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../rules-repo-template')
export const GIT_USER = 'rk-bot'
export const GIT_TOKEN = 'ghp_TESTTOKEN_a1b2c3d4e5f6g7h8'
export const WEBHOOK_SECRET = 'whsec-test-0123456789'

export interface Tap {
  teardown(fn: () => unknown): void
}

export interface RemoteWorld {
  root: string
  git: GitHttpServer
  remote: RemoteRepo
  /** The env given to the rulekeeper server. */
  env: Record<string, string>
  /** Starts (another) rulekeeper server on `dataDir` (a fresh one when absent), closed at teardown. */
  startServer(opts?: {
    dataDir?: string
    env?: Record<string, string>
    config?: Record<string, unknown>
    logLines?: string[]
  }): Promise<TestServer>
  /** A clone of the remote (through the HTTP server, with the right credentials) as `person`. */
  clone(person: Person): Promise<PersonClone>
}

/** A git server requiring GIT_USER / GIT_TOKEN, serving `rules.git` seeded from the template. */
export async function remoteWorld(t: Tap): Promise<RemoteWorld> {
  const root = tempDir('rk-remote-root-')
  const git = await createGitHttpServer({ root, username: GIT_USER, password: GIT_TOKEN })
  t.teardown(() => git.stop())
  const remote = await createRemoteRepo(root, 'rules', TEMPLATE)
  const env = {
    RULEKEEPER_GIT_URL: git.url('rules'),
    RULEKEEPER_GIT_BRANCH: 'main',
    RULEKEEPER_GIT_USERNAME: GIT_USER,
    RULEKEEPER_GIT_TOKEN: GIT_TOKEN,
    RULEKEEPER_GIT_WEBHOOK_SECRET: WEBHOOK_SECRET,
  }
  return {
    root,
    git,
    remote,
    env,
    startServer: async (o = {}) => {
      const s = await startTestServer({
        dataDir: o.dataDir,
        env: { ...env, ...(o.env ?? {}) },
        config: o.config,
        logLines: o.logLines,
      })
      // Idempotent close: a test may close early (to restart on the same data dir); teardown closes too.
      const close = s.close
      let closing: Promise<void> | null = null
      s.close = () => (closing ??= close())
      t.teardown(() => s.close())
      return s
    },
    clone: (person) => PersonClone.clone(git.authUrl('rules'), person),
  }
}

export function hubSignature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
}

/** A GitHub-style push event for `after`, signed with `secret` (the right one by default). */
export function pushHook(
  s: TestServer,
  after: string,
  opts: { secret?: string; signature?: string | null } = {},
): Promise<ApiResponse> {
  const body = JSON.stringify({
    ref: 'refs/heads/main',
    after,
    repository: { full_name: 'example/rules' },
    pusher: { name: 'erin' },
  })
  const sig = opts.signature === undefined ? hubSignature(opts.secret ?? WEBHOOK_SECRET, body) : opts.signature
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'X-GitHub-Event': 'push',
    'X-GitHub-Delivery': `d-${after.slice(0, 8)}`,
  }
  if (sig !== null) headers['X-Hub-Signature-256'] = sig
  return httpRequest(s.url, 'POST', '/hooks/git', body, headers)
}

export { sleep, waitFor }

/** Waits until /status reports `rev` as the last applied revision; returns the status. */
export async function waitApplied(s: TestServer, rev: string, timeoutMs = 20_000): Promise<any> {
  return waitFor(
    `lastAppliedRevision ${rev}`,
    async () => {
      const st = await s.request('GET', '/status')
      return st.status === 200 && st.body?.lastAppliedRevision === rev ? st.body : undefined
    },
    timeoutMs,
  )
}

export function condition(
  status: any,
  type: string,
): { type: string; status: string; reason: string; message: string } | undefined {
  return (status?.conditions ?? []).find((c: { type: string }) => c.type === type)
}

/** A hand-written simple rule file (line numbers matter to the tests that use it: see below). */
export function simpleRuleYaml(id: string, description = `about ${id}`, condition = 'Equals'): string {
  return [
    'AnalysisType: rule', //                   line 1
    `RuleID: ${id}`, //                        line 2
    'Enabled: true', //                        line 3
    'LogTypes:', //                            line 4
    '  - AWS.CloudTrail', //                   line 5
    'Severity: Low', //                        line 6
    `Description: ${description}`, //          line 7
    'Detection:', //                           line 8
    '  - KeyPath: eventName', //               line 9
    `    Condition: ${condition}`, //          line 10
    '    Value: ConsoleLogin', //              line 11
    '',
  ].join('\n')
}

/** The `simple_rules/<group>/<id>.yml` path the API would choose for a simple dotted id. */
export function simplePath(id: string): string {
  return `simple_rules/${id.split('.')[0]!.toLowerCase()}/${id}.yml`
}
