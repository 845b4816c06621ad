// A query's work runs on DuckDB's own worker threads, which get `queries.nice`: the threads the
// engine names are exactly DuckDB's workers at that nice value, and a CPU-heavy query's time is
// spent on them, not on the process's other threads (libuv's, shared with file I/O). Linux only.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { editorAuditLogType } from '../../src/ingest/editor-audit-log-type.js'
import { DEFAULT_QUERY_SETTINGS } from '../../src/query/config.js'
import { QueryEngine } from '../../src/query/query-engine.js'
import { tempDir } from '../helpers/rulekeeper.js'

const linux = fs.existsSync('/proc/self/task')
const logsRoot = path.join(tempDir(), 'logs')

/** CPU time (clock ticks, user + system) of each thread of this process. */
function cpuTicks(): Map<number, number> {
  const out = new Map<number, number>()
  for (const tid of fs.readdirSync('/proc/self/task')) {
    const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    out.set(Number(tid), Number(fields[11]) + Number(fields[12]))
  }
  return out
}

t.test('DuckDB’s workers get the configured nice value and do the query’s work', { skip: !linux }, async (t) => {
  const e = await QueryEngine.open({
    logsRoot,
    logTypes: [editorAuditLogType],
    settings: { ...DEFAULT_QUERY_SETTINGS, threads: 2, nice: 7 },
  })
  t.teardown(() => e.close())
  t.equal(e.lowPriorityThreads.length, 2, 'one per configured worker')
  for (const tid of e.lowPriorityThreads) t.equal(os.getPriority(tid), 7, `thread ${tid}`)
  t.equal(os.getPriority(process.pid), 0, 'the event loop keeps its priority')

  const before = cpuTicks()
  const page = await e.run({
    sql: 'SELECT count(*) AS n FROM range(60000000) r(i) WHERE hash(i) % 7 = 0',
    nowMs: Date.now(),
    offset: 0,
    limit: 10,
  })
  t.ok((page.rows[0]!.n as number) > 0)
  const spent = (tid: number, ticks: number) => ticks - (before.get(tid) ?? 0)
  let workers = 0
  let others = 0
  for (const [tid, ticks] of cpuTicks()) {
    if (e.lowPriorityThreads.includes(tid)) workers += spent(tid, ticks)
    else if (tid !== process.pid) others += spent(tid, ticks)
  }
  t.ok(workers >= 20, `the workers ran the query (${workers} ticks)`)
  t.ok(others * 4 <= workers, `the other threads barely worked (${others} ticks against ${workers})`)
})

t.test('nice 0 leaves every thread at the process’s priority', { skip: !linux }, async (t) => {
  const e = await QueryEngine.open({
    logsRoot,
    logTypes: [editorAuditLogType],
    settings: { ...DEFAULT_QUERY_SETTINGS, threads: 1, nice: 0 },
  })
  t.teardown(() => e.close())
  t.same(e.lowPriorityThreads, [])
})
