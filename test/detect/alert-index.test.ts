// The alert index against a plain filter-and-sort of the same alerts: random alerts (some with equal
// createdAt), random status changes, random filter combinations and cursors; every page must equal
// the model's. Seeded (the seed is printed) so a failure reproduces.
import t from 'tap'
import { AlertIndex, type AlertQuery } from '../../src/detect/alert-index.js'
import type { Group } from '../../src/detect/grouping.js'
import { SeededRandom } from '../helpers/seeded-random.js'

const seed = Number(process.env.SEED ?? Date.now() % 1_000_000)
const rnd = new SeededRandom(seed)
const STATUSES = ['OPEN', 'TRIAGED', 'CLOSED', 'RESOLVED'] as const
const SEVS = ['INFO', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL']
const RULES = Array.from({ length: 12 }, (_, i) => `R.${i}`)

function alert(i: number): Group {
  // createdAt mostly increasing, with repeats (ties by id) and a few out of order
  const ms = Date.UTC(2026, 10, 20) + (rnd.bool(0.1) ? rnd.int(i + 1) : i) * 1000
  return {
    id: `a${String(rnd.int(1e9)).padStart(9, '0')}${i}`,
    ruleId: rnd.pick(RULES),
    severity: rnd.pick(SEVS),
    status: 'OPEN',
    createdAt: new Date(ms - (ms % 3000)).toISOString(),
  } as unknown as Group
}

function model(all: Group[], q: AlertQuery) {
  const cmp = (a: Group, b: Group) =>
    a.createdAt !== b.createdAt ? (a.createdAt! > b.createdAt! ? -1 : 1) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
  const rows = all
    .filter(
      (g) =>
        (!q.ruleIds || q.ruleIds.includes(g.ruleId)) &&
        (!q.severities || q.severities.includes(g.severity)) &&
        (!q.statuses || q.statuses.includes(g.status)) &&
        (!q.createdAfter || g.createdAt! >= q.createdAfter) &&
        (!q.createdBefore || g.createdAt! < q.createdBefore) &&
        (!q.after || cmp(g, q.after as Group) > 0),
    )
    .sort(cmp)
  return rows.slice(0, q.limit).map((g) => g.id)
}

t.test(`the index answers as a filter of every alert (seed ${seed})`, async (t) => {
  const index = new AlertIndex()
  const all: Group[] = []
  let mismatches = 0
  for (let step = 0; step < 3000; step++) {
    const g = alert(step)
    all.push(g)
    index.add(g)
    if (rnd.bool(0.2)) {
      const h = rnd.pick(all)
      const s = rnd.pick(STATUSES)
      index.setStatus(h, s)
      h.status = s
    }
    if (step % 10 !== 0) continue
    const some = <T>(xs: readonly T[]) => (rnd.bool(0.5) ? undefined : xs.filter(() => rnd.bool(0.3)).slice(0, 4))
    const time = () => all[rnd.int(all.length)]!.createdAt!
    const q: AlertQuery = {
      ruleIds: some(RULES),
      severities: some(SEVS),
      statuses: some(STATUSES),
      createdAfter: rnd.bool(0.2) ? time() : undefined,
      createdBefore: rnd.bool(0.2) ? time() : undefined,
      limit: 1 + rnd.int(30),
    }
    for (const k of ['ruleIds', 'severities', 'statuses'] as const) if (q[k]?.length === 0) q[k] = undefined
    // Follow the pages to the end (or a few of them), each equal to the model's page.
    for (let page = 0; page < 4; page++) {
      const got = index.query(q)
      const want = model(all, q)
      if (JSON.stringify(got.results.map((g) => g.id)) !== JSON.stringify(want)) {
        mismatches++
        if (mismatches < 3)
          t.same(
            got.results.map((g) => g.id),
            want,
            JSON.stringify(q),
          )
      }
      if (!got.next) {
        t.ok(
          model(all, { ...q, after: (got.results.at(-1) as { createdAt: string; id: string } | undefined) ?? q.after })
            .length === 0 || got.results.length === 0,
        )
        break
      }
      q.after = got.next
    }
  }
  t.equal(mismatches, 0, 'every page equals the model')
  t.equal(index.size, all.length)
})
