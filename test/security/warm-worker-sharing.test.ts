// What rule code in a warm detection worker (real bubblewrap, real python3) can see of records it
// was not given: a rule scanning the interpreter's heap for records of another log type finds them
// only when it shares a worker with a rule of that log type (shared isolation, one worker: the
// trade-off docs/decisions.md states); with a worker of its own, shared or per-rule, it finds none.
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
