// A real `rulekeeper serve` in a child process for the Python detection benches: Python content
// (python-content.ts) committed with plain git to its repository and reconciled, the API and the
// Editor.Audit log source reached over HTTP, and the detector's progress read from GET /status.
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { startChild, type ChildServer } from '../test/helpers/child-server.js'
import { type ExtraRule, writePythonContent } from './python-content.js'

export const SOURCE_TOKEN = 'bench-python-source-token'
export const API_TOKEN = 'rk-bench-python-detection-bootstrap-token-01'

export interface PythonServer {
  child: ChildServer
  dataDir: string
  /** A request with the bootstrap token (every permission); throws unless 200. */
  api(method: string, p: string, body?: unknown): Promise<any>
  /** Posts NDJSON records to the Editor.Audit source; the number accepted. */
  ingest(records: readonly Record<string, unknown>[]): Promise<number>
  /** The detector's committed checkpoint (records evaluated since the data directory was made). */
  evaluated(): Promise<number>
  /** Waits until detection has committed `records` records; false if `timeoutMs` passed first. */
  waitEvaluated(records: number, timeoutMs: number): Promise<boolean>
  close(): Promise<void>
}

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, {
    cwd,
    stdio: 'ignore',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'Bench',
      GIT_AUTHOR_EMAIL: 'bench@example.com',
      GIT_COMMITTER_NAME: 'Bench',
      GIT_COMMITTER_EMAIL: 'bench@example.com',
    },
  })
}

/**
 * Starts a server on a fresh data directory under `tmpDir`, removes the template's rules on the
 * log type (its simple rules and the correlation rule over them), commits the data model, the
 * helper, rules 0 … rules-1 and `extra` to its repository with plain git and reconciles (every file
 * must be valid): detection runs exactly these Python rules, or none.
 */
export async function startPythonServer(
  tmpDir: string,
  name: string,
  rules: number,
  extra: ExtraRule[] = [],
): Promise<PythonServer> {
  const dataDir = path.join(tmpDir, name)
  const child = await startChild({
    dataDir,
    env: { RULEKEEPER_BOOTSTRAP_TOKEN: API_TOKEN, RULEKEEPER_EDITOR_AUDIT_TOKEN: SOURCE_TOKEN },
    timeoutMs: 120_000,
  })
  const api = async (method: string, p: string, body?: unknown): Promise<any> => {
    const res = await fetch(`${child.url}${p}`, {
      method,
      headers: { 'X-API-Key': API_TOKEN, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    })
    const text = await res.text()
    if (res.status !== 200) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 500)}`)
    return p === '/metrics' ? text : JSON.parse(text)
  }
  const evaluated = async () => (await api('GET', '/status')).detection.checkpoint.records as number
  const server: PythonServer = {
    child,
    dataDir,
    api,
    async ingest(records) {
      const res = await fetch(`${child.url}/http/editor-audit`, {
        method: 'POST',
        headers: { authorization: `Bearer ${SOURCE_TOKEN}`, 'content-type': 'application/x-ndjson' },
        body: records.map((r) => JSON.stringify(r)).join('\n'),
      })
      const text = await res.text()
      if (res.status !== 200) throw new Error(`ingest: ${res.status} ${text.slice(0, 300)}`)
      return JSON.parse(text).accepted as number
    },
    evaluated,
    async waitEvaluated(records, timeoutMs) {
      const deadline = Date.now() + timeoutMs
      while ((await evaluated()) < records) {
        if (Date.now() > deadline) return false
        await sleep(50) // wait: poll interval of a wait on a condition
      }
      return true
    },
    close: () => child.kill(),
  }
  try {
    {
      const work = path.join(tmpDir, `${name}-work`)
      execFileSync('git', ['clone', '-q', path.join(dataDir, 'repo.git'), work])
      git(work, 'rm', '-r', '-q', 'simple_rules', 'correlation_rules')
      await writePythonContent(work, rules, 3, extra)
      git(work, 'add', '-A')
      git(work, 'commit', '-q', '-m', `Add ${rules} Python rules`)
      git(work, 'push', '-q', 'origin', 'HEAD:main')
      const rec = await api('POST', '/reconcile')
      if ((rec.invalidFiles ?? []).length > 0)
        throw new Error(`invalid files: ${JSON.stringify(rec.invalidFiles).slice(0, 500)}`)
    }
  } catch (err) {
    await child.kill()
    throw new Error(
      `${err instanceof Error ? err.message : String(err)}; the server's last output: ${child.output().slice(-1500)}`,
      {
        cause: err,
      },
    )
  }
  return server
}
