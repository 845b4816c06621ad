// The scheduling priority of DuckDB's worker threads (Linux): the threads DuckDB starts are told
// apart by listing the process's threads (/proc/self/task) before and after the instance is made,
// and each gets a higher nice value, so on busy cores the event loop (ingest, detection, the API)
// runs first and a query takes what is left. Where /proc is missing nothing changes.
import fs from 'node:fs'
import os from 'node:os'

/** The ids of the process's threads (empty where /proc/self/task is missing). */
export function threadIds(): Set<number> {
  try {
    return new Set(fs.readdirSync('/proc/self/task').map(Number))
  } catch {
    return new Set()
  }
}

/**
 * Gives `nice` to the threads of `after` not in `before` when they are exactly `expected` (more
 * means another thread started meanwhile, which is left alone, and so are these). The threads reniced.
 */
export function lowerNewThreads(before: Set<number>, after: Set<number>, expected: number, nice: number): number[] {
  const started = [...after].filter((tid) => !before.has(tid))
  if (nice === 0 || started.length !== expected) return []
  const done: number[] = []
  for (const tid of started) {
    try {
      os.setPriority(tid, nice)
      done.push(tid)
    } catch {
      /* the thread is gone, or the system refuses: it keeps the process's priority */
    }
  }
  return done
}
