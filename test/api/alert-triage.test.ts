// Alert triage through the API, in process, on alerts made by the real ingest and detection path:
// PATCH /alerts/{id} with an assignee, POST /alerts/{id}/comments, POST /alerts/status (bulk), the
// history of every change, the permissions (View Alerts reads, Manage Alerts writes), bad input
// (a 400 naming the field, nothing changed), and all of it read back after a restart on the same
// data directory (the group's journal lines, then the alert-index snapshot).
import fs from 'node:fs'
import path from 'node:path'
import { Ajv } from 'ajv'
import t from 'tap'
import { INDEX_FILE } from '../../src/detect/alert-journal.js'
import { commandRecord, commandRule, DETECT_ENV, sendAndDetect } from '../detect/helpers.js'
import { type InProcessServer, startInProcess } from '../helpers/in-process.js'
import { tempDir } from '../helpers/rulekeeper.js'

const env = DETECT_ENV

/** `#/components/...` references replaced by what they point at. */
function deref(doc: any, v: any): any {
  if (Array.isArray(v)) return v.map((x) => deref(doc, x))
  if (!v || typeof v !== 'object') return v
  if (typeof v.$ref === 'string')
    return deref(
      doc,
      v.$ref
        .replace(/^#\//, '')
        .split('/')
        .reduce((o: any, k: string) => o?.[k], doc),
    )
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, deref(doc, x)]))
}

