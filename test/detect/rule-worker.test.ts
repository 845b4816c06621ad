// The rule worker of live detection (src/detect/rule-worker.ts): simple rules (offloaded by their
// engine's `live` member, src/engine/simple/live.ts) evaluated on the worker thread answer exactly what the in-process evaluators answer, per record and rule slot;
// rules it cannot take stay in-process; a new revision replaces the rules; until it has loaded, and
// after a chunk it cannot evaluate, it answers null (the detector then evaluates in-process).
import t from 'tap'
import type { IndexedRule } from '../../src/rules/rule-index.js'
import type { RuleMeta } from '../../src/detect/grouping.js'
import { ruleMeta } from './rule-meta.js'
import type { Evaluation, LiveIndex, LiveRule } from '../../src/detect/live-rules.js'
import { simpleLive } from '../../src/engine/simple/live.js'
import { RuleWorker } from '../../src/detect/rule-worker.js'

const meta = (id: string): RuleMeta => ruleMeta({ id, revision: 'r1' })

function simple(id: string, data: Record<string, unknown>): LiveRule {
  // The simple compiler reads only the rule's file data.
  const rule = { id, kind: 'simple', file: { data: { RuleID: id, ...data } } } as unknown as IndexedRule
  const compiled = simpleLive(rule, {} as never)
  if (!('evaluate' in compiled)) throw new Error(`rule ${id}: ${JSON.stringify(compiled)}`)
  t.ok(compiled.offload, `rule ${id} carries what the worker builds it from`)
  return { meta: meta(id), ...compiled }
}

function index(rules: LiveRule[]): LiveIndex {
  return { revision: 'r1', byLogType: new Map([['Editor.Audit', rules]]), broken: [], rules: rules.length, batched: [] }
}

const records = Array.from({ length: 300 }, (_, i) => ({
  p_log_type: i % 7 === 0 ? 'Other.Type' : 'Editor.Audit',
  user_email: `user${i % 5}@example.com`,
  team_id: String(4800 + (i % 11)),
  metadata: { id: `m-${i}` },
  note: i % 13 === 0 ? 'naïve ✓ unicode' : 'plain',
}))
const lines = records.map((r) => JSON.stringify(r))

/** What the in-process evaluators answer, in the worker's form (slot order, "no match" left out). */
function inProcess(live: LiveIndex): Array<Array<[number, Evaluation]> | undefined> {
  return records.map((r) => {
    const rules = live.byLogType.get(r.p_log_type)
    if (!rules) return undefined
    const out: Array<[number, Evaluation]> = []
    rules.forEach((rule, slot) => {
      const e = rule.evaluate!(r)
      if (!('matched' in e) || e.matched) out.push([slot, e])
    })
    return out.length > 0 ? out : undefined
  })
}

const teamRule = simple('T.Team', {
  Severity: 'HIGH',
  Detection: [{ KeyPath: 'team_id', Condition: 'IsIn', Values: ['4801', '4803'] }],
  AlertTitle: 'team {team_id} by {user_email}',
  AlertContext: [{ KeyName: 'who', KeyValue: { Key: 'user_email' } }],
  GroupBy: [{ Key: 'user_email' }],
})
const unicodeRule = simple('T.Unicode', {
  Severity: 'LOW',
  Detection: [{ KeyPath: 'note', Condition: 'Contains', Value: '✓' }],
})
const neverRule = simple('T.Never', {
  Severity: 'LOW',
  Detection: [{ KeyPath: 'team_id', Condition: 'Equals', Value: 'none' }],
})

t.test('the worker answers what the in-process evaluators answer', async (t) => {
  const failures: string[] = []
  const worker = new RuleWorker((m) => failures.push(m))
  t.teardown(() => worker.close())
  const live = index([teamRule, neverRule, unicodeRule])
  t.equal(await worker.evaluate(live, lines), null, 'until the worker has loaded: in-process')
  t.equal(await worker.ready(), true)
  const out = await worker.evaluate(live, lines)
  t.ok(out, 'the worker evaluated the chunk')
  t.same(out!.covered.get('Editor.Audit'), { slots: [true, true, true], all: true })
  const expected = inProcess(live)
  t.ok(expected.filter(Boolean).length > 50, 'the chunk has matches')
  t.same(out!.hits, expected)
  t.match(out!.hits[1], [[0, { matched: true, title: 'team 4801 by user1@example.com', severity: 'HIGH' }]])
  t.same(failures, [])
})

