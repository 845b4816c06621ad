// Test fixture: a real smart-HTTP Git server on 127.0.0.1 — the real `git http-backend` behind a
// small node:http CGI bridge (no shell) — with optional HTTP Basic auth, pushes enabled, a request
// counter, and stop/start on the same port; plus helpers to make bare "remote" repositories and to
// clone, commit and push as a named person with the real git CLI (always async: never block the loop).
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import { type Person, personEnv } from './git-as.js'

interface GitRequestRecord {
  method: string
  path: string
  query: string
  status: number
  user: string | null
}

export interface GitHttpServer {
  /** The port, fixed at first start and reused by every later start(). */
  readonly port: number
  /** Every HTTP request received since creation (including refused 401s). */
  readonly requests: number
  /** One record per answered request, in order. */
  readonly log: GitRequestRecord[]
  /** `http://127.0.0.1:<port>/<name>.git`, without credentials. */
  url(repoName: string): string
  /** The same URL with `user:password@` in it (for the test's own git client only). */
  authUrl(repoName: string, username?: string, password?: string): string
  /** Listens again on the same port after stop(). */
  start(): Promise<void>
  /** Stops listening and drops every connection: later connections are refused. */
  stop(): Promise<void>
}

const GIT_ENV_BASE: Record<string, string> = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  GIT_ASKPASS: '',
  SSH_ASKPASS: '',
}

function repoFileName(name: string): string {
  return name.endsWith('.git') ? name : `${name}.git`
}

