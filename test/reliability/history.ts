// Shared by the reliability tests: reads a bare repository's history with the git binary (commits
// with parsed trailers, newest first) and runs `git fsck --strict`, so assertions check what Git
// itself sees rather than what the service believes.
import { execFileSync } from 'node:child_process'

export interface LoggedCommit {
  oid: string
  parents: string[]
  subject: string
  trailers: Map<string, string>
}

function git(gitdir: string, ...args: string[]): string {
  return execFileSync('git', ['--git-dir', gitdir, ...args], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

/** Every commit reachable from HEAD, newest first, with its trailers parsed. */
export function readLog(gitdir: string): LoggedCommit[] {
  const raw = git(gitdir, 'log', '--format=%H%x1f%P%x1f%B%x1e', 'HEAD')
  return raw
    .split('\x1e')
    .map((r) => r.replace(/^\n/, ''))
    .filter((r) => r.trim() !== '')
    .map((r) => {
      const [oid, parents, body] = r.split('\x1f') as [string, string, string]
      const trailers = new Map<string, string>()
      for (const line of body.split('\n')) {
        const m = /^(Rule-Id|Rule-Kind|Actor-Id|Actor-Type|Request-Id): (.*)$/.exec(line)
        if (m) trailers.set(m[1]!, m[2]!)
      }
      return { oid, parents: parents.split(' ').filter(Boolean), subject: body.split('\n')[0] ?? '', trailers }
    })
}

/** `git fsck --strict` output (stdout + stderr), and whether it exited 0. */
export function fsck(gitdir: string): { ok: boolean; output: string } {
  try {
    const out = execFileSync('git', ['--git-dir', gitdir, 'fsck', '--strict', '--no-progress', '--no-dangling'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    return { ok: true, output: out.trim() }
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string }
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}`.trim() || e.message }
  }
}

/** Commits with more than one parent (there must be none: history is linear). */
export function mergeCommits(gitdir: string): string[] {
  return git(gitdir, 'rev-list', '--parents', 'HEAD')
    .trim()
    .split('\n')
    .filter((l) => l.split(' ').length > 2)
}
