// What rule code in a warm detection worker (real bubblewrap, real python3) can see of records it
// was not given: a rule scanning the interpreter's heap for records of another log type finds them
// only when it shares a worker with a rule of that log type (shared isolation, one worker: the
// trade-off docs/decisions.md states); with a worker of its own, shared or per-rule, it finds none.
// Through the event's own methods, a rule cannot change what its neighbour in a worker reads.
import t from 'tap'
import type { RuleFile } from '../../src/rules/model.js'
import { createPythonEngine, type PythonDetectionSettings } from '../../src/engine/python/index.js'
import { contextWith } from '../engine/python/fixtures.js'

const rule = (id: string, logType: string, source: string): RuleFile => ({
  kind: 'python',
  id,
  path: `rules/${id}.yml`,
  data: { AnalysisType: 'rule', RuleID: id, Filename: `${id}.py`, LogTypes: [logType], Severity: 'Low' },
  pythonSource: source,
  pythonPath: `rules/${id}.py`,
})

// Every list on the heap (the parsed batch is one) searched for another log type's records.
const SPY = rule(
  'Spy',
  'Editor.Audit',
  `import gc


def rule(event):
    return True


def title(event):
    for o in gc.get_objects():
        if isinstance(o, list):
            for x in o:
                if isinstance(x, dict) and x.get("p_log_type") == "Other.Log":
                    return "seen: " + str(x.get("secret"))
    return "none"
`,
)
const OTHER = rule('Other', 'Other.Log', 'def rule(event):\n    return False\n')
const mine = [{ p_log_type: 'Editor.Audit', n: 1 }]
const theirs = [{ p_log_type: 'Other.Log', secret: 'the other log type' }]

async function spyTitle(poolSize: number, detection: PythonDetectionSettings): Promise<unknown> {
  const python = createPythonEngine({ command: 'python3', poolSize, timeoutMs: 5000, detection })
  try {
    const ctx = contextWith()
    // Asked in the same turn, as the detector asks every rule of a chunk: one batch.
    const [spy, other] = await Promise.all([
      python.evaluateBatch(SPY, ctx, mine),
      python.evaluateBatch(OTHER, ctx, theirs),
    ])
    if (!('results' in spy) || !('results' in other)) throw new Error(JSON.stringify({ spy, other }))
    const first = spy.results[0]
    return first && 'functions' in first ? first.functions.title?.output : first
  } finally {
    await python.pool.close()
  }
}

t.test('shared, one worker: rules of both log types share it, and the spy finds the other records', async (t) => {
  t.equal(await spyTitle(1, { isolation: 'shared' }), 'seen: the other log type', 'the scan works (the trade-off)')
})

t.test('shared, two workers: a worker gets only its rules’ log types', async (t) => {
  t.equal(await spyTitle(2, { isolation: 'shared' }), 'none')
})

t.test('per-rule: a worker of its own gets only its own records', async (t) => {
  t.equal(await spyTitle(1, { isolation: 'per-rule' }), 'none')
})

// Rules of one worker read the same event objects (one per record and data model). Through the
// event's own methods nothing they reach is writable: what deep_walk, to_dict/copy and a slice hand
// out are copies, so a rule changing them does not change what the next rule reads.
const MUTATOR = rule(
  'Mutator',
  'Editor.Audit',
  `def rule(event):
    event.deep_walk("a")["b"]["c"] = "changed by deep_walk"
    event["items"][0:1][0]["x"] = "changed by a slice"
    event.to_dict()["a"]["b"]["c"] = "changed by to_dict"
    for name, attempt in (("set", lambda: event["a"].__setitem__("b", 1)),
                          ("attr", lambda: setattr(event["a"]["b"], "_data", {}))):
        try:
            attempt()
        except TypeError:
            pass
    return False
`,
)
const READER = rule(
  'Reader',
  'Editor.Audit',
  `def rule(event):
    return True


def title(event):
    return "%s / %s / %s" % (event.deep_get("a", "b", "c"), event["items"][0]["x"], event.udm("a"))
`,
)

t.test('shared, one worker: a rule cannot change the record its neighbour reads through the event', async (t) => {
  const python = createPythonEngine({
    command: 'python3',
    poolSize: 1,
    timeoutMs: 5000,
    detection: { isolation: 'shared' },
  })
  try {
    const ctx = contextWith()
    const records = [{ p_log_type: 'Editor.Audit', a: { b: { c: 'original' } }, items: [{ x: 'original' }] }]
    const [mutator, reader] = await Promise.all([
      python.evaluateBatch(MUTATOR, ctx, records),
      python.evaluateBatch(READER, ctx, records),
    ])
    t.same(mutator, { results: [null] }, 'the mutating rule ran first, without an error')
    const first = 'results' in reader ? reader.results[0] : reader
    t.equal(
      first && 'functions' in first ? first.functions.title?.output : first,
      "original / original / ImmutableCaseInsensitiveDict({'b': {'c': 'original'}})",
    )
  } finally {
    await python.pool.close()
  }
})
