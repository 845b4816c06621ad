// The remote rules repository over smart HTTP(S): fetch its branch into the local bare repository
// with the git binary (http-fetch.ts: streamed to disk), or through isomorphic-git when git is not
// installed (it holds the pack in memory); push a commit as the new tip of that branch through
// isomorphic-git. Credentials come from the environment only (never on disk, never in logs or
// status: every URL shown is sanitized).
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import git from 'isomorphic-git'
import nodeHttp from 'isomorphic-git/http/node'
import type { HttpClient } from 'isomorphic-git'
import { gitBinaryAvailable } from './git-binary.js'
import { fetchWithGitBinary } from './http-fetch.js'
import { LOST_RACE, REFUSED, RemoteError } from './remote-error.js'
import { redactRemoteText, sanitizeUrl } from './remote-url.js'

export interface HttpRemoteOptions {
  url: string
  branch: string
  username?: string
  token?: string
  /** A request fails when the remote sends nothing for this long (default 30 s). */
  timeoutMs?: number
}

const OUTGOING_REF = 'refs/rulekeeper/outgoing'
const ZERO_OID = '0000000000000000000000000000000000000000'

/**
 * isomorphic-git's Node client with an explicit idle timeout: after `timeoutMs` without a byte
 * simple-get (under the client) aborts the request (ETIMEDOUT before the answer starts, a reset
 * while it streams): either way `unreachable`, a 503 for a write.
 * Without it Node 20's global agent drops any socket idle for 5 s, which fails a healthy remote
 * that takes longer to compute a large pack, while a shorter bound is what a stuck remote needs.
 */
function httpWithTimeout(timeoutMs: number): HttpClient {
  return {
    request: (req) =>
      nodeHttp
        .request({
          ...req,
          fetchOptions: { ...(req as { fetchOptions?: object }).fetchOptions, timeout: timeoutMs },
        } as typeof req)
        .catch((err: Error & { code?: string }) => {
          if (!err.code && /timed out/i.test(err.message)) err.code = 'ETIMEDOUT'
          throw err
        }),
  }
}

export class HttpTransport {
  readonly displayUrl: string
  private readonly url: string
  private readonly http: HttpClient
  private readonly username?: string
  private readonly token?: string
  private readonly timeoutMs: number

  constructor(
    private readonly gitdir: string,
    private readonly opts: HttpRemoteOptions,
  ) {
    const u = new URL(opts.url)
    // Userinfo in the URL is accepted as credentials but never kept in the URL we use or show.
    this.username = opts.username || decodeURIComponent(u.username) || undefined
    this.token = opts.token || decodeURIComponent(u.password) || undefined
    u.username = ''
    u.password = ''
    this.url = u.toString()
    this.displayUrl = sanitizeUrl(opts.url)
    this.timeoutMs = opts.timeoutMs ?? 30_000
    this.http = httpWithTimeout(this.timeoutMs)
  }

  private auth() {
    const creds =
      this.username || this.token
        ? { username: this.username ?? 'x-access-token', password: this.token ?? '' }
        : undefined
    return {
      onAuth: () => creds ?? { cancel: true },
      // Never retry with the same credentials: a wrong token is reported once, not stormed.
      onAuthFailure: () => ({ cancel: true }),
    }
  }

  /** What the remote or the library said, fit for the log (a hostile remote may echo the token). */
  private redact(text: string): string {
    return redactRemoteText(text, this.username, this.token)
  }