t.test('assignee, comments, history and bulk status, kept across restarts', async (t) => {
  const dataDir = tempDir('rk-triage-')
  let s: InProcessServer = await startInProcess({ dataDir, env })
  t.teardown(() => s.close())
  await commandRule(s, 'T.Triage', 'tri', { groupBy: '- Key: user_email\n' })
  await sendAndDetect(
    s,
    ['a', 'b', 'c', 'd'].map((u, i) =>
      commandRecord('id', 'tri', `2026-11-20T10:0${i}:00Z`, { user_email: `${u}@example.com` }),
    ),
  )
  const list = (await s.request('GET', '/alerts?rule-id=T.Triage')).body.results as any[]
  t.equal(list.length, 4)
  t.ok(
    list.every((a) => a.assignee === null),
    'the list shows the assignee (none yet)',
  )
  const [a, b, c, d] = list.map((x) => x.id as string)
  const viewer = await s.makeToken('viewer', ['View Alerts'])
  const triager = await s.makeToken('dana', ['View Alerts', 'Manage Alerts'])
  const as = (token: string) => ({ 'X-API-Key': token })
  const get = async (id: string) => (await s.request('GET', `/alerts/${id}`)).body

  await t.test('a new alert: no assignee, no comment, no history', async (t) => {
    const one = await get(a!)
    t.equal(one.assignee, null)
    t.same(one.comments, [])
    t.same(one.history, [])
  })

  await t.test('PATCH assignee (and status), a comment: each in the history with the token', async (t) => {
    const r = await s.request('PATCH', `/alerts/${a}`, { assignee: 'dana@example.com' }, as(triager))
    t.equal(r.status, 200)
    t.equal(r.body.assignee, 'dana@example.com')
    t.equal(r.body.status, 'OPEN', 'the status is left alone')
    const both = await s.request('PATCH', `/alerts/${a}`, { status: 'TRIAGED', assignee: 'eli' }, as(triager))
    t.equal(both.status, 200)
    t.equal(both.body.status, 'TRIAGED')
    t.equal(both.body.assignee, 'eli')
    const c1 = await s.request('POST', `/alerts/${a}/comments`, { text: 'Looks like a test account.' }, as(triager))
    t.equal(c1.status, 201)
    t.match(c1.body, {
      id: String,
      text: 'Looks like a test account.',
      author: { type: 'api-token', name: 'dana' },
      createdAt: /^\d{4}-\d\d-\d\dT/,
    })
    const c2 = await s.request('POST', `/alerts/${a}/comments`, { text: 'Second line\nwith a break — ✓' }, as(triager))
    t.equal(c2.status, 201)
    const one = await get(a!)
    t.same(
      one.comments.map((x: any) => x.text),
      ['Looks like a test account.', 'Second line\nwith a break — ✓'],
      'oldest first',
    )
    t.same(
      one.history.map((h: any) => [h.field, h.from, h.to, h.actor.name]),
      [
        ['assignee', null, 'dana@example.com', 'dana'],
        ['status', 'OPEN', 'TRIAGED', 'dana'],
        ['assignee', 'dana@example.com', 'eli', 'dana'],
        ['comment', null, c1.body.id, 'dana'],
        ['comment', null, c2.body.id, 'dana'],
      ],
    )
    t.ok(one.history.every((h: any) => typeof h.at === 'string' && h.actor.id === c1.body.author.id))
    const same = await s.request('PATCH', `/alerts/${a}`, { assignee: 'eli' }, as(triager))
    t.equal(same.body.history.length, 5, 'setting the value it has is no change')
    const cleared = await s.request('PATCH', `/alerts/${b}`, { assignee: 'x' }, as(triager))
    t.equal(cleared.status, 200)
    const none = await s.request('PATCH', `/alerts/${b}`, { assignee: null }, as(triager))
    t.equal(none.body.assignee, null, 'null clears it')
    t.same(
      none.body.history.map((h: any) => [h.from, h.to]),
      [
        [null, 'x'],
        ['x', null],
      ],
    )
    const listed = (await s.request('GET', '/alerts?rule-id=T.Triage')).body.results as any[]
    t.equal(listed.find((x) => x.id === a).assignee, 'eli', 'the list shows the assignee')
    t.equal(listed.find((x) => x.id === a).comments, undefined, 'the list leaves comments to the alert page')
  })

  await t.test('bad input: a 400 naming the field, nothing changed', async (t) => {
    const before = await get(a!)
    const bad: Array<[string, string, unknown, string]> = [
      ['PATCH', `/alerts/${a}`, { assignee: 'x'.repeat(201) }, '/assignee'],
      ['PATCH', `/alerts/${a}`, { assignee: '' }, '/assignee'],
      ['PATCH', `/alerts/${a}`, { assignee: 'two\nlines' }, '/assignee'],
      ['PATCH', `/alerts/${a}`, { assignee: 7 }, '/assignee'],
      ['PATCH', `/alerts/${a}`, { assignee: 'ok', status: 'DONE' }, '/status'],
      ['PATCH', `/alerts/${a}`, { comments: [] }, '/comments'],
      ['PATCH', `/alerts/${a}`, {}, ''],
      ['POST', `/alerts/${a}/comments`, {}, '/text'],
      ['POST', `/alerts/${a}/comments`, { text: '' }, '/text'],
      ['POST', `/alerts/${a}/comments`, { text: '   \n ' }, '/text'],
      ['POST', `/alerts/${a}/comments`, { text: 'x'.repeat(4001) }, '/text'],
      ['POST', `/alerts/${a}/comments`, { text: 42 }, '/text'],
      ['POST', `/alerts/${a}/comments`, { text: 'bell \u0007' }, '/text'],
      ['POST', `/alerts/${a}/comments`, { text: 'ok', author: 'me' }, '/author'],
      ['POST', '/alerts/status', { ids: [], status: 'CLOSED' }, '/ids'],
      ['POST', '/alerts/status', { ids: Array.from({ length: 501 }, (_, i) => `x${i}`), status: 'CLOSED' }, '/ids'],
      ['POST', '/alerts/status', { ids: [a, 3], status: 'CLOSED' }, '/ids/1'],
      ['POST', '/alerts/status', { ids: [a], status: 'closed!' }, '/status'],
      ['POST', '/alerts/status', { ids: [a] }, '/status'],
    ]
    for (const [method, url, body, field] of bad) {
      const r = await s.request(method, url, body, as(triager))
      t.equal(r.status, 400, `${method} ${url} ${JSON.stringify(body).slice(0, 60)}`)
      t.ok(
        r.body.errors?.some((e: any) => e.path === field && e.message),
        `names ${field || 'the body'}: ${JSON.stringify(r.body.errors?.[0] ?? r.body.message)}`,
      )
    }
    for (const body of ['[]', '"text"', 'null'])
      t.equal(
        (await s.request('POST', `/alerts/${a}/comments`, body, { ...as(triager), 'content-type': 'application/json' }))
          .status,
        400,
      )
    t.equal((await s.request('POST', `/alerts/${a}/comments`, { text: 'x'.repeat(4000) }, as(triager))).status, 201)
    const after = await get(a!)
    t.same(after.history.slice(0, -1), before.history, 'only the valid comment changed the alert')
    t.equal(after.comments.length, before.comments.length + 1)
    t.equal((await s.request('POST', '/alerts/nope/comments', { text: 'x' }, as(triager))).status, 404)
    t.equal((await s.request('PATCH', '/alerts/nope', { assignee: 'x' }, as(triager))).status, 404)
  })

  await t.test('permissions: View Alerts reads, Manage Alerts writes', async (t) => {
    t.equal((await s.request('GET', `/alerts/${a}`, undefined, as(viewer))).status, 200)
    const writes: Array<[string, string, unknown]> = [
      ['PATCH', `/alerts/${a}`, { assignee: 'mallory' }],
      ['POST', `/alerts/${a}/comments`, { text: 'hi' }],
      ['POST', '/alerts/status', { ids: [a], status: 'CLOSED' }],
    ]
    for (const [method, url, body] of writes) {
      t.equal((await s.request(method, url, body, as(viewer))).status, 403, `${method} ${url} without Manage Alerts`)
      t.equal((await s.send(method, url, body)).status, 401, `${method} ${url} without a token`)
    }
    const one = await get(a!)
    t.equal(one.assignee, 'eli', 'nothing changed')
  })

  await t.test('bulk status: per id updated or not-found, one history entry each', async (t) => {
    const r = await s.request('POST', '/alerts/status', { ids: [b, c, 'nope', c, d], status: 'RESOLVED' }, as(triager))
    t.equal(r.status, 200)
    t.same(r.body.results, [
      { id: b, outcome: 'updated' },
      { id: c, outcome: 'updated' },
      { id: 'nope', outcome: 'not-found' },
      { id: d, outcome: 'updated' },
    ])
    for (const id of [b, c, d]) {
      const one = await get(id!)
      t.equal(one.status, 'RESOLVED')
      t.match(one.history.at(-1), { field: 'status', from: 'OPEN', to: 'RESOLVED', actor: { name: 'dana' } })
    }
    t.same(
      ((await s.request('GET', '/alerts?rule-id=T.Triage&status=RESOLVED')).body.results as any[])
        .map((x) => x.id)
        .sort(),
      [b, c, d].sort(),
      'the list filters by the new status',
    )
  })

  await t.test("the answers are in the document's shapes (AlertDetail, AlertComment, AlertStatusResult)", async (t) => {
    const doc = (await s.send('GET', '/openapi.json')).body as any
    const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false })
    const check = (schema: string, body: unknown) => {
      const validate = ajv.compile(deref(doc, doc.components.schemas[schema]))
      t.ok(validate(body), `valid against ${schema}`, { errors: validate.errors })
      return validate
    }
    const detail = check('AlertDetail', await get(a!))
    t.notOk(detail({ ...(await get(a!)), history: [{ at: 'x' }] }), 'a broken history entry is refused')
    check('Alert', ((await s.request('GET', '/alerts?rule-id=T.Triage')).body.results as any[])[0])
    check('AlertComment', (await s.request('POST', `/alerts/${a}/comments`, { text: 'shape' }, as(triager))).body)
    check('AlertDetail', (await s.request('PATCH', `/alerts/${a}`, { status: 'TRIAGED' }, as(triager))).body)
    check('AlertStatusResult', (await s.request('POST', '/alerts/status', { ids: [a], status: 'TRIAGED' })).body)
    const patch = ajv.compile(deref(doc, doc.components.schemas.AlertPatch))
    for (const body of [{ assignee: 'x' }, { assignee: null }, { status: 'OPEN', assignee: 'y' }])
      t.ok(patch(body), `the document accepts ${JSON.stringify(body)}`)
    for (const body of [{}, { assignee: '' }, { assignee: 'x'.repeat(201) }, { title: 'x' }])
      t.notOk(patch(body), `the document refuses ${JSON.stringify(body).slice(0, 40)}`)
  })

  await t.test('all of it survives a restart (journal), and another (snapshot)', async (t) => {
    const want = await Promise.all([a, b, c, d].map((id) => get(id!)))
    for (let i = 0; i < 2; i++) {
      await s.close()
      // The first start reads the journal alone (the snapshot the close wrote is removed), the second the snapshot.
      if (i === 0) fs.rmSync(path.join(dataDir, 'detections', INDEX_FILE))
      s = await startInProcess({ dataDir, env })
      const got = await Promise.all([a, b, c, d].map((id) => get(id!)))
      t.same(got, want, `restart ${i + 1}: assignee, comments, history and status as they were`)
    }
    const r = await s.request('POST', `/alerts/${a}/comments`, { text: 'after the restarts' })
    t.equal(r.status, 201)
    t.equal((await get(a!)).comments.at(-1).text, 'after the restarts')
  })
})

t.test('an alert keeps its newest 200 comments; the history its newest 200 changes', async (t) => {
  const s = await startInProcess({ env })
  t.teardown(() => s.close())
  await commandRule(s, 'T.Many', 'many')
  await sendAndDetect(s, [commandRecord('id', 'many', '2026-11-20T10:00:00Z')])
  const [alert] = (await s.request('GET', '/alerts?rule-id=T.Many')).body.results as any[]
  for (let i = 0; i < 205; i++) {
    const r = await s.request('POST', `/alerts/${alert.id}/comments`, { text: `comment ${i}` })
    if (r.status !== 201) t.fail(`comment ${i}: ${r.status}`)
  }
  const one = (await s.request('GET', `/alerts/${alert.id}`)).body
  t.equal(one.comments.length, 200)
  t.equal(one.comments[0].text, 'comment 5', 'the oldest five are gone')
  t.equal(one.comments[199].text, 'comment 204')
  t.equal(one.history.length, 200)
})
