// The data directory is private to the server's user: directories 0700, files 0600 (read-only git
// objects stay 0400, an owner's execute bit is kept). restrictUmask() makes every later write
// private: ours, isomorphic-git's and those of the `git` subprocesses, which inherit the umask.
// secureDataDir() runs at start and narrows whatever is wider (a directory an operator made, files
// of an older version, objects a plain `git push` wrote with its own umask) by removing every
// group/other and set-id bit; reportPrivacy() logs one line when it changed anything.
import fs from 'node:fs'
import path from 'node:path'
import { isMainThread } from 'node:worker_threads'
import type { Logger } from '../log.js'

/** No group or other bits on anything created from now on. */
const PRIVATE_UMASK = 0o077
/** The bits a private entry may not have: group, other, setuid, setgid, sticky. */
const WIDE_BITS = 0o7077

/**
 * Sets the process umask to 0o077 (process-wide; a worker thread cannot, and relies on the explicit
 * modes and the start-up check). Returns whether it was set.
 */
export function restrictUmask(): boolean {
  if (!isMainThread) return false
  process.umask(PRIVATE_UMASK)
  return true
}

export interface PrivacyReport {
  /** Entries looked at (the data directory itself included). */
  scanned: number
  /** Entries whose mode was narrowed. */
  fixed: number
  /** Entries that were too wide and could not be narrowed (another owner, a read-only mount). */
  failed: number
  /** Up to five changed entries: `path (old mode → new mode)`, relative to the data directory. */
  examples: string[]
  /** Up to five entries that could not be narrowed, with the error code. */
  failures: string[]
  ms: number
}

const octal = (m: number) => (m & 0o7777).toString(8).padStart(4, '0')

/**
 * Walks `dataDir` (without following symbolic links) and removes group/other bits from every
 * directory and file. Never throws for an entry: an entry that vanished is skipped, one that
 * cannot be changed is counted in `failed`.
 */
export function secureDataDir(dataDir: string): PrivacyReport {
  const started = performance.now()
  const report: PrivacyReport = { scanned: 0, fixed: 0, failed: 0, examples: [], failures: [], ms: 0 }
  const narrow = (abs: string, mode: number) => {
    report.scanned++
    if ((mode & WIDE_BITS) === 0) return
    const next = mode & 0o700
    const rel = path.relative(dataDir, abs) || '.'
    try {
      fs.chmodSync(abs, next)
      report.fixed++
      if (report.examples.length < 5) report.examples.push(`${rel} (${octal(mode)} → ${octal(next)})`)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code === 'ENOENT') return
      report.failed++
      if (report.failures.length < 5) report.failures.push(`${rel} (${octal(mode)}: ${code ?? String(err)})`)
    }
  }
  // The top directory is followed if it is a link (the operator may point the data dir anywhere).
  narrow(dataDir, fs.statSync(dataDir).mode)
  const stack = [dataDir]
  while (stack.length > 0) {
    const dir = stack.pop()!
    let names: string[]
    try {
      names = fs.readdirSync(dir)
    } catch {
      continue // vanished meanwhile, or unreadable (already counted as failed above)
    }
    for (const name of names) {
      const abs = path.join(dir, name)
      const st = fs.lstatSync(abs, { throwIfNoEntry: false })
      if (!st || st.isSymbolicLink()) continue
      narrow(abs, st.mode)
      if (st.isDirectory()) stack.push(abs)
    }
  }
  report.ms = Math.round((performance.now() - started) * 10) / 10
  return report
}

/** One line when the start-up check changed (or could not change) anything; the cost at debug. */
export function reportPrivacy(logger: Logger, r: PrivacyReport): void {
  const { scanned, fixed, failed, examples, failures, ms } = r
  if (fixed > 0)
    logger.warn(
      { fixed, scanned, ms, examples },
      `narrowed the modes of ${fixed} data-directory entries to owner-only (directories 0700, files 0600)`,
    )
  if (failed > 0)
    logger.error(
      { failed, scanned, failures },
      `cannot narrow the modes of ${failed} data-directory entries; other users may read them`,
    )
  if (fixed === 0 && failed === 0) logger.debug({ scanned, ms }, 'the data directory is private')
}