  /** Our own words for a failure (the library's wording never reaches a caller). */
  private classify(err: unknown): RemoteError {
    const e = err as {
      code?: string
      name?: string
      data?: { statusCode?: number; prettyDetails?: string }
      message?: string
      cause?: { code?: string }
    }
    const status = e.data?.statusCode
    const branch = this.opts.branch
    if (e.code === 'UserCanceledError' || status === 401 || status === 403) {
      return new RemoteError(
        'auth',
        `the remote refused the credentials (${status ?? 'authentication cancelled'}); check RULEKEEPER_GIT_USERNAME / RULEKEEPER_GIT_TOKEN`,
      )
    }
    if (e.code === 'PushRejectedError' || e.code === 'NotFoundError') {
      // Checked before sending: the tip the remote advertised is not under our commit.
      return new RemoteError(
        'rejected',
        `the remote branch ${branch} moved on before our push arrived (not a fast-forward)`,
      )
    }
    if (e.code === 'GitPushError') {
      const said = this.redact(e.data?.prettyDetails ?? '')
        .replace(/\s+/g, ' ')
        .trim()
        .slice(0, 300)
      // The server's ref update lost a race with another push, or the server declined it for good.
      if (!LOST_RACE.test(said) && REFUSED.test(said)) {
        return new RemoteError(
          'refused',
          `the remote declined the update of branch ${branch} (a server-side hook or branch protection); check what the remote allows this account`,
          said,
        )
      }
      return new RemoteError(
        'rejected',
        `the remote branch ${branch} was updated by someone else while our push arrived`,
        said,
      )
    }
    const sys = e.code ?? e.cause?.code
    let reason: string
    if (sys && /^E[A-Z]+$/.test(sys)) reason = sys
    else if (status) reason = `HTTP ${status}`
    else if (sys === 'SmartHttpError') reason = 'it did not answer as a Git smart-HTTP server'
    else if (sys === 'UrlParseError' || sys === 'UnknownTransportError') reason = 'the URL is not usable'
    else if (sys === 'EmptyServerResponseError' || sys === 'ParseError') reason = 'its answer was empty or malformed'
    else reason = sys && /^[A-Za-z]+Error$/.test(sys) ? `an unexpected answer (${sys})` : 'an unexpected answer'
    return new RemoteError(
      'unreachable',
      `the remote ${this.displayUrl} cannot be reached: ${reason}`,
      sys ? `${sys}: ${this.redact(e.message ?? '').slice(0, 200)}` : undefined,
    )
  }

  private configured = false

  /** isomorphic-git fetches through a named remote; its config holds the URL without credentials. */
  private async ensureRemoteConfig(): Promise<void> {
    if (this.configured) return
    await git.addRemote({ fs, gitdir: this.gitdir, remote: 'origin', url: this.url, force: true })
    this.configured = true
  }

  /** Fetches the branch; returns the remote tip (null for an empty remote). */
  async fetch(): Promise<string | null> {
    if (gitBinaryAvailable()) return this.fetchWithGit()
    return this.fetchInProcess()
  }

  /** The git binary's fetch of the branch, or of `ref` (another ref of the remote into a local one). */
  private fetchWithGit(ref?: { source: string; target: string }): Promise<string | null> {
    return fetchWithGitBinary({
      gitdir: this.gitdir,
      url: this.url,
      displayUrl: this.displayUrl,
      branch: this.opts.branch,
      username: this.username,
      token: this.token,
      timeoutMs: this.timeoutMs,
      ...(ref ? { ref } : {}),
    })
  }

  /** Fetches another ref of the remote (a pull request's head) into `target`; its tip, or null. */
  async fetchRef(source: string, target: string): Promise<string | null> {
    if (!gitBinaryAvailable())
      throw new RemoteError('unreachable', 'fetching a pull request needs the git binary', 'git is not installed')
    return this.fetchWithGit({ source, target })
  }

  /** Without the git binary: isomorphic-git's fetch (the whole pack, inflated, in memory). */
  private async fetchInProcess(): Promise<string | null> {
    await this.ensureRemoteConfig()
    try {
      const res = await git.fetch({
        fs,
        http: this.http,
        gitdir: this.gitdir,
        remote: 'origin',
        url: this.url,
        ref: this.opts.branch,
        remoteRef: this.opts.branch,
        singleBranch: true,
        tags: false,
        ...this.auth(),
      })
      return res.fetchHead ?? null
    } catch (err) {
      const e = err as { code?: string; data?: { statusCode?: number } }
      // An empty remote has no branch to fetch yet.
      if (e.code === 'NotFoundError' && !e.data?.statusCode) return null
      throw this.classify(err)
    }
  }

  /** Pushes `commit` as the new tip (fast-forward only; with `expected`, only over that tip). */
  async push(commit: string, expected?: string | null): Promise<void> {
    const refFile = path.join(this.gitdir, OUTGOING_REF)
    await fsp.mkdir(path.dirname(refFile), { recursive: true })
    await fsp.writeFile(refFile, `${commit}\n`)
    let movedTo: string | null = null
    const onPrePush =
      expected === undefined
        ? undefined
        : ({ remoteRef }: { remoteRef: { oid: string } }) => {
            if (remoteRef.oid === (expected ?? ZERO_OID)) return true
            movedTo = remoteRef.oid
            return false
          }
    try {
      await git.push({
        fs,
        http: this.http,
        gitdir: this.gitdir,
        url: this.url,
        ref: OUTGOING_REF,
        remoteRef: `refs/heads/${this.opts.branch}`,
        onPrePush,
        ...this.auth(),
      })
    } catch (err) {
      if (movedTo !== null)
        throw new RemoteError(
          'rejected',
          `the remote branch ${this.opts.branch} moved on before our push arrived (not a fast-forward)`,
        )
      throw this.classify(err)
    } finally {
      await fsp.rm(refFile, { force: true })
    }
  }
}
