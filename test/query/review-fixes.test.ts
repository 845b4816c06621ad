// The query review's fixes: a column named `__proto__` is a key of the row (not its prototype);
// a time limit past Node's longest timer does not fire at once; a scheduled run waits for a place
// instead of a 503 that would lose its recorded slot; shutdown interrupts the queries running.
import t from 'tap'
import { editorAuditLogType } from '../../src/ingest/editor-audit-log-type.js'
import { DEFAULT_QUERY_SETTINGS } from '../../src/query/config.js'
import { QueryEngine } from '../../src/query/query-engine.js'
import { tempDir } from '../helpers/rulekeeper.js'

const open = (over: Partial<typeof DEFAULT_QUERY_SETTINGS> = {}) =>
  QueryEngine.open({
    logsRoot: tempDir('rk-qfix-'),
    logTypes: [editorAuditLogType],
    settings: { ...DEFAULT_QUERY_SETTINGS, threads: 1, ...over },
  })

const SLOW = 'SELECT count(*) AS n FROM range(20000000000) a WHERE a.range % 7 = 3'

/** Resolves once the engine has a query running (polled each turn of the event loop). */
async function runningOn(e: QueryEngine): Promise<void> {
  while (e.runningNow === 0) await new Promise((r) => setImmediate(r)) // wait: polling a condition
}

t.test('a column named __proto__ is a key of the row', async (t) => {
  const e = await open()
  t.teardown(() => e.close())
  const page = await e.run({ sql: 'SELECT 1 AS "__proto__", 2 AS a', nowMs: Date.now(), offset: 0, limit: 10 })
  const row = page.rows[0]!
  t.ok(Object.hasOwn(row, '__proto__'), 'an own key')
  t.equal(Object.getPrototypeOf(row), Object.prototype, 'the prototype is untouched')
  t.equal(JSON.stringify(row), '{"__proto__":1,"a":2}')
})

t.test('a time limit past the longest timer does not fire at once', async (t) => {
  const e = await open()
  t.teardown(() => e.close())
  const page = await e.run({
    sql: 'SELECT 42 AS x',
    nowMs: Date.now(),
    offset: 0,
    limit: 1,
    timeoutMs: 35_792 * 60_000,
  })
  t.same(page.rows, [{ x: 42 }])
})

t.test('a scheduled run waits for a place; a request gets a 503', async (t) => {
  const e = await open({ concurrency: 1, queue: 0 })
  t.teardown(() => e.close())
  const running = e.run({ sql: SLOW, nowMs: Date.now(), offset: 0, limit: 1, timeoutMs: 60_000 })
  await t.rejects(
    e.run({ sql: 'SELECT 1 AS x', nowMs: Date.now(), offset: 0, limit: 1 }),
    /too many queries/,
    'a request is refused when no place is free',
  )
  const scheduled = e.run({ sql: 'SELECT 1 AS x', nowMs: Date.now(), offset: 0, limit: 1, waitForPlace: true })
  await runningOn(e)
  e.interruptAll()
  await t.rejects(running, /time limit|interrupt/i, 'interrupted')
  t.same((await scheduled).rows, [{ x: 1 }], 'the scheduled run waited, then ran')
})

// Interrupted as soon as it has its connection, often while it is still being prepared: DuckDB drops
// an interrupt that lands before execution starts, so the engine interrupts again until it ends
// (this once ran to its 120 s limit). Several rounds, each bounded far below the limit.
t.test('interruptAll ends a running query at once, even one still being prepared', async (t) => {
  const e = await open()
  t.teardown(() => e.close())
  for (let round = 1; round <= 8; round++) {
    const started = Date.now()
    const running = e.run({ sql: SLOW, nowMs: Date.now(), offset: 0, limit: 1, timeoutMs: 120_000 })
    await runningOn(e)
    e.interruptAll()
    await t.rejects(running)
    t.ok(Date.now() - started < 20_000, `round ${round}: ended after ${Date.now() - started} ms`)
  }
})