export async function createGitHttpServer(opts: {
  root: string
  username?: string
  password?: string
}): Promise<GitHttpServer> {
  const root = path.resolve(opts.root)
  const log: GitRequestRecord[] = []
  const children = new Set<ChildProcess>()
  let requests = 0
  let port = 0
  const auth =
    opts.username !== undefined || opts.password !== undefined
      ? { user: opts.username ?? '', pass: opts.password ?? '' }
      : null

  const server = http.createServer((req, res) => {
    requests++
    const u = new URL(req.url ?? '/', 'http://127.0.0.1')
    let user: string | null = null
    if (auth) {
      const m = /^Basic\s+(.+)$/i.exec(req.headers.authorization ?? '')
      const decoded = m ? Buffer.from(m[1]!, 'base64').toString('utf8') : null
      const colon = decoded ? decoded.indexOf(':') : -1
      const ok =
        decoded !== null &&
        colon >= 0 &&
        decoded.slice(0, colon) === auth.user &&
        decoded.slice(colon + 1) === auth.pass
      if (!ok) {
        log.push({ method: req.method ?? '', path: u.pathname, query: u.search, status: 401, user: null })
        req.resume()
        res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"', 'Content-Type': 'text/plain' })
        res.end('authentication required\n')
        return
      }
      user = auth.user
    }
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      ...GIT_ENV_BASE,
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      // Pushes are allowed whether or not the served repository says so.
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.receivepack',
      GIT_CONFIG_VALUE_0: 'true',
      GATEWAY_INTERFACE: 'CGI/1.1',
      SERVER_PROTOCOL: `HTTP/${req.httpVersion}`,
      REQUEST_METHOD: req.method ?? 'GET',
      PATH_INFO: decodeURIComponent(u.pathname),
      QUERY_STRING: u.search.replace(/^\?/, ''),
      REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
    }
    if (user !== null) env.REMOTE_USER = user
    if (req.headers['content-type']) env.CONTENT_TYPE = req.headers['content-type']
    if (req.headers['content-length']) env.CONTENT_LENGTH = req.headers['content-length']
    // git http-backend inflates gzip request bodies itself when told the encoding.
    if (req.headers['content-encoding']) env.HTTP_CONTENT_ENCODING = String(req.headers['content-encoding'])
    if (req.headers['git-protocol']) env.HTTP_GIT_PROTOCOL = String(req.headers['git-protocol'])

    const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'] })
    children.add(child)
    let stderr = ''
    child.stderr!.on('data', (d: Buffer) => {
      if (stderr.length < 8192) stderr += d.toString('utf8')
    })
    child.stdin!.on('error', () => {})
    req.pipe(child.stdin!)
    req.on('aborted', () => child.stdin!.end())

    let head = Buffer.alloc(0)
    let headersDone = false
    let status = 200
    // The answer is passed on at the pace the client reads it (a pack is never buffered here).
    const forward = (chunk: Buffer) => {
      if (!res.write(chunk)) {
        child.stdout!.pause()
        res.once('drain', () => child.stdout!.resume())
      }
    }
    child.stdout!.on('data', (chunk: Buffer) => {
      if (headersDone) {
        forward(chunk)
        return
      }
      head = Buffer.concat([head, chunk])
      const crlf = head.indexOf('\r\n\r\n')
      const lf = head.indexOf('\n\n')
      let end = -1
      let sep = 0
      if (crlf >= 0 && (lf < 0 || crlf < lf)) [end, sep] = [crlf, 4]
      else if (lf >= 0) [end, sep] = [lf, 2]
      if (end < 0) return
      headersDone = true
      const headers: Record<string, string> = {}
      for (const line of head.subarray(0, end).toString('latin1').split(/\r?\n/)) {
        const i = line.indexOf(':')
        if (i <= 0) continue
        const k = line.slice(0, i).trim()
        const v = line.slice(i + 1).trim()
        if (k.toLowerCase() === 'status') status = Number.parseInt(v, 10) || 500
        else headers[k] = v
      }
      res.writeHead(status, headers)
      const rest = head.subarray(end + sep)
      if (rest.length) forward(rest)
    })
    child.on('close', (code) => {
      children.delete(child)
      if (!headersDone) {
        status = 502
        if (!res.headersSent && !res.destroyed) res.writeHead(502, { 'Content-Type': 'text/plain' })
        res.end(`git http-backend exited with ${code}: ${stderr}`)
      } else res.end()
      log.push({ method: req.method ?? '', path: u.pathname, query: u.search, status, user })
    })
    child.on('error', () => {})
    res.on('close', () => {
      if (!res.writableFinished && child.exitCode === null) child.stdin!.end()
    })
  })
  server.keepAliveTimeout = 1000

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const onError = (err: Error) => reject(err)
      server.once('error', onError)
      server.listen(port, '127.0.0.1', () => {
        server.off('error', onError)
        port = (server.address() as AddressInfo).port
        resolve()
      })
    })

  await listen()
  const base = () => `http://127.0.0.1:${port}`
  return {
    get port() {
      return port
    },
    get requests() {
      return requests
    },
    log,
    url: (name) => `${base()}/${repoFileName(name)}`,
    authUrl: (name, username = opts.username ?? '', password = opts.password ?? '') =>
      `http://${encodeURIComponent(username)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${repoFileName(name)}`,
    start: async () => {
      if (server.listening) return
      // The port was just released by this process; retry briefly in case the OS is slow to free it.
      for (let i = 0; ; i++) {
        try {
          await listen()
          return
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || i >= 20) throw err
          await new Promise((r) => setTimeout(r, 100)) // wait: retry interval while the port is still in use
        }
      }
    },
    stop: async () => {
      if (!server.listening) return
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeAllConnections()
      // Let running backends finish (a killed receive-pack could leave a ref lock behind).
      await Promise.all(
        [...children].map(
          (c) =>
            new Promise<void>((resolve) => {
              if (c.exitCode !== null || c.signalCode !== null) return resolve()
              const timer = setTimeout(() => c.kill('SIGKILL'), 10_000)
              c.once('close', () => {
                clearTimeout(timer)
                resolve()
              })
            }),
        ),
      )
      await closed
    },
  }
}

export type { Person } from './git-as.js'

export interface GitResult {
  code: number
  stdout: string
  stderr: string
}

/** Runs the git binary (async, no shell); never throws on a non-zero exit. */
export function runGit(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<GitResult> {
  return new Promise((resolve) => {
    execFile(
      'git',
      args,
      {
        cwd: opts.cwd,
        env: { ...process.env, ...GIT_ENV_BASE, ...(opts.env ?? {}) },
        encoding: 'utf8',
        maxBuffer: 256 * 1024 * 1024,
        timeout: opts.timeoutMs ?? 60_000,
      },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === 'number'
            ? (err as { code: number }).code
            : 1
          : 0
        resolve({ code, stdout: String(stdout), stderr: String(stderr) })
      },
    )
  })
}

