// History endpoint benchmark (quality.md, "history of a rule"): `GET /simple-rules/{id}/history` on a
// repository of 20k rules and 50k first-parent commits (made with git fast-import by the reconcile
// bench's generator: moves, deletions, re-created ids, .py-only changes), served by a real server
// from the id → commits index. p99 over sequential requests for ids with the longest histories and
// random ones. Baseline, same run: `git log --follow` of one rule's file (what walking the log costs).
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { git } from '../test/helpers/git-http-server.js'
import { startTestServer } from '../test/helpers/rulekeeper.js'
import { percentile, type BenchModule, type BenchResult } from './lib.js'
import { generateHistory } from './reconcile.bench.js'

const bench: BenchModule = async (ctx) => {
  const n = Math.max(50, Math.round(20_000 * ctx.scale))
  const commits = Math.max(200, Math.round(50_000 * ctx.scale))
  const dataDir = path.join(ctx.tmpDir, 'data')
  const gitdir = path.join(dataDir, 'repo.git')
  fs.mkdirSync(dataDir, { recursive: true })
  await git(['init', '-q', '--bare', '-b', 'main', gitdir])
  ctx.progress(`generating ${n} rules and ${commits} commits with git fast-import`)
  await generateHistory(gitdir, n, commits, ctx.progress)
  ctx.progress('starting a server (full index build and cold history metadata)')
  const t0 = performance.now()
  const s = await startTestServer({ dataDir })
  const startMs = performance.now() - t0
  try {
    const { catalog } = s.server
    const simple = [...catalog.index.rules.values()].filter((r) => r.kind === 'simple')
    const byLength = simple
      .map((r) => ({ rule: r, entries: catalog.history.log.of(r.id).length }))
      .sort((a, b) => b.entries - a.entries)
    let seed = 42
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff
    const ids = [
      ...byLength.slice(0, 50).map((x) => x.rule.id),
      ...Array.from({ length: 150 }, () => simple[Math.floor(random() * simple.length)]!.id),
    ]
    const longest = byLength[0]!

    // Correctness first: for rules that kept one path (no move, no .py), the history is git's log of
    // it. The API answers are taken first: a git log of 50k commits outlasts a kept-alive connection.
    const plain = byLength
      .slice(0, 400)
      .filter(({ rule }) =>
        catalog.history.log.of(rule.id).every((e) => e.change !== 'moved' && e.paths.every((p) => p === rule.path)),
      )
      .slice(0, 10)
    const answers = new Map<string, string[]>()
    for (const { rule } of plain) {
      const r = await s.request('GET', `/simple-rules/${encodeURIComponent(rule.id)}/history?limit=1000`)
      answers.set(
        rule.id,
        (r.body.results as Array<{ revision: string }>).map((e) => e.revision),
      )
    }
    let checked = 0
    for (const { rule } of plain) {
      const fromGit = execFileSync(
        'git',
        ['--git-dir', gitdir, 'log', '--first-parent', '--format=%H', 'main', '--', rule.path],
        { encoding: 'utf8' },
      )
        .trim()
        .split('\n')
      const got = answers.get(rule.id)!
      if (JSON.stringify(got) !== JSON.stringify(fromGit))
        throw new Error(`history of ${rule.id} differs from git log: ${got.length} vs ${fromGit.length} commits`)
      checked++
    }

    // Let the server close the connections its keep-alive timer gave up on while git ran.
    await new Promise((r) => setTimeout(r, 6000))
    // One kept-alive connection through node:http (as the rules-api bench measures get by id).
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    const url = new URL(s.url)
    const get = (id: string) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = http.request(
          {
            host: url.hostname,
            port: url.port,
            path: `/simple-rules/${encodeURIComponent(id)}/history`,
            headers: { 'X-API-Key': s.token },
            agent,
          },
          (res) => {
            const chunks: Buffer[] = []
            res.on('data', (c: Buffer) => chunks.push(c))
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }))
            res.on('error', reject)
          },
        )
        req.on('error', reject)
        req.end()
      })
    for (let i = 0; i < 200; i++) await get(ids[i % ids.length]!)
    const rounds = Math.max(400, Math.round(3000 * Math.min(1, ctx.scale * 2)))
    const ms: number[] = []
    const cpu0 = process.cpuUsage()
    for (let i = 0; i < rounds; i++) {
      const id = ids[i % ids.length]!
      const t = performance.now()
      const r = await get(id)
      ms.push(performance.now() - t)
      if (r.status !== 200) throw new Error(`history of ${id}: ${r.status} ${r.text}`)
    }
    const cpu = process.cpuUsage(cpu0)
    const cpuPerRequest = (cpu.user + cpu.system) / 1000 / rounds
    agent.destroy()
    ctx.progress(`history: ${ms.filter((x) => x > 20).length} requests over 20 ms`)
    ctx.progress(`history: ${rounds} requests, p99 ${percentile(ms, 99).toFixed(1)} ms`)

    // Baseline: git log --follow of one file, for some of the same rules.
    const base: number[] = []
    for (const id of ids.slice(0, 40).filter((_, i) => i % 4 === 0)) {
      const rule = catalog.index.rules.get(id)!
      const t = performance.now()
      execFileSync('git', ['--git-dir', gitdir, 'log', '--follow', '--format=%H', 'main', '--', rule.path], {
        stdio: ['ignore', 'ignore', 'ignore'],
      })
      base.push(performance.now() - t)
    }
    const p99 = percentile(ms, 99)
    const baseMedian = percentile(base, 50)
    const load = (await import('node:os'))
      .loadavg()
      .map((x) => x.toFixed(2))
      .join('/')
    const result: BenchResult = {
      name: `history of a rule, GET /simple-rules/{id}/history, ${n} rules, ${commits} commits`,
      target: 'p99 ≤ 50 ms (an index by rule, not a walk of the log)',
      value: p99,
      unit: 'ms (p99)',
      baseline: {
        name: 'git log --follow --format=%H -- <the rule file>, same repository (median)',
        value: baseMedian,
        unit: 'ms',
      },
      ratio: p99 / baseMedian,
      pass: p99 <= 50,
      notes: `${rounds} sequential requests over one kept-alive HTTP connection (node:http) for 200 ids (the 50 longest histories, up to ${longest.entries} commits, and 150 random simple rules), default limit 100; median ${percentile(ms, 50).toFixed(1)} ms; CPU ${cpuPerRequest.toFixed(2)} ms per request (client and server, one process); ${checked} histories checked equal to git log --first-parent of their file; server start (full index + cold history metadata with the id → commits index) ${(startMs / 1000).toFixed(1)} s; load average ${load}, 2 shared cores`,
    }
    return [result]
  } finally {
    await s.close()
  }
}

export default bench
