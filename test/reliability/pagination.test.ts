// Cursor pagination under concurrent writes: ~300 simple rules (some with non-ASCII ids, so byte
// order differs from UTF-16 order) are walked 7 at a time while other clients create new ids and
// delete or replace designated ones. A walk never repeats an id, never skips one that stayed
// untouched, returns ids in byte order and ends with next = null; an altered cursor is a 400.
// The walk is paced on the writers' progress (after each page it waits until one more write has
// been answered, or the writers are done), so writes land between pages however fast either runs.
import fs from 'node:fs'
import t from 'tap'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { SAMPLE_BODIES } from '../helpers/rulekeeper.js'
import { waitFor } from '../helpers/wait.js'

const LIMIT = 7
const SEED = 300
/** Ids whose UTF-8 byte order differs from JavaScript's default (UTF-16) string order. */
const EXOTIC = ['Page.é', 'Page.Ω', 'Page.Ａ', 'Page.😀', 'Page.𝔸', 'Page.\uFFE1', 'Page.a', 'Page.B', 'Page.~']

const byteCompare = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))
const q = '?run-tests-first=false'
const enc = encodeURIComponent

async function seed(s: InProcessServer, ids: string[]): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: 6 }, async () => {
      while (next < ids.length) {
        const id = ids[next++]!
        const res = await s.request('POST', `/simple-rules${q}`, SAMPLE_BODIES.simple(id, { description: 'seed' }))
        if (res.status !== 200) throw new Error(`seeding ${id}: ${res.status} ${res.text}`)
      }
    }),
  )
}

/** Every simple-rule id, by walking with the maximum page size (no writes run meanwhile). */
async function allIds(s: InProcessServer): Promise<string[]> {
  const out: string[] = []
  let cursor: string | null = null
  for (let i = 0; i < 100; i++) {
    const res = await s.request('GET', `/simple-rules?limit=1000${cursor ? `&cursor=${enc(cursor)}` : ''}`)
    if (res.status !== 200) throw new Error(`list: ${res.status} ${res.text}`)
    out.push(...res.body.results.map((r: { id: string }) => r.id))
    cursor = res.body.next
    if (cursor === null) return out
  }
  throw new Error('listing did not end')
}

