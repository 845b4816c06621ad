// The alert fields of a Python rule's match from what its functions reported (Panther's fallbacks,
// src/engine/python/live-evaluation.ts): title → DisplayName → RuleID, dedup → title, severity → Severity,
// alert_context → {}, description/reference/runbook over the rule's fields, destinations as
// returned; a function that raised is a fallback and an error; no match and rule() errors.
import t from 'tap'
import type { FunctionOutcome } from '../../src/engine/engine.js'
import { MAX_DEDUP } from '../../src/detect/grouping.js'
import { pythonEvaluation } from '../../src/engine/python/live-evaluation.js'

const rule = { id: 'Py.Rule', displayName: 'A rule', severity: 'MEDIUM' }
const ok = (output: unknown): FunctionOutcome => ({ output, error: null })
const raised = (error: string): FunctionOutcome => ({ output: null, error })
const match = (functions: Record<string, FunctionOutcome>, r = rule) =>
  pythonEvaluation({ functions: { detection: ok(true), ...functions } }, r) as any

t.test('no match, a rule() error', async (t) => {
  t.same(pythonEvaluation(null, rule), { matched: false })
  // one read-only object for every "no match" (a chunk at 100 rules is 500,000 answers, not 500,000 objects)
  t.equal(pythonEvaluation(null, rule), pythonEvaluation(null, { ...rule, id: 'Py.Other' }), 'one object')
  t.ok(Object.isFrozen(pythonEvaluation(null, rule)), 'that nobody can change')
  t.same(pythonEvaluation({ error: "KeyError: 'x' (r.py, line 2)" }, rule), { error: "KeyError: 'x' (r.py, line 2)" })
})

t.test('only rule(): the rule’s own fields', async (t) => {
  t.same(match({}), {
    matched: true,
    title: 'A rule',
    dedup: 'A rule',
    severity: 'MEDIUM',
    alertContext: {},
    destinations: undefined,
  })
  const noName = match({}, { ...rule, displayName: '' })
  t.equal(noName.title, 'Py.Rule', 'no DisplayName: the rule id')
  t.equal(noName.dedup, 'Py.Rule')
})

t.test('every function reported', async (t) => {
  const m = match({
    title: ok('T'),
    dedup: ok('D'),
    severity: ok('CRITICAL'),
    alertContext: ok({ a: 1 }),
    description: ok('desc'),
    reference: ok('ref'),
    runbook: ok('run'),
    destinations: ok(['x']),
  })
  t.same(m, {
    matched: true,
    title: 'T',
    dedup: 'D',
    severity: 'CRITICAL',
    alertContext: { a: 1 },
    destinations: ['x'],
    description: 'desc',
    reference: 'ref',
    runbook: 'run',
  })
  t.same(match({ destinations: ok('SKIP') }).destinations, 'SKIP')
  t.same(match({ destinations: ok([]) }).destinations, [])
  t.equal(match({ destinations: ok(null) }).destinations, null, 'None: not set')
})

t.test('empty and None outputs fall back; a long dedup is cut', async (t) => {
  const m = match({ title: ok(''), dedup: ok(null), description: ok('') })
  t.equal(m.title, 'A rule')
  t.equal(m.dedup, 'A rule')
  t.notOk('description' in m)
  t.equal(match({ title: ok('T'), dedup: ok('') }).dedup, 'T', 'dedup falls back to the title')
  t.equal(match({ dedup: ok('d'.repeat(MAX_DEDUP + 5)) }).dedup.length, MAX_DEDUP)
})

t.test('a function that raised: the fallback, and an error naming it', async (t) => {
  const m = match({
    title: raised('KeyError: a'),
    severity: raised("severity() returned 'URGENT', expected one of INFO, LOW, MEDIUM, HIGH, CRITICAL or DEFAULT"),
    alertContext: raised('ValueError: b'),
    destinations: raised('RuntimeError: c'),
    dedup: ok('D'),
  })
  t.equal(m.matched, true, 'the match stands')
  t.equal(m.title, 'A rule')
  t.equal(m.dedup, 'D')
  t.equal(m.severity, 'MEDIUM')
  t.same(m.alertContext, {})
  t.equal(m.destinations, undefined, 'not set: OutputIds, then severity route it')
  t.same(m.errors, [
    'title(): KeyError: a',
    "severity() returned 'URGENT', expected one of INFO, LOW, MEDIUM, HIGH, CRITICAL or DEFAULT",
    'alert_context(): ValueError: b',
    'destinations(): RuntimeError: c',
  ])
})
