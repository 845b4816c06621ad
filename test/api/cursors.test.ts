// The cursors of every paged route come from one module (api/query.ts, issue 26) and stayed
// wire-compatible: a rule list's cursor is base64url of `{"k": kind, "a": last id}`, a history
// page's of `{"c": commit, "n": position}`, so cursors handed out before still page on; anything
// else (another kind's cursor, a commit the history does not have, junk) is the one clear 400.
import t from 'tap'
import { startInProcess } from '../helpers/in-process.js'
import { SAMPLE_BODIES } from '../helpers/rulekeeper.js'

const cursorOf = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
const BAD_CURSOR = /cursor is not valid/

t.test('rule list and history cursors keep their wire format; bad ones are a clear 400', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  for (const id of ['Cursor.A', 'Cursor.B', 'Cursor.C'])
    t.equal((await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple(id))).status, 200)

  const first = await s.request('GET', '/simple-rules?name-contains=Cursor.&limit=1')
  t.equal(first.status, 200, first.text)
  t.same(
    first.body.results.map((r: { id: string }) => r.id),
    ['Cursor.A'],
  )
  t.same(JSON.parse(Buffer.from(first.body.next, 'base64url').toString()), { k: 'simple', a: 'Cursor.A' })
  // A cursor made as the earlier releases made it pages on.
  const next = await s.request(
    'GET',
    `/simple-rules?name-contains=Cursor.&limit=1&cursor=${cursorOf({ k: 'simple', a: 'Cursor.B' })}`,
  )
  t.same(
    next.body.results.map((r: { id: string }) => r.id),
    ['Cursor.C'],
  )

  const otherKind = await s.request('GET', `/simple-rules?cursor=${cursorOf({ k: 'scheduled', a: 'Cursor.A' })}`)
  t.equal(otherKind.status, 400)
  t.match(otherKind.body, { code: 'BadRequest', message: BAD_CURSOR }, "another kind's cursor")
  t.match((await s.request('GET', '/simple-rules?cursor=%21%21')).body, { message: BAD_CURSOR }, 'junk')

  // History: three commits of one rule, a page of one.
  for (const severity of ['LOW', 'MEDIUM'])
    t.equal(
      (await s.request('PUT', '/simple-rules/Cursor.A', SAMPLE_BODIES.simple('Cursor.A', { severity }))).status,
      200,
    )
  const page = await s.request('GET', '/simple-rules/Cursor.A/history?limit=1')
  t.equal(page.status, 200, page.text)
  const position = JSON.parse(Buffer.from(page.body.next, 'base64url').toString())
  t.same(Object.keys(position), ['c', 'n'])
  t.equal(position.n, 2, 'the next page ends before the third of three commits')
  const all = await s.request('GET', '/simple-rules/Cursor.A/history')
  t.equal(position.c, all.body.results[0].revision)
  const again = await s.request('GET', `/simple-rules/Cursor.A/history?limit=5&cursor=${cursorOf(position)}`)
  t.same(
    again.body.results.map((e: { revision: string }) => e.revision),
    all.body.results.slice(1).map((e: { revision: string }) => e.revision),
  )
  const unknownCommit = await s.request(
    'GET',
    `/simple-rules/Cursor.A/history?cursor=${cursorOf({ c: '0'.repeat(40), n: 1 })}`,
  )
  t.equal(unknownCommit.status, 400)
  t.match(unknownCommit.body, { code: 'BadRequest', message: BAD_CURSOR })
  t.match((await s.request('GET', '/simple-rules/Cursor.A/history?cursor=nope')).body, { message: BAD_CURSOR })
})