t.test('rules the worker cannot take stay in-process; a new revision replaces the rules', async (t) => {
  const worker = new RuleWorker(() => {})
  t.teardown(() => worker.close())
  const wrapped: LiveRule = { meta: meta('T.Wrapped'), evaluate: (ev) => teamRule.evaluate!(ev) }
  t.equal(await worker.evaluate(index([wrapped]), lines), null, 'nothing for the worker: null')
  t.equal(await worker.ready(), true)
  const mixed = await worker.evaluate(index([wrapped, unicodeRule]), lines)
  t.same(mixed!.covered.get('Editor.Audit'), { slots: [false, true], all: false })
  t.ok(
    mixed!.hits.every((h) => h === undefined || h.every(([slot]) => slot === 1)),
    'only the slot the worker holds is answered',
  )
  t.same(mixed!.hits, inProcess(index([{ meta: meta('x'), evaluate: () => ({ matched: false }) }, unicodeRule])))
  const next = index([teamRule])
  t.same((await worker.evaluate(next, lines))!.hits, inProcess(next), 'the next revision’s rules')
  t.equal(await worker.evaluate(index([wrapped]), lines), null, 'nothing for the worker: null')
})

t.test('a damaged line is skipped by the worker; the other lines are evaluated', async (t) => {
  const failures: string[] = []
  const worker = new RuleWorker((m) => failures.push(m))
  t.teardown(() => worker.close())
  const live = index([teamRule])
  t.equal(await worker.ready(), true)
  const damaged = '{"p_log_type":"Editor.Audit","team_id":"4801"'
  const out = await worker.evaluate(live, [damaged, ...lines, '[1,2]'])
  t.ok(out, 'the chunk is evaluated')
  t.equal(out!.hits[0], undefined, 'no answer for the damaged line')
  t.equal(out!.hits[lines.length + 1], undefined, 'nor for a line that is not an object')
  t.same(out!.hits.slice(1, lines.length + 1), inProcess(live), 'the other lines keep their indexes')
  t.same(failures, [])
})

t.test('a chunk the worker cannot evaluate answers null, and the worker is not used again', async (t) => {
  const failures: string[] = []
  const worker = new RuleWorker((m) => failures.push(m))
  t.teardown(() => worker.close())
  t.equal(await worker.ready(), true)
  // A rule whose file data (what the worker compiles) does not compile there: the worker cannot
  // take the revision, which the main thread compiled (a bug, never a rule error).
  const broken = simple('T.Broken', { Severity: 'LOW', Detection: [{ KeyPath: 'team_id', Condition: 'Exists' }] })
  broken.offload = { ...broken.offload!, data: { RuleID: 'T.Broken', Severity: 'LOW', Detection: 'not a list' } }
  const live = index([broken])
  t.equal(await worker.evaluate(live, lines), null)
  t.equal(failures.length, 1)
  t.match(failures[0], /the rule worker could not evaluate a chunk: .*T\.Broken/)
  t.equal(await worker.evaluate(index([teamRule]), lines), null, 'the detector evaluates in-process from now on')
  t.equal(failures.length, 1, 'told once')
  t.equal(await worker.ready(), false)
})

t.test('the worker builds any engine’s offloaded rules, from the module their `live` member names', async (t) => {
  const { equalsLive } = await import('../helpers/live-kind.js')
  const failures: string[] = []
  const worker = new RuleWorker((m) => failures.push(m))
  t.teardown(() => worker.close())
  const rule = { id: 'T.Equals', kind: 'equals', file: { data: { field: 'team_id', value: '4803' } } }
  const compiled = equalsLive(rule as unknown as IndexedRule, {} as never)
  if (!('evaluate' in compiled)) throw new Error(JSON.stringify(compiled))
  t.match(compiled.offload?.module, /live-kind\.ts$/, 'the rule names its own module, not the simple engine')
  const live = index([{ meta: meta('T.Equals'), ...compiled }, unicodeRule])
  t.equal(await worker.ready(), true)
  const out = await worker.evaluate(live, lines)
  t.same(out!.covered.get('Editor.Audit'), { slots: [true, true], all: true }, 'both kinds run on the worker')
  t.same(out!.hits, inProcess(live))
  t.match(out!.hits[3], [[0, { matched: true, title: 'team_id is 4803' }]])
  t.same(failures, [])
})