t.test(
  'a paginated walk under concurrent creates, replaces and deletes repeats nothing and skips nothing untouched',
  async (t) => {
    t.setTimeout(180_000)
    const s = await startInProcess()
    t.teardown(async () => {
      await s.close()
      fs.rmSync(s.dataDir, { recursive: true, force: true })
    })

    const numbered = Array.from({ length: SEED - EXOTIC.length }, (_, i) => `Page.${String(i).padStart(3, '0')}`)
    const seeded = [...numbered, ...EXOTIC]
    await seed(s, seeded)
    const before = await allIds(s)
    t.ok(
      seeded.every((id) => before.includes(id)),
      `all ${SEED} seeded ids are listed`,
    )

    // Designated subsets, spread over the whole id range: deleted, and replaced, during the walk.
    const toDelete = numbered.filter((_, i) => i % 7 === 3).concat(['Page.Ω', 'Page.a'])
    const toReplace = numbered.filter((_, i) => i % 11 === 5).concat(['Page.😀'])
    const touched = new Set([...toDelete, ...toReplace])
    const untouched = before.filter((id) => !touched.has(id))
    // New ids land between existing ones all over the range (right after their numbered neighbour).
    const toCreate = numbered.filter((_, i) => i % 3 === 0).map((id, k) => `${id}.new${k}`)
    const created = new Set<string>()

    let walking = true
    let writersDone = 0
    const writeStatuses: Array<{ op: string; id: string; status: number }> = []
    let writesDuringWalk = 0
    const note = (op: string, id: string, status: number) => {
      writeStatuses.push({ op, id, status })
      if (walking) writesDuringWalk++
    }
    const creator = async () => {
      for (const id of toCreate) {
        if (!walking) return
        const res = await s.request('POST', `/simple-rules${q}`, SAMPLE_BODIES.simple(id, { description: 'new' }))
        note('create', id, res.status)
        if (res.status === 200) created.add(id)
      }
    }
    const deleter = async () => {
      for (const id of toDelete) {
        if (!walking) return
        note('delete', id, (await s.request('DELETE', `/simple-rules/${enc(id)}`)).status)
      }
    }
    const replacer = async () => {
      for (let round = 0; round < 5 && walking; round++) {
        for (const id of toReplace) {
          if (!walking) return
          const res = await s.request(
            'PUT',
            `/simple-rules/${enc(id)}${q}`,
            SAMPLE_BODIES.simple(id, { description: `round ${round}` }),
          )
          note('replace', id, res.status)
        }
      }
    }

    const walk = async () => {
      const pages: Array<{ ids: string[]; next: string | null; status: number }> = []
      let cursor: string | null = null
      try {
        for (let i = 0; i < 500; i++) {
          const res = await s.request('GET', `/simple-rules?limit=${LIMIT}${cursor ? `&cursor=${enc(cursor)}` : ''}`)
          if (res.status !== 200) {
            pages.push({ ids: [], next: null, status: res.status })
            break
          }
          pages.push({
            ids: res.body.results.map((r: { id: string }) => r.id),
            next: res.body.next,
            status: res.status,
          })
          cursor = res.body.next
          if (cursor === null) break
          // Writes land between pages (the interleaving is the point): one more answered first.
          const answered = writeStatuses.length
          await waitFor(
            'a write answered since the last page, or the writers done',
            () => writeStatuses.length > answered || writersDone === 3,
            60_000,
            2,
          )
        }
      } finally {
        walking = false
      }
      return pages
    }

    const counted = (writes: Promise<void>) => writes.finally(() => writersDone++)
    const [pages] = await Promise.all([walk(), counted(creator()), counted(deleter()), counted(replacer())])
    t.comment(`${pages.length} pages; ${writesDuringWalk} writes landed while walking`)

    t.same(
      pages.filter((p) => p.status !== 200),
      [],
      'every page answers 200',
    )
    t.equal(pages.at(-1)?.next, null, 'next is null on the last page')
    t.same(
      pages.slice(0, -1).filter((p) => typeof p.next !== 'string'),
      [],
      'every other page has a next cursor',
    )
    t.same(
      pages.filter((p) => p.ids.length > LIMIT),
      [],
      `no page has more than ${LIMIT} results`,
    )
    t.same(
      writeStatuses.filter((w) => w.status >= 500),
      [],
      'no concurrent write answered 5xx',
    )
    t.ok(writesDuringWalk >= 10, 'creates, replaces and deletes really ran during the walk')
    t.ok(
      writeStatuses.some((w) => w.op === 'delete' && w.status === 204) && created.size > 0,
      'some deletes and creates succeeded during the walk',
    )

    const seen = pages.flatMap((p) => p.ids)
    const counts = new Map<string, number>()
    for (const id of seen) counts.set(id, (counts.get(id) ?? 0) + 1)
    t.same(
      [...counts].filter(([, n]) => n > 1),
      [],
      'no id is returned twice',
    )
    t.same(
      untouched.filter((id) => counts.get(id) !== 1),
      [],
      `each of the ${untouched.length} ids untouched during the walk appears exactly once`,
    )
    const known = new Set([...before, ...created, ...toCreate])
    t.same(
      seen.filter((id) => !known.has(id)),
      [],
      'every returned id existed or was created meanwhile',
    )
    const outOfOrder = seen.flatMap((id, i) => (i > 0 && byteCompare(seen[i - 1]!, id) >= 0 ? [[seen[i - 1], id]] : []))
    t.same(outOfOrder, [], 'ids come in strictly increasing byte order across all pages')
    const exoticOrder = seen.filter((id) => EXOTIC.includes(id))
    t.same(
      exoticOrder,
      [...exoticOrder].sort(byteCompare),
      'non-ASCII ids are ordered by UTF-8 bytes, not UTF-16 units',
    )
  },
)

t.test('an altered or foreign cursor is a 400', async (t) => {
  t.setTimeout(60_000)
  const s = await startInProcess()
  t.teardown(async () => {
    await s.close()
    fs.rmSync(s.dataDir, { recursive: true, force: true })
  })
  for (let i = 0; i < 5; i++)
    t.equal(
      (await s.request('POST', `/simple-rules${q}`, SAMPLE_BODIES.simple(`Cursor.${i}`))).status,
      200,
      `seed Cursor.${i}`,
    )
  const first = await s.request('GET', '/simple-rules?limit=2')
  t.equal(first.status, 200, 'the first page answers 200')
  const cursor: string = first.body.next
  t.type(cursor, 'string', 'the first page has a next cursor')
  const ok = await s.request('GET', `/simple-rules?limit=2&cursor=${enc(cursor)}`)
  t.equal(ok.status, 200, 'the unaltered cursor works')

  const flipFirst = (cursor[0] === 'A' ? 'B' : 'A') + cursor.slice(1)
  const altered: Record<string, string> = {
    truncated: cursor.slice(0, -4),
    'first character changed': flipFirst,
    'a character outside base64url appended': `${cursor}!`,
    'padded with +/=': `${cursor}+/==`,
    reversed: [...cursor].reverse().join(''),
    doubled: cursor + cursor,
    'not a cursor': 'not-a-cursor',
    'base64 of plain text': Buffer.from('hello world').toString('base64url'),
    'base64 of a JSON array': Buffer.from('[1,2,3]').toString('base64url'),
  }
  for (const [what, c] of Object.entries(altered)) {
    const res = await s.request('GET', `/simple-rules?limit=2&cursor=${enc(c)}`)
    t.equal(res.status, 400, `cursor ${what} → 400`)
    t.type(res.body?.message, 'string', `cursor ${what}: the 400 carries a message`)
  }
  const foreign = await s.request('GET', `/scheduled-rules?limit=2&cursor=${enc(cursor)}`)
  t.equal(foreign.status, 400, 'a simple-rules cursor on /scheduled-rules → 400')
})
