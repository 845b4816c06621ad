// `name-contains` (issue 27 item 8) matches the id or the display name, case-insensitively, as the
// console's `Search rules` box ("Id or display name") promises: a rule with a display name is found
// by part of its id too, and by part of its display name; a rule without one by its id.
import t from 'tap'
import { SAMPLE_BODIES } from '../helpers/rulekeeper.js'
import { startInProcess } from '../helpers/in-process.js'

t.test('name-contains: the id or the display name', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const seed = [
    SAMPLE_BODIES.simple('Search.Named.Zebra', { displayName: 'Striped horse' }),
    SAMPLE_BODIES.simple('Search.Plain.Okapi', { displayName: '' }),
    SAMPLE_BODIES.simple('Search.Other.Lion', { displayName: 'Big cat zebra hunter' }),
  ]
  for (const body of seed) t.equal((await s.request('POST', '/simple-rules', body)).status, 200)
  const ids = async (q: string) =>
    (await s.request('GET', `/simple-rules?name-contains=${encodeURIComponent(q)}`)).body.results.map(
      (r: { id: string }) => r.id,
    )
  t.same(await ids('named.zeb'), ['Search.Named.Zebra'], 'part of the id of a rule with a display name')
  t.same(await ids('STRIPED'), ['Search.Named.Zebra'], 'part of its display name, any case')
  t.same(await ids('zebra'), ['Search.Named.Zebra', 'Search.Other.Lion'], 'the id of one, the name of another')
  t.same(await ids('okapi'), ['Search.Plain.Okapi'], 'a rule without a display name, by its id')
  t.same(await ids('search.'), ['Search.Named.Zebra', 'Search.Other.Lion', 'Search.Plain.Okapi'])
  t.same(await ids('nothing-like-it'), [])
})
