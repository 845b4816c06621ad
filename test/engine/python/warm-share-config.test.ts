// `detection.python.share` reaches the warm workers (real bubblewrap, real python3): a rule that
// sleeps 50 ms on a record stays in its shared worker under the default share (250 ms a record), and
// is evicted to a worker of its own (the caller is told it is late) under `recordMs: 20`; the batch
// part (`batchBaseMs` + `batchPerRecordMs` × records) evicts a rule slow over many records. Evicted
// or not, every record gets its answer.
import t from 'tap'
import { createPythonEngine, type PythonDetectionSettings } from '../../../src/engine/python/index.js'
import { contextWith, streamingRule } from './fixtures.js'

const SLEEPY = streamingRule(
  'A.Sleepy',
  'import time\n\n\ndef rule(event):\n    time.sleep(event["sleep"])\n    return event["n"] == 1\n',
)

async function late(detection: PythonDetectionSettings, events: Record<string, unknown>[]) {
  const python = createPythonEngine({ command: 'python3', poolSize: 1, timeoutMs: 5000, detection })
  try {
    let told = false
    const out = await python.evaluateBatch(SLEEPY, contextWith(), events, undefined, undefined, () => (told = true))
    if (!('results' in out)) throw new Error(out.error)
    const matched = out.results.flatMap((o, i) => (o && 'functions' in o ? [i] : []))
    const errors = out.results.filter((o) => o && 'error' in o)
    return { told, matched, errors }
  } finally {
    await python.pool.close()
  }
}

const oneSlow = [
  { n: 0, sleep: 0.05 },
  { n: 1, sleep: 0 },
]

t.test('the default share keeps a rule 50 ms slow on a record in its worker', async (t) => {
  t.same(await late({}, oneSlow), { told: false, matched: [1], errors: [] })
})

t.test('share.recordMs: 20 evicts it (late), and its records are all answered', async (t) => {
  t.same(await late({ share: { recordMs: 20 } }, oneSlow), { told: true, matched: [1], errors: [] })
})

t.test('share.batchBaseMs and batchPerRecordMs: a rule slow over its batch is evicted', async (t) => {
  const many = Array.from({ length: 12 }, (_, n) => ({ n, sleep: 0.01 }))
  const share = { recordMs: 1000, batchBaseMs: 20, batchPerRecordMs: 0 }
  t.same(await late({ share }, many), { told: true, matched: [1], errors: [] })
  t.same(await late({ share: { ...share, batchBaseMs: 5000 } }, many), { told: false, matched: [1], errors: [] })
})
