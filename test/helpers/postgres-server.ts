// A real PostgreSQL server for tests and benchmarks (no test framework here: postgres.ts binds it to
// tap): Debian's server binaries (/usr/lib/postgresql/<version>/bin, installed by .ci/run), a
// cluster made by initdb in a temp dir and served on a Unix socket in that dir only (no TCP port).
// As root (CI), the server runs as an ordinary user (initdb and postgres refuse root): Debian's
// `postgres` user, else one made with useradd. Started under `setpriv --pdeathsig`, so it dies with
// the process that started it whatever happens; `stop` is SIGINT (a fast shutdown), waited for.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'

const PG_USER = 'postgres'
const FALLBACK_OS_USER = 'rulekeeper-pg'

export interface TestPostgres {
  /** The folder holding the cluster and the server's socket. */
  readonly dir: string
  /** A connection URL to `database` over the Unix socket, as the superuser (trust auth). */
  url(database?: string): string
  /** The server process's pid (tests that must kill it). */
  readonly pid: number
  /** SIGINT, waited for; the cluster's folder removed. */
  stop(): Promise<void>
}

/** The newest server binaries of Debian's postgresql packages, or undefined when none is installed. */
export function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql'
  const versions = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : []
  return versions.length > 0 ? path.join(root, versions[0]!, 'bin') : undefined
}

/** As root: the uid/gid of an ordinary user to run the server as (Debian's `postgres`, else made once). */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const ids = (name: string) => ({
    uid: Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim()),
    gid: Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim()),
  })
  for (const name of ['postgres', FALLBACK_OS_USER]) {
    try {
      return ids(name)
    } catch {}
  }
  execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', FALLBACK_OS_USER])
  return ids(FALLBACK_OS_USER)
}

/** The command line that runs `argv` as `user` (when given) and kills it when this process dies. */
function underSetpriv(argv: string[], user: { uid: number; gid: number } | undefined, deathSignal: string): string[] {
  const who = user ? [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups'] : []
  return ['setpriv', ...who, `--pdeathsig=${deathSignal}`, ...argv]
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once('exit', () => resolve())
  })
}

/** Starts a server in a new temp dir; resolves once it accepts connections (bounded: `timeoutMs`). */
export async function startPostgres(opts: { timeoutMs?: number; fsync?: boolean } = {}): Promise<TestPostgres> {
  const bin = postgresBin()
  if (!bin)
    throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql (apt-get install postgresql)')
  const user = serverUser()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-pg-'))
  if (user) fs.chownSync(dir, user.uid, user.gid)
  const data = path.join(dir, 'data')
  const init = underSetpriv(
    [path.join(bin, 'initdb'), '-D', data, '-U', PG_USER, '--auth=trust', '-E', 'UTF8', '--no-sync'],
    user,
    'KILL',
  )
  try {
    execFileSync(init[0]!, init.slice(1), { stdio: 'pipe', env: { ...process.env, LC_ALL: 'C' } })
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true })
    throw new Error(`initdb failed: ${String((err as { stderr?: Buffer }).stderr ?? err)}`)
  }
  const argv = underSetpriv(
    [
      path.join(bin, 'postgres'),
      '-D',
      data,
      '-k',
      dir,
      '-c',
      'listen_addresses=',
      '-c',
      'max_connections=50',
      '-c',
      'shared_buffers=32MB',
      '-c',
      `fsync=${opts.fsync === false ? 'off' : 'on'}`,
    ],
    user,
    'INT',
  )
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] })
  let log = ''
  child.stderr!.setEncoding('utf8').on('data', (s: string) => {
    log = (log + s).slice(-8192)
  })
  const kill = () => child.kill('SIGKILL')
  process.once('exit', kill)
  const url = (database = 'postgres') =>
    `postgresql://${PG_USER}@/${encodeURIComponent(database)}?host=${encodeURIComponent(dir)}`
  const server: TestPostgres = {
    dir,
    url,
    pid: child.pid!,
    stop: async () => {
      process.removeListener('exit', kill)
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGINT')
        const late = setTimeout(kill, 10_000)
        await exited(child)
        clearTimeout(late)
      }
      fs.rmSync(dir, { recursive: true, force: true })
    },
  }
  // Ready when a connection succeeds (the server also says so on stderr); it may not start at all.
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000)
  let gone = false
  void exited(child).then(() => {
    gone = true
  })
  for (;;) {
    if (gone) {
      await server.stop()
      throw new Error(`postgres exited at start: ${log}`)
    }
    const c = new pg.Client({ connectionString: url() })
    try {
      await c.connect()
      await c.end()
      return server
    } catch {
      await c.end().catch(() => {})
    }
    if (Date.now() > deadline) {
      await server.stop()
      throw new Error(`postgres did not accept connections within ${opts.timeoutMs ?? 30_000} ms: ${log}`)
    }
    await new Promise((r) => setTimeout(r, 50)) // wait: the poll interval of a wait on a condition
  }
}
