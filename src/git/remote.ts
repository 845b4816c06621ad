// The remote rules repository, whatever reaches it: smart HTTP(S) (http-remote.ts: fetched with the
// git binary, pushed through isomorphic-git), or a repository on this machine through the git
// binary (local-remote.ts).
// Fetch its branch into the local bare repository, push a commit as the new tip of that branch,
// and keep what the last attempt said (reachable, the last error) for /status.
import { HttpTransport } from './http-remote.js'
import { LocalTransport } from './local-remote.js'
import { RemoteError } from './remote-error.js'
import { parseRemoteLocation, REMOTE_SETTING } from './remote-url.js'

export { RemoteError, type RemoteFailure } from './remote-error.js'

export interface RemoteOptions {
  /** An http(s) URL, a local path or a file:// URL (remote-url.ts). */
  url: string
  branch: string
  /** HTTP only: credentials (a local repository takes none). */
  username?: string
  token?: string
  /** HTTP only: a request fails when the remote sends nothing for this long (default 30 s). */
  timeoutMs?: number
  /** What a relative local path is resolved against (default: the working directory). */
  cwd?: string
  /** How messages name the setting the remote came from (default: git.remote.url). */
  setting?: string
}

interface Transport {
  readonly displayUrl: string
  fetch(): Promise<string | null>
  fetchRef(source: string, target: string): Promise<string | null>
  push(commit: string, expected?: string | null): Promise<void>
}

export class GitRemote {
  readonly displayUrl: string
  /** Outcome of the last fetch or push: null before the first one. */
  reachable: boolean | null = null
  lastError: RemoteError | null = null
  private readonly transport: Transport
  private readonly local: LocalTransport | null

  constructor(
    gitdir: string,
    private readonly opts: RemoteOptions,
  ) {
    const setting = opts.setting ?? REMOTE_SETTING
    const where = parseRemoteLocation(opts.url, opts.cwd ?? process.cwd(), setting)
    if (where.kind === 'local') {
      this.local = new LocalTransport(gitdir, where.path, opts.branch, setting)
      this.transport = this.local
    } else {
      this.local = null
      this.transport = new HttpTransport(gitdir, { ...opts, url: where.url })
    }
    this.displayUrl = this.transport.displayUrl
  }

  get branch(): string {
    return this.opts.branch
  }

  /**
   * Checks, before the first fetch, what can be checked without the network: a local repository
   * must exist and take our pushes (a RulekeeperError ConfigInvalid saying what to do). Returns
   * notes for the start-up log. `writes` false: it will only be read (no check of its pushes).
   */
  async verify(writes = true): Promise<string[]> {
    if (!this.local) return []
    const notes = await this.local.verify(writes)
    if (this.opts.username || this.opts.token)
      notes.push('RULEKEEPER_GIT_USERNAME / RULEKEEPER_GIT_TOKEN are ignored: the remote is a local repository')
    return notes
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

  /** Fetches the branch; returns the remote tip (null for an empty remote). */
  fetch(): Promise<string | null> {
    return this.record(this.transport.fetch())
  }

  /** Fetches another ref of the remote (a pull request's head) into the local ref `target`; its tip, or null. */
  fetchRef(source: string, target: string): Promise<string | null> {
    // Not recorded: a pull request's fetch says nothing of the served branch's remote health.
    return this.transport.fetchRef(source, target)
  }

  /**
   * Pushes `commit` as the new tip of the remote branch (fast-forward only). With `expected` (the
   * remote tip the commit was built on, null for none), a remote that moved elsewhere is a
   * `rejected` push, found before any object is sent.
   */
  push(commit: string, expected?: string | null): Promise<void> {
    return this.record(this.transport.push(commit, expected))
  }
}
