// The remote's branch fetched over smart HTTP(S) by the git binary: git streams the pack to disk,
// so a large file costs the server no memory (isomorphic-git holds the whole pack and inflates
// every object to index it). Credentials reach git only through its environment (a credential
// helper that prints two variables): never a command line, a file or a URL. git's words are
// sanitized (no URL userinfo, no secret) and mapped to our RemoteError kinds.
import { spawn } from 'node:child_process'
import { gitEnv } from './git-binary.js'
import { readRef } from './ref-cas.js'
import { RemoteError } from './remote-error.js'
import { redactRemoteText } from './remote-url.js'

export interface GitHttpFetchOptions {
  gitdir: string
  /** The http(s) URL without userinfo. */
  url: string
  /** The URL as logs and status show it. */
  displayUrl: string
  branch: string
  username?: string
  token?: string
  /** The transfer fails when the remote sends nothing for this long. */
  timeoutMs: number
  /** Another ref of the remote than the branch (a pull request's head), and where it goes here. */
  ref?: { source: string; target: string }
}

/** Prints the credentials git asks for from two variables of its own environment (no secret in the text). */
const CREDENTIAL_HELPER =
  '!f() { test "$1" = get && printf \'username=%s\\npassword=%s\\n\' "$RK_REMOTE_USERNAME" "$RK_REMOTE_PASSWORD"; true; }; f'

const STDERR_KEEP = 32 * 1024

interface FetchRun {
  code: number
  stderr: string
  /** Ended by the watchdog: git wrote nothing for this many ms. */
  silentMs: number | null
}

/** The environment of one fetch: no prompt, http(s) only, the idle limit and the credentials as config. */
function fetchEnv(o: GitHttpFetchOptions): NodeJS.ProcessEnv {
  const lowSpeedTime = Math.max(1, Math.ceil(o.timeoutMs / 1000))
  const config: Array<[string, string]> = [
    ['http.lowSpeedLimit', '1'],
    ['http.lowSpeedTime', String(lowSpeedTime)],
    // Objects this large are streamed by index-pack/unpack-objects instead of inflated in memory.
    ['core.bigFileThreshold', '16m'],
    ['gc.auto', '0'],
    ['maintenance.auto', 'false'],
    // An empty value drops every helper configured before; ours is the only one.
    ['credential.helper', ''],
  ]
  const env: NodeJS.ProcessEnv = {
    ...gitEnv(),
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '',
    GIT_ALLOW_PROTOCOL: 'http:https',
  }
  delete env.SSH_ASKPASS
  if (o.username || o.token) {
    config.push(['credential.helper', CREDENTIAL_HELPER])
    env.RK_REMOTE_USERNAME = o.username ?? 'x-access-token'
    env.RK_REMOTE_PASSWORD = o.token ?? ''
  }
  env.GIT_CONFIG_COUNT = String(config.length)
  config.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = k
    env[`GIT_CONFIG_VALUE_${i}`] = v
  })
  return env
}

/**
 * Runs `git fetch` of the branch into its tracking ref. With `--progress` git writes to stderr
 * while it works; a git silent for `idleMs` (a connect that never completes, which curl's
 * low-speed limit does not cover) is ended, with the helper processes it started.
 */
function runFetch(o: GitHttpFetchOptions, trackingRef: string, idleMs: number): Promise<FetchRun> {
  const args = [
    '--git-dir',
    o.gitdir,
    'fetch',
    '--progress',
    '--no-tags',
    '--no-write-fetch-head',
    '--no-recurse-submodules',
    '--no-auto-gc',
    o.url,
    `+${o.ref?.source ?? `refs/heads/${o.branch}`}:${trackingRef}`,
  ]
  return new Promise((resolve) => {
    const child = spawn('git', args, { env: fetchEnv(o), stdio: ['ignore', 'ignore', 'pipe'], detached: true })
    let stderr = ''
    let silentMs: number | null = null
    let timer: NodeJS.Timeout | undefined
    const arm = () => {
      clearTimeout(timer)
      timer = setTimeout(() => {
        silentMs = idleMs
        try {
          if (child.pid) process.kill(-child.pid, 'SIGTERM')
        } catch {
          // Already gone.
        }
      }, idleMs)
    }
    arm()
    child.stderr!.setEncoding('utf8')
    child.stderr!.on('data', (d: string) => {
      arm()
      stderr = (stderr + d).slice(-STDERR_KEEP)
    })
    child.on('error', (err) => {
      stderr += `\nfatal: ${err.message}`
    })
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code: code ?? 1, stderr, silentMs })
    })
  })
}