/** Like runGit, but throws with git's stderr on a non-zero exit and returns stdout. */
export async function git(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<string> {
  const r = await runGit(args, opts)
  if (r.code !== 0) throw new Error(`git ${args.join(' ')} failed (${r.code}): ${r.stderr.trim()}`)
  return r.stdout
}

export const TEMPLATE_AUTHOR: Person = {
  name: 'Template Author',
  email: 'template@example.com',
  date: '2026-01-01T00:00:00Z',
}

export interface RemoteRepo {
  name: string
  /** Path of the bare repository on disk. */
  gitdir: string
  /** git --git-dir <gitdir> … (async). */
  git(...args: string[]): Promise<string>
  /** The branch's commit id. */
  head(branch?: string): Promise<string>
}

/**
 * A bare repository `<root>/<name>.git` served by createGitHttpServer({ root }). With a template
 * directory, its files become the first commit on `main`, authored by `author`.
 */
export async function createRemoteRepo(
  root: string,
  name: string,
  fromTemplateDir?: string,
  author: Person = TEMPLATE_AUTHOR,
): Promise<RemoteRepo> {
  const gitdir = path.join(root, repoFileName(name))
  await git(['init', '-q', '--bare', '-b', 'main', gitdir])
  await git(['--git-dir', gitdir, 'config', 'http.receivepack', 'true'])
  if (fromTemplateDir) {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-remote-seed-'))
    fs.cpSync(fromTemplateDir, work, { recursive: true })
    await git(['init', '-q', '-b', 'main'], { cwd: work })
    await git(['add', '-A'], { cwd: work })
    await git(['commit', '-q', '-m', 'Initial rules'], { cwd: work, env: personEnv(author) })
    await git(['push', '-q', gitdir, 'HEAD:refs/heads/main'], { cwd: work })
    fs.rmSync(work, { recursive: true, force: true })
  }
  return {
    name,
    gitdir,
    git: (...args) => git(['--git-dir', gitdir, ...args]),
    head: async (branch = 'main') => (await git(['--git-dir', gitdir, 'rev-parse', `refs/heads/${branch}`])).trim(),
  }
}

/** A working clone used by one person: write files, commit as them, push with the real git CLI. */
export class PersonClone {
  private constructor(
    readonly dir: string,
    readonly person: Person,
    readonly branch: string,
  ) {}

  /** Clones `url` (which may carry `user:password@` for this test client) into a fresh directory. */
  static async clone(url: string, person: Person, branch = 'main'): Promise<PersonClone> {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-person-'))
    const dir = path.join(parent, 'w')
    await git(['clone', '-q', '-b', branch, url, dir])
    return new PersonClone(dir, person, branch)
  }

  run(...args: string[]): Promise<GitResult> {
    return runGit(args, { cwd: this.dir, env: personEnv(this.person) })
  }

  async git(...args: string[]): Promise<string> {
    return git(args, { cwd: this.dir, env: personEnv(this.person) })
  }

  write(rel: string, content: string): void {
    const p = path.join(this.dir, rel)
    fs.mkdirSync(path.dirname(p), { recursive: true })
    fs.writeFileSync(p, content)
  }

  read(rel: string): string | null {
    const p = path.join(this.dir, rel)
    return fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : null
  }

  remove(rel: string): void {
    fs.rmSync(path.join(this.dir, rel), { force: true, recursive: true })
  }

  /** Stages everything and commits as this person; returns the new commit id. */
  async commitAll(message: string, date?: string): Promise<string> {
    await this.git('add', '-A')
    const env = personEnv(date ? { ...this.person, date } : this.person)
    await git(['commit', '-q', '--allow-empty', '-m', message], { cwd: this.dir, env })
    return (await this.git('rev-parse', 'HEAD')).trim()
  }

  /** `git push origin HEAD:<branch>`; `ok` is false when the remote refused or was unreachable. */
  async push(): Promise<GitResult & { ok: boolean }> {
    const r = await this.run('push', '-q', 'origin', `HEAD:refs/heads/${this.branch}`)
    return { ...r, ok: r.code === 0 }
  }

  /** Fetches and moves the working tree to the remote's tip, dropping local commits. */
  async syncToRemote(): Promise<void> {
    await this.git('fetch', '-q', 'origin', this.branch)
    await this.git('reset', '-q', '--hard', `origin/${this.branch}`)
    await this.git('clean', '-q', '-fdx')
  }

  async head(): Promise<string> {
    return (await this.git('rev-parse', 'HEAD')).trim()
  }
}
