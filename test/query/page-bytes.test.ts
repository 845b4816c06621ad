// A page of POST /queries is bounded in bytes as well as rows: values are converted to JSON on the
// JS thread, outside DuckDB's memory limit and interrupt, so a query building huge values answers
// only the rows that fit queries.maxPageBytes (8 MiB), says so through `next`, and the following
// pages carry on from the row left out; a row larger than a page alone is refused before it is
// converted (its least size read from DuckDB's vectors); /healthz is answered while such a query runs.
import t from 'tap'
import { startInProcess } from '../helpers/in-process.js'

const MIB = 1024 * 1024

t.test('pages stop at the byte limit and carry on through next', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const url = `${s.service.config.api.basePath.replace(/\/$/, '')}/queries`

  // 20 rows of ~1 MB each (not a constant: DuckDB builds each value): 8 fit in 8 MiB, then 8, then 4.
  const sql = "SELECT i, repeat('x', 1000000 + (i * 0)::INT) AS v FROM range(20) t(i)"
  const seen: number[] = []
  const sizes: number[] = []
  let cursor: string | null = null
  do {
    const page = await s.request('POST', url, { sql, ...(cursor ? { cursor } : {}) })
    t.equal(page.status, 200, page.text.slice(0, 300))
    t.ok(Buffer.byteLength(page.text) <= 8 * MIB + 4096, `a page is ${Buffer.byteLength(page.text)} bytes`)
    for (const row of page.body.rows as Array<{ i: number; v: string }>) {
      seen.push(row.i)
      t.equal(row.v.length, 1_000_000)
    }
    sizes.push(page.body.rows.length)
    cursor = page.body.next
  } while (cursor)
  t.same(sizes, [8, 8, 4], 'the byte limit, not the 100-row page size, ends the first pages')
  t.same(
    seen,
    Array.from({ length: 20 }, (_, i) => i),
    'every row once, in order',
  )
  // pageSize still bounds a page of small rows.
  const small = await s.request('POST', url, { sql: 'SELECT i FROM range(20) t(i)', pageSize: 5 })
  t.equal(small.body.rows.length, 5)
  t.type(small.body.next, 'string')
})

t.test('a row larger than a page is refused before it is converted; /healthz answers meanwhile', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const url = `${s.service.config.api.basePath.replace(/\/$/, '')}/queries`
  // 30 rows of 10 MB: each over the 8 MiB page alone.
  const sql = "SELECT i, repeat('x', 10000000 + (i * 0)::INT) AS v FROM range(30) t(i)"
  const order: string[] = []
  const query = s.request('POST', url, { sql }).then((r) => {
    order.push('query')
    return r
  })
  const health = s.send('GET', '/healthz').then((r) => {
    order.push('healthz')
    return r
  })
  const [page, h] = await Promise.all([query, health])
  t.equal(h.status, 200)
  t.same(order, ['healthz', 'query'], '/healthz did not wait for the query')
  t.equal(page.status, 400, page.text.slice(0, 300))
  t.match(page.body, { reason: 'row-too-large', row: 0, message: /row 0 of the result is larger than a page may be/ })
  // A list of 5M numbers: its floor (one byte a number) is over the page before any is converted.
  const list = await s.request('POST', url, { sql: 'SELECT range(0, 5000000 + (i * 0)) AS l FROM range(1) t(i)' })
  t.equal(list.status, 400, list.text.slice(0, 300))
  t.match(list.body, { reason: 'row-too-large' })
  // A JSON column is answered parsed: 9 MB of whitespace around [1] is a small row.
  const spaced = await s.request('POST', url, { sql: "SELECT ('[' || repeat(' ', 9000000) || '1]')::JSON AS j" })
  t.equal(spaced.status, 200, spaced.text.slice(0, 300))
  t.same(spaced.body.rows, [{ j: [1] }])
  // A later row too large ends the page before it; asked for, it is refused.
  const mixed = "SELECT i, CASE WHEN i = 2 THEN repeat('x', 10000000) ELSE 'small' END AS v FROM range(4) t(i)"
  const first = await s.request('POST', url, { sql: mixed })
  t.equal(first.status, 200, first.text.slice(0, 300))
  t.same(
    first.body.rows.map((r: { i: number }) => r.i),
    [0, 1],
  )
  const next = await s.request('POST', url, { sql: mixed, cursor: first.body.next })
  t.match(next.body, { reason: 'row-too-large', row: 2 })
})

t.test('with a larger page limit, every row of 10 MB is read, one a page', async (t) => {
  const s = await startInProcess({ config: { queries: { maxPageBytes: 16 * MIB } } })
  t.teardown(() => s.close())
  const url = `${s.service.config.api.basePath.replace(/\/$/, '')}/queries`
  const sql = "SELECT i, repeat('x', 10000000 + (i * 0)::INT) AS v FROM range(3) t(i)"
  const page = await s.request('POST', url, { sql })
  t.equal(page.status, 200, page.text.slice(0, 300))
  t.equal(page.body.rows.length, 1, 'one row a page')
  t.equal(page.body.rows[0].v.length, 10_000_000)
  const second = await s.request('POST', url, { sql, cursor: page.body.next })
  t.same(
    second.body.rows.map((r: { i: number }) => r.i),
    [1],
  )
})
