// DuckDB's preparation is bounded (issue 29, item 4): it folds constant expressions while it prepares,
// outside its memory limit and deaf to interrupts, so every query and query file is prepared first in
// the SQL checker's own process, killed past its time or memory limit (or when it crashes). The
// server's own memory does not grow by the fold's gigabytes, /healthz keeps answering, the refused
// query is a 400 naming why, and the next query is answered by a fresh checking process.
import fs from 'node:fs'
import t from 'tap'
import { sqlEngine } from '../../src/engine/sql/index.js'
import { SqlChecker } from '../../src/engine/sql/sql-check.js'
import { editorAuditLogType } from '../../src/ingest/editor-audit-log-type.js'
import { startInProcess } from '../helpers/in-process.js'

/** 20M-element list folded at preparation: unbounded, it took 8 s and 2.3 GB of one process. */
const FOLD = 'SELECT len(range(0, 20000000)) AS n'

function rssNow(): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))
  return Number(m?.[1] ?? 0) * 1024
}

t.test(
  'the checker stops a preparation at its memory limit, then at its time limit, and answers the next',
  async (t) => {
    const byMemory = new SqlChecker(() => [editorAuditLogType], {
      prepareTimeoutMs: 60_000,
      prepareMemoryBytes: 128 * 2 ** 20,
    })
    t.teardown(() => byMemory.close())
    t.equal(await byMemory.check('SELECT 1 AS x'), undefined, 'a plain query binds')
    const started = performance.now()
    const memory = await byMemory.check(FOLD)
    t.match(memory, { stopped: 'memory', message: /more than 128 MiB of memory.*stopped/ })
    t.ok(performance.now() - started < 5000, 'stopped well before the fold would end')
    t.equal(byMemory.stoppedChecks, 1)
    t.equal(await byMemory.check('SELECT 2 AS x'), undefined, 'the next check is answered (a fresh process)')
    t.match(await byMemory.check('SELECT nope FROM editor_audit'), { message: /nope/, line: 1 })

    // 1.5 s: far above a plain query's check (a few ms, more on a busy machine, in a fresh process
    // too), far below the fold's (4.5 s on an idle 2-core machine, longer when busy).
    const byTime = new SqlChecker(() => [editorAuditLogType], {
      prepareTimeoutMs: 1500,
      prepareMemoryBytes: 64 * 2 ** 30,
    })
    t.teardown(() => byTime.close())
    t.equal(await byTime.check('SELECT 1 AS x'), undefined, 'the process is up')
    t.match(await byTime.check(FOLD), { stopped: 'time', message: /longer than 1500 ms/ })
    t.equal(await byTime.check('SELECT 3 AS x'), undefined)
  },
)

t.test('a checking process that dies during a check is an answer: the query is not run', async (t) => {
  const checker = new SqlChecker(() => [editorAuditLogType], {
    prepareTimeoutMs: 60_000,
    prepareMemoryBytes: 64 * 2 ** 30,
  })
  t.teardown(() => checker.close())
  t.equal(await checker.check('SELECT 1 AS x'), undefined)
  const pid = checker.processId()
  t.ok(pid, 'the process runs')
  const checking = checker.check(FOLD)
  // Dies mid-preparation (as a DuckDB crash on hostile SQL would end it).
  setTimeout(() => process.kill(pid!, 'SIGKILL'), 100) // wait: into the preparation, which lasts seconds
  t.match(await checking, { stopped: 'crash', message: /ended the process that checks it/ })
  t.equal(await checker.check('SELECT 1 AS x'), undefined, 'a fresh process answers the next')
  t.not(checker.processId(), pid)
})

t.test(
  'POST /queries and a query file with a fold: 400s naming why; the server stays small and answering',
  async (t) => {
    const s = await startInProcess()
    t.teardown(() => s.close())
    const analyst = await s.makeToken('analyst', ['Query Data'])
    const ask = (sql: string) => s.send('POST', '/queries', { sql }, { 'X-API-Key': analyst })
    t.equal((await ask('SELECT 1 AS x')).status, 200, 'the engine and its checker are up')

    const baseline = rssNow()
    let peak = baseline
    let healthzWorst = 0
    let done = false
    const probe = (async () => {
      while (!done) {
        peak = Math.max(peak, rssNow())
        const asked = performance.now()
        const h = await s.send('GET', '/healthz')
        if (h.status !== 200) throw new Error(`/healthz answered ${h.status}`)
        healthzWorst = Math.max(healthzWorst, performance.now() - asked)
        await new Promise((r) => setTimeout(r, 20)) // wait: the probing interval
      }
    })()
    const refused = await ask(FOLD)
    const file = await s.request('POST', '/queries/saved', { id: 'Team.Fold', description: 'a fold', query: FOLD })
    done = true
    await probe
    peak = Math.max(peak, rssNow())

    t.equal(refused.status, 400, refused.text)
    t.match(refused.body, { reason: 'prepare-memory', message: /preparing the query needed more than 256 MiB/ })
    t.equal(file.status, 400, file.text)
    t.match(file.body.errors, [{ path: '/query', message: /preparing the query needed more than 256 MiB/ }])
    t.ok(
      peak - baseline < 200 * 2 ** 20,
      `the server grew ${((peak - baseline) / 2 ** 20).toFixed(0)} MiB (the fold: 2.3 GB)`,
    )
    t.ok(healthzWorst < 1000, `/healthz answered within ${healthzWorst.toFixed(0)} ms`)
    t.same((await ask('SELECT 42 AS x')).body.rows, [{ x: 42 }], 'the next query is answered')

    // A fold the checker cannot bind (it reads no files) never reaches the engine's own preparation.
    const logs = `${s.dataDir}/logs/Editor.Audit/dt=*/hour=*/*.ndjson`
    const started = performance.now()
    const viaFile = await ask(`SELECT len(range(0, 20000000)) AS n FROM read_json('${logs}')`)
    t.equal(viaFile.status, 400, viaFile.text)
    t.match(viaFile.body.message, /Permission Error|disabled/)
    t.ok(performance.now() - started < 5000, 'refused by the checker, not folded by the engine')
  },
)

t.test(
  'a checker that cannot start makes a query file unjudged (invalid, saying why), never a thrown read',
  async (t) => {
    const broken = new SqlChecker(() => {
      throw new Error('no log types here')
    })
    t.teardown(() => broken.close())
    const engine = sqlEngine('savedQuery', broken, { scheduled: false })
    const problems = await engine.checkIndexed!(
      { kind: 'savedQuery', id: 'Q', path: 'queries/q.yml', data: { QueryName: 'Q', Query: 'SELECT 1' } },
      { findRule: () => undefined, findSupport: () => undefined, findDataModel: () => undefined },
    )
    t.match(problems, [{ path: ['Query'], message: /the SQL could not be checked here: no log types here/ }])
  },
)
