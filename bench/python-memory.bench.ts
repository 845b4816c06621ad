// Memory of Python detection (issue 28, stated, no target): the full server in a child process with
// 100 and then 500 python-content.ts rules on Editor.Audit, one batch of records posted through the
// log source and evaluated. Reported per rule count: the server process's VmRSS and its Python
// sandboxes' (each a bwrap subtree under the server: the sum of its processes' VmRSS, shared pages
// counted in each) after the batch, in all and per worker, and the peak of the sandboxes' sum while
// the batch was evaluated (sampled every 100 ms). No baseline: a memory figure has no physical
// reference here; the server without rules is given in the notes for scale.
import os from 'node:os'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import type { BenchContext, BenchModule, BenchResult } from './lib.js'
import { mib, sumKiB, type TreeMemory, treeMemory } from './process-memory.js'
import { RECORDS_PER_REQUEST } from './offered-load.js'
import { auditEvent } from './python-content.js'
import { startPythonServer } from './python-server.js'

const RULE_COUNTS = [100, 500]
const BATCH = 5_000
const HOT_EVERY = 200

interface Sample {
  rules: number
  records: number
  seconds: number
  idleBefore: TreeMemory
  after: TreeMemory
  peakKiB: number
  peakWorkers: number
}

async function measure(ctx: BenchContext, rules: number, records: number): Promise<Sample> {
  const server = await startPythonServer(ctx.tmpDir, `rules${rules}`, rules)
  try {
    const idleBefore = await treeMemory(server.child.pid)
    ctx.progress(
      `python-memory: ${rules} Python rules, a batch of ${records} records (load average ${os.loadavg()[0]!.toFixed(1)})`,
    )
    let peakKiB = 0
    let peakWorkers = 0
    let sampling = true
    const sampler = (async () => {
      while (sampling) {
        const t = await treeMemory(server.child.pid)
        peakKiB = Math.max(peakKiB, sumKiB(t.workers))
        peakWorkers = Math.max(peakWorkers, t.workers.length)
        await sleep(100) // wait: the sampling interval
      }
    })()
    const base = await server.evaluated()
    const t0 = performance.now()
    let accepted = 0
    for (let i = 0; i < records; i += RECORDS_PER_REQUEST)
      accepted += await server.ingest(
        Array.from({ length: Math.min(RECORDS_PER_REQUEST, records - i) }, (_, j) =>
          auditEvent(i + j, (i + j) % 2, HOT_EVERY),
        ),
      )
    const done = await server.waitEvaluated(base + accepted, 600_000)
    const seconds = (performance.now() - t0) / 1000
    sampling = false
    await sampler
    if (!done) throw new Error(`${rules} rules: the batch was not evaluated within 600 s`)
    const after = await treeMemory(server.child.pid)
    return { rules, records: accepted, seconds, idleBefore, after, peakKiB, peakWorkers }
  } finally {
    await server.close()
  }
}

const bench: BenchModule = async (ctx: BenchContext): Promise<BenchResult[]> => {
  const records = Math.max(500, Math.round(BATCH * ctx.scale))
  // A small scale keeps two distinct counts (at least 5 and 10 rules).
  const counts = RULE_COUNTS.map((n, j) => Math.max(5 * (j + 1), Math.round(n * Math.min(1, ctx.scale))))
  const empty = await startPythonServer(ctx.tmpDir, 'norules', 0)
  const bare = await treeMemory(empty.child.pid)
  await empty.close()
  const out: BenchResult[] = []
  for (const rules of counts) {
    const s = await measure(ctx, rules, records)
    const total = sumKiB(s.after.workers)
    const perWorker = s.after.workers.length > 0 ? total / s.after.workers.length : 0
    const load = os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join('/')
    const common = `a batch of ${s.records} records evaluated in ${s.seconds.toFixed(1)} s; load average ${load}, 2 shared cores`
    out.push(
      {
        name: `server process memory, ${rules} Python rules, after a batch`,
        target: 'stated (no target)',
        value: mib(s.after.rootKiB),
        unit: 'MiB (VmRSS)',
        pass: true,
        notes: `before the batch ${mib(s.idleBefore.rootKiB)} MiB; a server with no rules ${mib(bare.rootKiB)} MiB; other children (git, …) ${s.after.others.processes} process(es), ${mib(s.after.others.rssKiB)} MiB; ${common}`,
      },
      {
        name: `Python sandboxes' memory in all, ${rules} Python rules, after a batch`,
        target: 'stated (no target)',
        value: mib(total),
        unit: 'MiB (VmRSS sum)',
        pass: true,
        notes: `${s.after.workers.length} sandbox(es) alive (${s.after.workers.reduce((a, w) => a + w.processes, 0)} processes: bwrap and python); peak while the batch was evaluated ${mib(s.peakKiB)} MiB over up to ${s.peakWorkers} sandbox(es); before the batch ${mib(sumKiB(s.idleBefore.workers))} MiB in ${s.idleBefore.workers.length}; with no rules ${mib(sumKiB(bare.workers))} MiB in ${bare.workers.length}; shared pages (the interpreter, libraries) counted in every process; ${common}`,
      },
      {
        name: `Python sandbox memory per worker, ${rules} Python rules, after a batch`,
        target: 'stated (no target)',
        value: mib(perWorker),
        unit: 'MiB (VmRSS per bwrap subtree)',
        pass: true,
        notes: `each: ${s.after.workers.map((w) => `${mib(w.rssKiB)} MiB (${w.processes} processes)`).join(', ') || 'none alive'}`,
      },
    )
  }
  return out
}

export default bench
