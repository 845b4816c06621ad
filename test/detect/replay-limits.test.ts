// The limits of `POST /replay` (docs/decisions.md, "Replay limits"): with `detection.replay.concurrency`
// 1, a replay asked while another runs is answered 503 with Retry-After and a clear message, and
// the next one after it runs; with `detection.replay.maxBytes` below the stored bytes of the hours
// [from, to) meets, the replay is a 400 naming the sizes, and a narrower range still runs; a replay
// reports its progress and stops at its next yield once its signal is aborted (what the route does
// when the connection closes). Records go through the real ingest route; the server is restarted
// over the same data directory.
import { stat } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { commandRecord, commandRule, DETECT_ENV, sendAndDetect } from './helpers.js'
import { simpleEngine } from '../../src/engine/simple/index.js'
import { replay as runReplay } from '../../src/detect/replay.js'
import { listDataFiles } from '../../src/detect/stored-log.js'
import { RuleIndex } from '../../src/rules/rule-index.js'
import { startInProcess } from '../helpers/in-process.js'
import { tempDir } from '../helpers/rulekeeper.js'

const env = DETECT_ENV
const DAY = { from: '2026-11-20T00:00:00Z', to: '2026-11-21T00:00:00Z' }
const HOUR_10 = { from: '2026-11-20T10:00:00Z', to: '2026-11-20T11:00:00Z' }

t.test('one replay at a time; a bound on the bytes read', async (t) => {
  const dataDir = tempDir('rk-replay-limits-')
  let s = await startInProcess({ dataDir, env, config: { detection: { replay: { concurrency: 1, queue: 0 } } } })
  t.teardown(() => s.close())
  await commandRule(s, 'R.Each', 'each')
  // 40,000 records in hour 10 (enough that a replay lasts a while), 200 in hour 11.
  const base = Date.parse('2026-11-20T10:00:00Z')
  for (let b = 0; b < 40; b++)
    await sendAndDetect(
      s,
      Array.from({ length: 1000 }, (_, i) => commandRecord('lim', 'each', new Date(base + b * 1000 + i).toISOString())),
    )
  await sendAndDetect(
    s,
    Array.from({ length: 200 }, (_, i) => commandRecord('lim', 'each', new Date(base + 3_600_000 + i).toISOString())),
  )

  const [a, b] = await Promise.all([s.request('POST', '/replay', DAY), s.request('POST', '/replay', DAY)])
  const ok = [a, b].filter((r) => r.status === 200)
  const busy = [a, b].filter((r) => r.status === 503)
  t.equal(ok.length, 1, `one replay ran (${a.status}, ${b.status})`)
  t.equal(busy.length, 1, 'the other was refused')
  t.equal(ok[0]?.body.records, 40_200)
  t.match(busy[0]?.body.message, /^replay is busy: 1 replay is running \(at most 1 at once\); retry in \d+ s$/)
  const retry = Number(busy[0]?.headers.get('retry-after'))
  t.ok(Number.isInteger(retry) && retry >= 1 && retry <= 3600, `Retry-After ${busy[0]?.headers.get('retry-after')}`)
  const again = await s.request('POST', '/replay', HOUR_10)
  t.equal(again.status, 200, 'the slot is free once the replay has answered')
  t.equal(again.body.records, 40_000)
  await s.close()

  // The stored bytes of hour 10 and of the whole day, as the replay counts them (durable lengths).
  const logsRoot = path.join(dataDir, 'logs')
  const sizes = new Map<string, number>()
  for (const f of await listDataFiles(logsRoot, 'Editor.Audit')) sizes.set(f, (await stat(path.join(logsRoot, f))).size)
  const hour10 = [...sizes].filter(([f]) => f.includes('hour=10')).reduce((n, [, v]) => n + v, 0)
  const day = [...sizes.values()].reduce((n, v) => n + v, 0)
  t.ok(hour10 > 0 && day > hour10, `hour 10: ${hour10} bytes of ${day}`)
  // A replay stops at its next yield once its signal is aborted (the route aborts when the
  // connection closes); progress is reported on the way.
  const base0 = { logsRoot, index: RuleIndex.empty(), engines: { simple: simpleEngine } }
  const range = { fromMs: Date.parse(DAY.from), toMs: Date.parse(DAY.to) }
  const seen: Array<[number, number]> = []
  const full = await runReplay({ ...base0, ...range, progress: (read, total) => seen.push([read, total]) })
  t.equal(full.records, 40_200)
  // Reported after each 10 ms of work: how often depends on the machine's speed, at least twice here.
  t.ok(seen.length >= 2, `progress reported ${seen.length} times`)
  t.ok(
    seen.every(([read, total], i) => total === day && read <= total && (i === 0 || read > seen[i - 1]![0])),
    'bytes read grow towards the total',
  )
  const stop = new AbortController()
  let reports = 0
  await t.rejects(
    runReplay({
      ...base0,
      ...range,
      signal: stop.signal,
      progress: () => {
        if (++reports === 1) stop.abort(new Error('the caller went away'))
      },
    }),
    /the caller went away/,
  )
  t.equal(reports, 1, 'it stopped at the yield after the abort')

  s = await startInProcess({ dataDir, env, config: { detection: { replay: { maxBytes: hour10 } } } })
  const narrow = await s.request('POST', '/replay', HOUR_10)
  t.equal(narrow.status, 200, narrow.text)
  t.equal(narrow.body.records, 40_000)
  const wide = await s.request('POST', '/replay', DAY)
  t.equal(wide.status, 400, wide.text)
  t.match(
    wide.body.message,
    /^\[from, to\) covers [\d.]+ MiB of stored records, more than a replay may read \([\d.]+ MiB\): narrow the range$/,
  )
})

t.test('bad replay limits are configuration errors', async (t) => {
  await t.rejects(
    startInProcess({ env, config: { detection: { replay: { concurrency: 0, burst: 2 } } } }),
    /detection\.replay\.burst: unknown key[\s\S]*detection\.replay\.concurrency: must be a positive integer/,
  )
})
