// WarmWorker's frame accounting against a scripted process (no sandbox): the result limit is each
// rule's, not the batch's; a silence after a rule's end frame kills the worker (the gap clock) and
// is that rule's overrun; a batch's finisher is cleared when the batch ends (the process's end is
// subscribed to once, so no batch's closure stays reachable from it); a batch in blocks is one write.
import t from 'tap'
import type { ServeBatch, ServePlanItem } from '../../../src/engine/python/protocol.js'
import { BLOCK_RECORDS } from '../../../src/engine/python/warm-blocks.js'
import { WarmWorker } from '../../../src/engine/python/warm-worker.js'
import { SCRIPTED_LIMITS, scriptedProcess } from './scripted-process.js'

const limits = SCRIPTED_LIMITS

/** A process that answers each batch line with `script` (the frames it sends), then stays silent. */
function scripted(script: (batch: number) => string[]) {
  let batches = 0
  return scriptedProcess((_line, send) => send(script(batches++)))
}

const item = (k: number): ServePlanItem => ({
  k,
  e: 'e0',
  tests: null,
  n: 1,
  timeoutMs: 100,
  budgetMs: 100,
  maxStops: 3,
})
const batch = (...plan: ServePlanItem[]): ServeBatch => ({
  load: [],
  globals: {},
  events: new Map([['e0', '[{}]']]),
  plan,
})
const progress = (count: number) => Array.from({ length: count }, () => '{"t":"p","i":0}')

t.test('the result limit is per rule', async (t) => {
  // 40 progress frames per rule: 600 bytes each, 1,200 in the batch, under 1,000 each
  const frames = ['{"t":"s","k":0}', ...progress(40), '{"t":"e","k":0,"n":1}']
  frames.push('{"t":"s","k":1}', ...progress(40), '{"t":"e","k":1,"n":1}', '{"t":"b"}')
  const worker = new WarmWorker(
    scripted(() => frames),
    limits,
    1000,
  )
  const runs = await worker.run(batch(item(0), item(1)))
  t.equal(runs.length, 2)
  t.same(
    runs.map((r) => r.end),
    [undefined, undefined],
    'neither rule was stopped',
  )
  t.notOk(worker.dead)
  t.notOk(worker.running, 'the finisher is cleared after the batch')

  const over = new WarmWorker(
    scripted(() => ['{"t":"s","k":0}', ...progress(70)]),
    limits,
    1000,
  )
  const [run] = await over.run(batch(item(0)))
  t.match(run?.end, { why: 'crashed', message: /more than 1000 bytes/ }, 'one rule past it is stopped')
  t.notOk(over.running)
})

t.test('silence after a rule has ended: the worker is killed, the overrun is that rule', async (t) => {
  const worker = new WarmWorker(
    scripted(() => ['{"t":"s","k":0}', '{"t":"e","k":0,"n":1}']),
    limits,
  )
  const started = Date.now()
  const runs = await worker.run(batch(item(0), item(1)))
  t.ok(Date.now() - started < 5000, 'bounded')
  t.equal(runs.length, 1)
  t.match(runs[0]?.end, { why: 'killed', message: /kept running past its end/ })
  t.ok(worker.dead)
  t.notOk(worker.running)
})

t.test('silence before the first rule: the worker is killed, no rule is blamed', async (t) => {
  const worker = new WarmWorker(
    scripted(() => []),
    limits,
  )
  const runs = await worker.run(batch(item(0)))
  t.same(runs, [])
  t.ok(worker.dead)
})

t.test('batches in a row on one worker each settle (one subscription to the process end)', async (t) => {
  const worker = new WarmWorker(
    scripted(() => ['{"t":"s","k":0}', '{"t":"e","k":0,"n":1}', '{"t":"b"}']),
    limits,
  )
  for (let i = 0; i < 20; i++) {
    const runs = await worker.run(batch(item(0)))
    t.equal(runs.length, 1)
    t.notOk(worker.running)
  }
  worker.kill()
  // a batch on a worker that has already exited settles at once
  await new Promise((r) => setImmediate(r))
  const runs = await worker.run(batch(item(0)))
  t.same(runs, [])
})

t.test(
  'a batch in blocks is written at once: a header line, then every block line (no round trip per block)',
  async (t) => {
    const writes: string[] = []
    const n = BLOCK_RECORDS * 2 + 1
    // Both rules over 3 blocks: a start and an end frame per rule and block, indexes over the batch.
    const frames: string[] = []
    for (const to of [BLOCK_RECORDS, BLOCK_RECORDS * 2, n])
      for (const k of [0, 1]) frames.push(`{"t":"s","k":${k}}`, `{"t":"e","k":${k},"n":${to}}`)
    frames.splice(1, 0, '{"t":"r","i":3,"f":{"detection":[true,null]}}')
    frames.push('{"t":"b"}')
    const worker = new WarmWorker(
      scriptedProcess((text, send) => {
        writes.push(text)
        send(frames)
      }),
      limits,
    )
    const records = Array.from({ length: n }, (_, i) => ({ i }))
    const plan = [0, 1].map((k) => ({ ...item(k), n }))
    const runs = await worker.run({ load: [], globals: {}, events: new Map([['e0', records]]), plan })
    t.equal(writes.length, 1, 'one write')
    const lines = writes[0]!.split('\n')
    t.same(lines.at(-1), '', 'ends with a newline')
    t.equal(lines.length - 2, 3, 'a header line and three block lines')
    t.match(JSON.parse(lines[0]!), { sets: [['e0', 3]], block: BLOCK_RECORDS })
    t.same(JSON.parse(lines[3]!), [{ i: n - 1 }], 'the last block holds the last record')
    t.same(
      runs.map((r) => [r.reached, r.end, [...r.results.keys()]]),
      [
        [n, undefined, [3]],
        [n, undefined, []],
      ],
    )
    t.notOk(worker.dead)
  },
)

t.test('a run that ends before its block’s last record without saying why is refused', async (t) => {
  const worker = new WarmWorker(
    scripted(() => ['{"t":"s","k":0}', '{"t":"e","k":0,"n":0}', '{"t":"b"}']),
    limits,
  )
  const [run] = await worker.run(batch(item(0)))
  t.match(run?.end, { why: 'crashed', message: /malformed/ })
  t.ok(worker.dead)
})
