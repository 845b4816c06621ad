// The remote rules repository over smart HTTP(S), through isomorphic-git: fetch its branch into the
// local bare repository, push a commit as the new tip of that branch. Credentials come from the
// environment only (never on disk, never in logs or status: every URL shown is sanitized).
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import git from 'isomorphic-git'
import http from 'isomorphic-git/http/node'

export interface RemoteOptions {
  url: string
  branch: string
  username?: string
  token?: string
  /** Per-request timeout. */
  timeoutMs?: number
}

export type RemoteFailure = 'unreachable' | 'auth' | 'rejected'

export class RemoteError extends Error {
  constructor(
    readonly kind: RemoteFailure,
    message: string,
  ) {
    super(message)
  }
}

/** The URL without userinfo, query string or fragment: what logs and status may show. */
export function sanitizeUrl(raw: string): string {
  try {
    const u = new URL(raw)
    return `${u.protocol}//${u.host}${u.pathname}`
  } catch {
    return '(invalid URL)'
  }
}

const OUTGOING_REF = 'refs/rulekeeper/outgoing'

export class GitRemote {
  readonly displayUrl: string
  /** Outcome of the last fetch or push: null before the first one. */
  reachable: boolean | null = null
  lastError: RemoteError | null = null
  private readonly url: string
  private readonly username?: string
  private readonly token?: string

  constructor(
    private readonly gitdir: string,
    private readonly opts: RemoteOptions,
  ) {
    const u = new URL(opts.url)
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`the remote must be an http(s) URL, got ${u.protocol}`)
    // Userinfo in the URL is accepted as credentials but never kept in the URL we use or show.
    this.username = opts.username || decodeURIComponent(u.username) || undefined
    this.token = opts.token || decodeURIComponent(u.password) || undefined
    u.username = ''
    u.password = ''
    this.url = u.toString()
    this.displayUrl = sanitizeUrl(opts.url)
  }

  get branch(): string {
    return this.opts.branch
  }

  private auth() {
    const creds = this.username || this.token ? { username: this.username ?? 'x-access-token', password: this.token ?? '' } : undefined
    return {
      onAuth: () => creds ?? { cancel: true },
      // Never retry with the same credentials: a wrong token is reported once, not stormed.
      onAuthFailure: () => ({ cancel: true }),
    }
  }

  private record<T>(p: Promise<T>): Promise<T> {
    return p.then(
      (v) => {
        this.reachable = true
        this.lastError = null
        return v
      },
      (err: unknown) => {
        if (err instanceof RemoteError) {
          // A rejected push still reached the remote.
          this.reachable = err.kind !== 'unreachable'
          if (err.kind !== 'rejected') this.lastError = err
        }
        throw err
      },
    )
  }

  private classify(err: unknown): RemoteError {
    const e = err as { code?: string; name?: string; data?: { statusCode?: number }; message?: string; cause?: { code?: string } }
    const status = e.data?.statusCode
    if (e.code === 'UserCanceledError' || status === 401 || status === 403) {
      return new RemoteError('auth', `the remote refused the credentials (${status ?? 'authentication cancelled'}); check RULEKEEPER_GIT_USERNAME / RULEKEEPER_GIT_TOKEN`)
    }
    if (e.code === 'PushRejectedError' || e.code === 'GitPushError' || e.code === 'NotFoundError') {
      return new RemoteError('rejected', `the remote rejected the push: ${e.message ?? e.code}`)
    }
    const sys = e.code ?? e.cause?.code
    const reason = sys && /^E[A-Z]+$/.test(sys) ? sys : status ? `HTTP ${status}` : (e.message ?? 'unknown error').slice(0, 200)
    return new RemoteError('unreachable', `the remote ${this.displayUrl} cannot be reached: ${reason}`)
  }

  /** Fetches the branch; returns the remote tip (null for an empty remote). */
  fetch(): Promise<string | null> {
    return this.record(this.doFetch())
  }

  private configured = false

  /** isomorphic-git fetches through a named remote; its config holds the URL without credentials. */
  private async ensureRemoteConfig(): Promise<void> {
    if (this.configured) return
    await git.addRemote({ fs, gitdir: this.gitdir, remote: 'origin', url: this.url, force: true })
    this.configured = true
  }

  private async doFetch(): Promise<string | null> {
    await this.ensureRemoteConfig()
    try {
      const res = await git.fetch({
        fs,
        http,
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

  /** Pushes `commit` as the new tip of the remote branch (fast-forward only). */
  push(commit: string): Promise<void> {
    return this.record(this.doPush(commit))
  }

  private async doPush(commit: string): Promise<void> {
    const refFile = path.join(this.gitdir, OUTGOING_REF)
    await fsp.mkdir(path.dirname(refFile), { recursive: true })
    await fsp.writeFile(refFile, `${commit}\n`)
    try {
      await git.push({ fs, http, gitdir: this.gitdir, url: this.url, ref: OUTGOING_REF, remoteRef: `refs/heads/${this.opts.branch}`, ...this.auth() })
    } catch (err) {
      throw this.classify(err)
    } finally {
      await fsp.rm(refFile, { force: true })
    }
  }
}
