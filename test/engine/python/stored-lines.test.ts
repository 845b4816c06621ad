// Detection gives a Python rule the record as stored (real bubblewrap, real python3): the worker
// decodes the stored line itself, as Panther's engine decodes an event's JSON, so `1.0` stays a
// float and a large integer stays exact (re-serializing a JavaScript parse made them `1` and a
// rounded number). A damaged line is evaluated by no rule, and its neighbours keep their answers.
import t from 'tap'
import { evaluateRecords } from '../../../src/detect/evaluate-records.js'
import type { LiveIndex, LiveRule } from '../../../src/detect/live-rules.js'
import { StoredRecord } from '../../../src/detect/stored-log.js'
import { createPythonEngine } from '../../../src/engine/python/index.js'
import type { IndexedRule } from '../../../src/rules/rule-index.js'
import { ruleMeta } from '../../detect/rule-meta.js'
import { contextWith, streamingRule } from './fixtures.js'

const stored = (i: number, body: string) =>
  new StoredRecord(
    'f.ndjson',
    i * 100,
    i * 100 + 99,
    `{${body},"p_log_type":"Editor.Audit"}`,
    'p',
    `r${i}`,
    'Editor.Audit',
    '',
  )

t.test('a rule reads the stored line as Python decodes it', async (t) => {
  const python = createPythonEngine({ command: 'python3', poolSize: 1, timeoutMs: 5_000 })
  t.teardown(() => python.pool.close())
  const ctx = contextWith()
  const file = streamingRule(
    'A.Float',
    'def rule(event):\n    return isinstance(event.get("x"), float) or event.get("x") == 12345678901234567891\n',
  )
  const compiled = python.live(
    { id: file.id, kind: 'python', path: file.path, file, view: {} } as unknown as IndexedRule,
    ctx,
  )
  if ('error' in compiled || !('batch' in compiled)) throw new Error('not a batch rule')
  const rule: LiveRule = { meta: ruleMeta({ id: file.id, kind: 'python' }), batch: compiled.batch, hits: compiled.hits }
  const live: LiveIndex = {
    revision: null,
    byLogType: new Map([['Editor.Audit', [rule]]]),
    broken: [],
    rules: 1,
    batched: [rule],
  }
  const chunk = [
    stored(0, '"x":1.0'),
    stored(1, '"x":1'),
    stored(2, '"x":tru'), // damaged: read by neither JSON.parse nor Python
    stored(3, '"x":2.5e0'),
    stored(4, '"x":12345678901234567891'),
    stored(5, '"x":"1.0"'),
  ]
  t.equal(chunk[2]!.readable, false, 'the damaged line does not parse')
  const evaluations = await evaluateRecords(live, chunk)
  t.same(evaluations.failed, [])
  const matched = chunk.map((_, i) => evaluations.hitsAt?.(i)?.map(([, a]) => ('matched' in a ? a.matched : a.error)))
  t.same(
    matched,
    [[true], undefined, undefined, [true], [true], undefined],
    '1.0 and 2.5e0 are floats, the large integer exact, the damaged line evaluated by no one',
  )
})
