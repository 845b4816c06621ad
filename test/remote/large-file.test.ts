// A large file pushed to an HTTP(S) remote (issue 27 finding 12): the reconcile that follows the
// webhook fetches it with the git binary, streamed to disk, so the server's memory does not grow by
// anything like the file's size (isomorphic-git held the pack and inflated every object: ~7× it),
// the file is invalid with its size as the reason, and /healthz keeps answering.
// Real port: a remote (the git server).
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { waitFor } from '../helpers/wait.js'
import { GIT_TOKEN, pushHook, remoteWorld } from './remote-fixture.js'

// RK_LARGE_FILE_MIB=300 measures the case of the issue (docs/decisions.md).
const BLOB_MIB = Number(process.env.RK_LARGE_FILE_MIB) || 96

/** The process's resident memory now (VmRSS), in bytes. */
function rssNow(): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))
  return m ? Number(m[1]) * 1024 : process.memoryUsage().rss
}

t.test(`a ${BLOB_MIB} MiB file through the HTTP remote and /hooks/git costs the server little memory`, async (t) => {
  t.setTimeout(240_000)
  const w = await remoteWorld(t)
  const s = await w.startServer()
  const person = await w.clone({ name: 'Pat', email: 'pat@example.com', date: '2026-03-01T00:00:00Z' })
  // Random bytes: the pack cannot compress them, so it is as large as the file.
  const big = path.join(person.dir, 'rules/huge.yml')
  fs.mkdirSync(path.dirname(big), { recursive: true })
  const fd = fs.openSync(big, 'w')
  for (let i = 0; i < BLOB_MIB; i++) fs.writeSync(fd, randomBytes(1 << 20))
  fs.closeSync(fd)
  const size = fs.statSync(big).size
  const tip = await person.commitAll('a huge file')
  // Straight into the served repository: the push itself is not what is measured.
  const pushed = await person.run('push', '-q', w.remote.gitdir, 'HEAD:refs/heads/main')
  t.equal(pushed.code, 0, pushed.stderr)

  const baseline = rssNow()
  let peak = baseline
  let healthzMaxMs = 0
  let done = false
  // Memory every 10 ms; /healthz every 100 ms (the test's own requests are kept few: they allocate too).
  const sampler = (async () => {
    let i = 0
    while (!done) {
      peak = Math.max(peak, rssNow())
      if (i++ % 10 === 0) {
        const asked = performance.now()
        const h = await s.request('GET', '/healthz')
        if (h.status !== 200) throw new Error(`/healthz answered ${h.status}`)
        healthzMaxMs = Math.max(healthzMaxMs, performance.now() - asked)
      }
      await new Promise((r) => setTimeout(r, 10)) // wait: the sampling interval
    }
  })()
  const started = performance.now()
  t.equal((await pushHook(s, tip)).status, 202, 'the webhook is accepted')
  const status = await waitFor(
    `lastAppliedRevision ${tip}`,
    async () => {
      const st = await s.request('GET', '/status')
      return st.body?.lastAppliedRevision === tip ? st.body : undefined
    },
    180_000,
    250,
  )
  const tookMs = performance.now() - started
  done = true
  await sampler
  peak = Math.max(peak, rssNow())
  const growth = peak - baseline
  const mib = (n: number) => (n / 2 ** 20).toFixed(1)
  t.comment(
    `load ${os.loadavg()[0]!.toFixed(1)}; peak RSS growth ${mib(growth)} MiB, reconcile ${tookMs.toFixed(0)} ms, /healthz worst ${healthzMaxMs.toFixed(0)} ms`,
  )

  const huge = (status.invalidFiles as Array<{ path: string; errors: Array<{ message: string }> }>).find(
    (f) => f.path === 'rules/huge.yml',
  )
  t.match(huge?.errors[0]?.message, /larger than a rule file may be .*it was not read/, 'the file is invalid, unread')
  t.equal(s.git('rev-parse', 'refs/heads/main').trim(), tip, 'the local branch follows the remote')
  t.ok(growth < size / 2, `peak memory grew ${mib(growth)} MiB for a ${mib(size)} MiB file`)
  t.ok(healthzMaxMs < 1500, `/healthz answered within ${healthzMaxMs.toFixed(0)} ms`)
  t.notOk(fs.readFileSync(path.join(s.gitdir, 'config'), 'utf8').includes(GIT_TOKEN), 'no token in the repository')
})