/** git's explanation, one line: its `fatal:`/`error:` line when there is one. */
function gitSays(stderr: string): string {
  const lines = stderr.split(/[\r\n]+/).map((l) => l.trim())
  const line =
    lines.find((l) => /^fatal:/.test(l)) ??
    lines.find((l) => /^error:/.test(l)) ??
    lines.filter((l) => l !== '').at(-1) ??
    ''
  return line.replace(/^(fatal|error):\s*/, '').slice(0, 300)
}

/** Why the remote could not be reached, in the words the isomorphic-git transport used. */
function unreachableReason(text: string): string {
  const http = /returned error: (\d{3})/.exec(text)?.[1]
  if (http) return `HTTP ${http}`
  if (/repository '[^']*' not found/i.test(text)) return 'HTTP 404'
  if (/connection refused/i.test(text)) return 'ECONNREFUSED'
  if (/could not resolve (host|proxy)/i.test(text)) return 'ENOTFOUND'
  if (/timed out|too slow/i.test(text)) return 'ETIMEDOUT'
  if (
    /connection reset|empty reply|recv failure|transfer closed|early eof|remote end hung up|unexpected disconnect/i.test(
      text,
    )
  )
    return 'ECONNRESET'
  if (/network is unreachable|no route to host|failed to connect|couldn't connect/i.test(text)) return 'EHOSTUNREACH'
  if (/ssl|tls|certificate/i.test(text)) return 'its TLS certificate or handshake was refused'
  if (
    /is this a git repository|invalid server response|protocol error|bad pack|dumb http|not a git repository/i.test(
      text,
    )
  )
    return 'it did not answer as a Git smart-HTTP server'
  return 'an unexpected answer'
}

/** A failed fetch in our own words (the kinds and messages of http-remote.ts's classification). */
export function fetchFailure(
  o: Pick<GitHttpFetchOptions, 'displayUrl' | 'username' | 'token'>,
  run: FetchRun,
): RemoteError {
  const text = redactRemoteText(run.stderr, o.username, o.token)
  const said = redactRemoteText(gitSays(run.stderr), o.username, o.token)
  if (run.silentMs !== null)
    return new RemoteError(
      'unreachable',
      `the remote ${o.displayUrl} cannot be reached: ETIMEDOUT`,
      `git said nothing for ${run.silentMs} ms`,
    )
  const denied = /authentication failed|could not read (username|password)|returned error: (401|403)/i
  if (denied.test(text)) {
    const status = /returned error: 403/.test(text)
      ? 403
      : /authentication failed|returned error: 401/i.test(text)
        ? 401
        : 'authentication cancelled'
    return new RemoteError(
      'auth',
      `the remote refused the credentials (${status}); check RULEKEEPER_GIT_USERNAME / RULEKEEPER_GIT_TOKEN`,
      said,
    )
  }
  return new RemoteError(
    'unreachable',
    `the remote ${o.displayUrl} cannot be reached: ${unreachableReason(text)}`,
    said || `git exited with ${run.code}`,
  )
}

/** Fetches the branch with the git binary; returns its tip (null when the remote has no such branch yet). */
export async function fetchWithGitBinary(o: GitHttpFetchOptions): Promise<string | null> {
  const trackingRef = o.ref?.target ?? `refs/remotes/origin/${o.branch}`
  const lowSpeedMs = Math.max(1, Math.ceil(o.timeoutMs / 1000)) * 1000
  const run = await runFetch(o, trackingRef, Math.max(2 * o.timeoutMs, lowSpeedMs + 2000))
  if (run.code !== 0 || run.silentMs !== null) {
    if (run.silentMs === null && /couldn't find remote ref/i.test(run.stderr)) return null
    throw fetchFailure(o, run)
  }
  // git exits 0 when it refuses to update the tracking ref: say so.
  const refused = run.stderr.split(/[\r\n]+/).find((l) => /\[rejected\]/i.test(l))
  if (refused) {
    const said = redactRemoteText(refused.trim(), o.username, o.token)
    throw new RemoteError('unreachable', `the remote ${o.displayUrl} cannot be read: ${said}`, said)
  }
  return readRef(o.gitdir, trackingRef)
}
