// Who a pid is, beyond the number (Linux /proc; elsewhere every answer is "unknown"): the
// process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat) and the boot id.
// A pid together with its start time and the boot id names one process; pids alone are reused.
import fs from 'node:fs'

/** The kernel's clock-tick rate as user space sees it (USER_HZ: 100 on every Linux port). */
const USER_HZ = 100

/** Field 22 of /proc/<pid>/stat (start time in ticks after boot), or null when unknown. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const start = rest[22 - 3]
    return start && /^\d+$/.test(start) ? start : null
  } catch {
    return null
  }
}

let boot: string | null | undefined

/** This boot's id (/proc/sys/kernel/random/boot_id), or null when unknown. */
export function bootId(): string | null {
  if (boot === undefined) {
    try {
      boot = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null
    } catch {
      boot = null
    }
  }
  return boot
}

/**
 * Whether a process that started `start` ticks after boot (processStartTime) started more than a
 * second after `ms` (wall clock); false when unknown.
 */
export function startedAfter(start: string | null, ms: number): boolean {
  if (!start) return false
  try {
    const btime = /^btime (\d+)$/m.exec(fs.readFileSync('/proc/stat', 'utf8'))?.[1]
    if (!btime) return false
    const startedMs = Number(btime) * 1000 + (Number(start) / USER_HZ) * 1000
    return startedMs > ms + 1000
  } catch {
    return false
  }
}
