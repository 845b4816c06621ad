// Alert events: `GET /alerts/{id}/events` pages (limit 100, at random positions) of an alert with
// 20,000 events among 300,000 matches of other alerts in the same three event hours, through the
// alert-event index (src/detect/alert-events.ts), against the previous way in the same run: read
// and parse every committed match line of those hours on each call, sort, then open the data file
// once per record. The stored log, match files and checkpoint are written before the store opens
// (as a restart finds them); the calls are in-process (the route's work without HTTP).
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { AlertEventIndex } from '../src/detect/alert-events.js'
import { readStoredLines } from '../src/detect/stored-log.js'
import { DetectionStore } from '../src/detect/detection-store.js'
import type { Group } from '../src/detect/grouping.js'
import { createLogger } from '../src/log.js'
import { percentile, type BenchContext, type BenchModule, type BenchResult } from './lib.js'

const FULL_MATCHES = 300_000
const ALERT_EVENTS = 20_000
const HOURS = 3
const CALLS = 200
const LIMIT = 100

const bench: BenchModule = async (ctx: BenchContext): Promise<BenchResult[]> => {
  const total = Math.max(20_000, Math.round(FULL_MATCHES * ctx.scale))
  const mine = Math.max(2_000, Math.round(ALERT_EVENTS * ctx.scale))
  const dataDir = ctx.tmpDir
  const det = path.join(dataDir, 'detections')
  const alertId = 'a'.repeat(32)
  const start = Date.UTC(2026, 10, 20, 10)
  ctx.progress(`alert-events: writing ${total} stored records and matches over ${HOURS} hours`)
  const outputs: Record<string, number> = {}
  for (let h = 0; h < HOURS; h++) {
    const hour = String(10 + h)
    const partition = path.join('Editor.Audit', 'dt=2026-11-20', `hour=${hour}`, 'bench.ndjson')
    const logLines: string[] = []
    const matchLines: string[] = []
    let offset = 0
    for (let i = h; i < total; i += HOURS) {
      const eventTime = new Date(start + h * 3_600_000 + Math.floor((i / total) * 3_599_000)).toISOString()
      const ofAlert = i % Math.floor(total / mine) === 0
      const line = JSON.stringify({
        user_email: `user${i % 500}@example.com`,
        metadata: { id: `r${i}`, timestamp: eventTime },
        p_log_type: 'Editor.Audit',
        p_event_time: eventTime,
        p_row_id: `bench${String(i).padStart(10, '0')}`,
      })
      logLines.push(line)
      matchLines.push(
        JSON.stringify({
          id: `m${i}`,
          ruleId: ofAlert ? 'Bench.Many' : `Bench.R${i % 50}`,
          ruleKind: 'simple',
          revision: '0'.repeat(40),
          logType: 'Editor.Audit',
          eventTime,
          record: { partition, offset },
          dedup: `["user${i % 500}@example.com"]`,
          title: 'A benchmark match',
          severity: 'MEDIUM',
          alertContext: { user: `user${i % 500}` },
          signal: false,
          alertId: ofAlert ? alertId : `b${String(i % 5000).padStart(31, '0')}`,
        }),
      )
      offset += Buffer.byteLength(line) + 1
    }
    await mkdir(path.join(dataDir, 'logs', path.dirname(partition)), { recursive: true })
    await writeFile(path.join(dataDir, 'logs', partition), `${logLines.join('\n')}\n`)
    const rel = path.join('matches', 'dt=2026-11-20', `hour=${hour}`, 'matches-bench.ndjson')
    await mkdir(path.join(det, path.dirname(rel)), { recursive: true })
    const text = `${matchLines.join('\n')}\n`
    await writeFile(path.join(det, rel), text)
    outputs[rel] = Buffer.byteLength(text)
  }
  const checkpoint = { version: 1, logs: {}, outputs, lastKey: null, evaluatedAt: null, records: 0 }
  await writeFile(path.join(det, 'checkpoint.json'), JSON.stringify(checkpoint))
  const store = await DetectionStore.open(dataDir, createLogger({ level: 'silent' }))
  const group = {
    id: alertId,
    firstEventTime: new Date(start).toISOString(),
    lastEventTime: new Date(start + HOURS * 3_600_000 - 1000).toISOString(),
  } as Group
  const logsRoot = path.join(dataDir, 'logs')
  const index = new AlertEventIndex(store)
  let seed = 7
  const positions = Array.from({ length: CALLS }, () => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return Math.floor((seed / 2147483648) * (mine - LIMIT))
  })

  const after: number[] = []
  const before: number[] = []
  let count = 0
  const firstCall = performance.now()
  await index.locations(group)
  const coldMs = performance.now() - firstCall
  for (const [k, skip] of positions.entries()) {
    let t0 = performance.now()
    const locs = await index.locations(group)
    const page = await readStoredLines(logsRoot, locs.slice(skip, skip + LIMIT))
    after.push(performance.now() - t0)
    count = locs.length
    if (page.length !== LIMIT) throw new Error(`a page of ${page.length}`)
    if (k % 5 === 0) {
      // the previous way, every fifth position (it is slow)
      t0 = performance.now()
      const ms = await store.readMatches(
        Date.parse(group.firstEventTime),
        Date.parse(group.lastEventTime),
        (m) => m.alertId === alertId,
      )
      ms.sort((a, b) => {
        const ra = a.record as { partition: string; offset: number }
        const rb = b.record as { partition: string; offset: number }
        return ra.partition !== rb.partition ? (ra.partition < rb.partition ? -1 : 1) : ra.offset - rb.offset
      })
      // one open per record, as the previous route read each record of a page
      const old: unknown[] = []
      for (const m of ms.slice(skip, skip + LIMIT))
        old.push(...(await readStoredLines(logsRoot, [m.record as { partition: string; offset: number }])))
      before.push(performance.now() - t0)
      if (JSON.stringify(old) !== JSON.stringify(page)) throw new Error('the two ways gave different pages')
    }
  }
  await store.close()
  const p99 = percentile(after, 99)
  const p99Before = percentile(before, 99)
  return [
    {
      name: `alert events, GET /alerts/{id}/events, limit ${LIMIT}, an alert with ${count} events among ${total} matches, p99`,
      target: 'cheap (issue 16: no re-read of the match partitions per call)',
      value: Number(p99.toFixed(2)),
      unit: 'ms',
      baseline: {
        name: 'the previous way (read and parse every match of the hours, sort, one open per record), p99',
        value: Number(p99Before.toFixed(1)),
        unit: 'ms',
      },
      ratio: p99 / p99Before,
      pass: p99 < p99Before / 10,
      notes: `in-process, ${after.length} pages at random positions (median ${percentile(after, 50).toFixed(2)} ms) vs ${before.length} the previous way (median ${percentile(before, 50).toFixed(1)} ms), pages checked equal; the first call, which reads the ${HOURS} match files into the index: ${coldMs.toFixed(0)} ms; ${index.size} index entries`,
    },
  ]
}

export default bench
