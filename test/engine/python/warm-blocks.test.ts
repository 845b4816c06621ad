// A warm worker's batch in blocks (warm-worker.ts BLOCK_RECORDS; real bubblewrap, real python3):
// every record's answer lands at its own index across blocks (InlineFilters' subsets too); a rule
// that crashes its worker in a later block has the rest of its records run one-shot, and the rules
// it cut short run again whole; a rule's budget is its whole batch's, not each block's.
import t from 'tap'
import type { RecordOutcome } from '../../../src/engine/engine.js'
import { createPythonEngine } from '../../../src/engine/python/index.js'
import { BLOCK_RECORDS } from '../../../src/engine/python/warm-blocks.js'
import { contextWith, streamingRule } from './fixtures.js'

const rule = streamingRule

const N = BLOCK_RECORDS * 2 + 300
const records = Array.from({ length: N }, (_, n) => ({ n, kind: n % 3 === 0 ? 'x' : 'y' }))
const CRASH_AT = BLOCK_RECORDS + 200

const CRASHES = rule(
  'A.CrashesLate',
  `import os


def rule(event):
    if event["n"] == ${CRASH_AT}:
        os._exit(3)
    return False
`,
)
const EVERY = rule(
  'B.Every',
  'def rule(event):\n    return event["n"] % 97 == 5\n\n\ndef title(event):\n    return str(event["n"])\n',
)
const FILTERED = rule('C.Filtered', 'def rule(event):\n    return event["n"] % 2 == 0\n', {
  InlineFilters: [{ KeyPath: 'kind', Condition: 'Equals', Value: 'x' }],
})

const matched = (o: RecordOutcome) => o !== null && 'functions' in o

t.test('answers at their indexes across blocks; a late crash runs its neighbours again', async (t) => {
  const python = createPythonEngine({ command: 'python3', poolSize: 1, timeoutMs: 5000 })
  t.teardown(() => python.pool.close())
  const ctx = contextWith()
  const [crashes, every, filtered] = await Promise.all([
    python.evaluateBatch(CRASHES, ctx, records),
    python.evaluateBatch(EVERY, ctx, records),
    python.evaluateBatch(FILTERED, ctx, records),
  ])
  if (!('results' in crashes) || !('results' in every) || !('results' in filtered))
    throw new Error(JSON.stringify({ crashes, every, filtered }).slice(0, 500))
  t.same(
    every.results.flatMap((o, i) => (matched(o) ? [i] : [])),
    records.filter((r) => r.n % 97 === 5).map((r) => r.n),
    'B: the matches at their records',
  )
  t.ok(
    every.results.every((o, i) => !matched(o) || (o as any).functions.title.output === String(i)),
    'B: each title is its own record’s',
  )
  t.same(
    filtered.results.flatMap((o, i) => (matched(o) ? [i] : [])),
    records.filter((r) => r.kind === 'x' && r.n % 2 === 0).map((r) => r.n),
    'C: the filtered subset’s matches at their records',
  )
  t.ok(
    [...every.results, ...filtered.results].every((o) => o === null || matched(o)),
    'no errors for the rules the crash cut short',
  )
  const errors = crashes.results.flatMap((o, i) => (o && 'error' in o ? [[i, o.error] as const] : []))
  t.same(
    errors.map(([i]) => i),
    [CRASH_AT],
    'A: the crashing record is its one error',
  )
  t.match(errors[0]?.[1], /exited with code 3/)
  t.match(python.quarantined(), [], 'one strike is no quarantine')
})

t.test('a rule’s budget is its batch’s, not each block’s', async (t) => {
  const python = createPythonEngine({
    command: 'python3',
    poolSize: 1,
    timeoutMs: 5000,
    detection: { budgetMs: 300, budgetMsPerRecord: 0 },
  })
  t.teardown(() => python.pool.close())
  const slow = rule('D.Slow', 'import time\n\n\ndef rule(event):\n    time.sleep(0.002)\n    return True\n')
  const out = await python.evaluateBatch(slow, contextWith(), records)
  if (!('results' in out)) throw new Error(out.error)
  const done = out.results.filter(matched).length
  t.ok(done > 0 && done < BLOCK_RECORDS / 2, `${done} records evaluated within 300 ms at 2 ms each`)
  const stop = out.results.find((o) => o !== null && 'error' in o)
  t.match(stop, {
    error: /used up its budget of 300 ms for this batch \(\d+ records of this batch, from this one on\)/,
  })
})
