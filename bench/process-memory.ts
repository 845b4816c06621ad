// Resident memory of a process and of its descendants, from /proc (Linux): VmRSS of
// /proc/<pid>/status, and the process tree from the parent field of /proc/<pid>/stat. For the
// Python memory bench: the server and its sandboxed Python workers (each a bwrap subtree).
import { readdir, readFile } from 'node:fs/promises'

/** VmRSS in KiB (0 when the process is gone or has no user memory). */
export async function rssKiB(pid: number): Promise<number> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8')
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0)
  } catch {
    return 0
  }
}

interface Proc {
  pid: number
  ppid: number
  comm: string
}

async function processes(): Promise<Proc[]> {
  const out: Proc[] = []
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = await readFile(`/proc/${name}/stat`, 'utf8')
      const close = stat.lastIndexOf(')')
      const comm = stat.slice(stat.indexOf('(') + 1, close)
      const ppid = Number(stat.slice(close + 2).split(' ')[1])
      out.push({ pid: Number(name), ppid, comm })
    } catch {
      /* gone meanwhile */
    }
  }
  return out
}

export interface WorkerMemory {
  /** The root of the subtree (a direct child of the server) and its command name. */
  pid: number
  comm: string
  /** Processes in the subtree and the sum of their VmRSS (KiB). */
  processes: number
  rssKiB: number
}

export interface TreeMemory {
  rootKiB: number
  /** One entry per direct child of the root whose subtree runs Python (bwrap or python). */
  workers: WorkerMemory[]
  /** Other descendants (git, …): count and VmRSS. */
  others: { processes: number; rssKiB: number }
}

/** The root's VmRSS and its children's subtrees, the Python ones (bwrap/python) apart. */
export async function treeMemory(root: number): Promise<TreeMemory> {
  const all = await processes()
  const children = new Map<number, Proc[]>()
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p])
  const subtree = (p: Proc): Proc[] => [p, ...(children.get(p.pid) ?? []).flatMap(subtree)]
  const workers: WorkerMemory[] = []
  const others = { processes: 0, rssKiB: 0 }
  for (const child of children.get(root) ?? []) {
    const tree = subtree(child)
    let rss = 0
    for (const p of tree) rss += await rssKiB(p.pid)
    if (tree.some((p) => p.comm === 'bwrap' || p.comm.startsWith('python')))
      workers.push({ pid: child.pid, comm: child.comm, processes: tree.length, rssKiB: rss })
    else {
      others.processes += tree.length
      others.rssKiB += rss
    }
  }
  return { rootKiB: await rssKiB(root), workers, others }
}

export const sumKiB = (workers: readonly WorkerMemory[]) => workers.reduce((a, w) => a + w.rssKiB, 0)
export const mib = (kib: number) => Math.round((kib / 1024) * 10) / 10
