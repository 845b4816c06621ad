// Attacks on the stored line's standard fields, through the real ingest route of a real server with
// live detection: a sender tries to make the tail that detection reads (readStandardTail in
// src/detect/stored-log.ts) lie — another log type, another event time, another place in stored
// order — with forged p_* keys at the top level (plain, escaped, given twice), nested at the very
// end of the record, inside strings with escaped quotes, behind whitespace or after the record, and
// tries to make the tail reader throw or spin with look-alike text of near a megabyte. Each test
// fails if the weakness it tries exists: what detection reads must be what the log source set.
import t from 'tap'
import { makeRecord, storedLines } from '../ingest/helpers.js'
import { commandRecord, commandRule, DETECT_ENV, postLog } from '../detect/helpers.js'
import { readStandardTail } from '../../src/detect/stored-log.js'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

const FORGED_TYPE = 'AWS.CloudTrail'
const FORGED_EVENT = '1999-01-01T00:00:00.000Z'
const FORGED_PARSE = '0000-00-00T00:00:00.000Z'
const forgedTail = `"p_log_type":"${FORGED_TYPE}","p_event_time":"${FORGED_EVENT}","p_parse_time":"${FORGED_PARSE}","p_row_id":"0"`

const alertsOf = async (s: InProcessServer, ruleId: string) => {
  const res = await s.request('GET', `/alerts?rule-id=${encodeURIComponent(ruleId)}&limit=1000`)
  if (res.status !== 200) throw new Error(`alerts: ${res.status} ${res.text.slice(0, 300)}`)
  return res.body.results as any[]
}
/** Matches of a rule over all its alerts (groups close with the dedup period), and the latest event time. */
const matchesOf = async (s: InProcessServer, ruleId: string) => {
  const alerts = await alertsOf(s, ruleId)
  return {
    events: alerts.reduce((sum, a) => sum + a.eventCount, 0),
    last: alerts
      .map((a) => a.lastEventTime as string)
      .sort()
      .pop(),
  }
}

let n = 0
/** A record matching T.Hit (and, read as AWS.CloudTrail, the CloudTrail rule), as compact text. */
function hitText(timestamp: string): string {
  const r = commandRecord('atk', 'hit', timestamp, { eventName: 'ConsoleLogin' }) as Record<string, any>
  r.metadata.id = `atk-${n++}`
  return JSON.stringify(r)
}
/** `text` with raw JSON `extra` spliced in before its last `}`. */
const splice = (text: string, extra: string) => `${text.slice(0, -1)},${extra}}`

t.test('forging the standard fields of a stored line', async (t) => {
  const dataDir = tempDir('rk-tail-attack-')
  const s = await startInProcess({ dataDir, env: DETECT_ENV })
  t.teardown(() => s.close())
  await commandRule(s, 'T.Hit', 'hit')
  // The sample rule of another log type: it matches eventName ConsoleLogin, which every attack
  // record carries. A record read as AWS.CloudTrail would alert here.
  const other = await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('T.OtherType'))
  t.equal(other.status, 200)

  /** Posts NDJSON lines, waits for detection; the ingest answer. */
  const send = async (lines: string[]) => {
    const res = await postLog(s, `${lines.join('\n')}\n`)
    await s.server.detection.detector.idle()
    return res
  }

  /** Every stored line: its tail is what JSON.parse reads at the top level, set by the log source. */
  const checkStoredTails = async (tt: typeof t) => {
    for (const { text } of await storedLines(dataDir, 'Editor.Audit')) {
      const p = JSON.parse(text)
      const tail = readStandardTail(text)
      tt.same(
        tail,
        [p.p_log_type, p.p_event_time, p.p_parse_time, p.p_row_id],
        `${p.metadata.id}: the tail is the record's`,
      )
      tt.equal(p.p_log_type, 'Editor.Audit', `${p.metadata.id}: the log type is the source's`)
      tt.equal(p.p_event_time, new Date(p.metadata.timestamp).toISOString(), `${p.metadata.id}: the event time`)
      tt.not(p.p_parse_time, FORGED_PARSE, `${p.metadata.id}: the parse time`)
    }
  }

  /** After each attack: no record reached the other log type's rule, detection runs. */
  const checkDetection = async (tt: typeof t) => {
    tt.same(await alertsOf(s, 'T.OtherType'), [], 'no record was evaluated as another log type')
    const status = await s.request('GET', '/status')
    tt.equal(status.body.detection.failed, false, 'detection runs')
  }

  await t.test('top-level forged fields (plain, escaped, twice) are rejected records', async (t) => {
    const base = hitText('2026-11-20T10:00:00Z')
    const forged = [
      splice(base, `"p_log_type":"${FORGED_TYPE}"`),
      splice(base, `"p_event_time":"${FORGED_EVENT}"`),
      splice(base, `"p_parse_time":"${FORGED_PARSE}"`),
      splice(base, `"p_row_id":"0"`),
      splice(base, `"p\\u005flog_type":"${FORGED_TYPE}"`),
      splice(base, `"\\u0070_event_time":"${FORGED_EVENT}"`),
      splice(base, `"p_log_type":"a","p_log_type":"${FORGED_TYPE}"`),
      `{${forgedTail},${base.slice(1)}`,
    ]
    const res = await send(forged)
    t.equal(res.status, 200)
    t.same({ a: res.body.accepted, r: res.body.rejected }, { a: 0, r: forged.length }, 'every one rejected')
    for (const e of res.body.errors) t.match(e.message, /top-level p_\* fields are reserved/)
    t.same(await storedLines(dataDir, 'Editor.Audit'), [], 'nothing stored')
    await checkDetection(t)
  })

  await t.test('a forged tail nested at the very end of the record is not the one read', async (t) => {
    const lines = [
      splice(hitText('2026-11-20T10:01:00Z'), `"zz":{${forgedTail}}`),
      splice(hitText('2026-11-20T10:02:00Z'), `"zz":[{${forgedTail}}]`),
      splice(hitText('2026-11-20T10:03:00Z'), `"zz":{"deeper":{"a":1,${forgedTail}}}`),
      splice(
        hitText('2026-11-20T10:04:00Z'),
        `"zz":{"p\\u005flog_type":"${FORGED_TYPE}",${forgedTail.slice(forgedTail.indexOf(',') + 1)}}`,
      ),
    ]
    const res = await send(lines)
    t.same({ a: res.body.accepted, r: res.body.rejected }, { a: lines.length, r: 0 })
    await checkStoredTails(t)
    const hits = await alertsOf(s, 'T.Hit')
    t.equal(hits.length, 1)
    t.equal(hits[0].eventCount, lines.length, 'each matched as Editor.Audit')
    t.equal(hits[0].firstEventTime, '2026-11-20T10:01:00.000Z', 'at its own event time')
    t.equal(hits[0].lastEventTime, '2026-11-20T10:04:00.000Z')
    await checkDetection(t)
  })

  await t.test('a forged tail inside strings (escaped quotes, backslashes) stays text', async (t) => {
    const inString = (pre: string) => JSON.stringify(`${pre}",${forgedTail}}`)
    const lines = [
      splice(hitText('2026-11-20T11:00:00Z'), `"note":${inString('')}`),
      splice(hitText('2026-11-20T11:01:00Z'), `"note":${inString('\\')}`),
      splice(hitText('2026-11-20T11:02:00Z'), `"note":${inString('\\\\\\')}`),
      splice(hitText('2026-11-20T11:03:00Z'), `"note":"\\",${forgedTail.replace(/"/g, '\\"')}}"`),
      // The text of the forged tail as a key, then a value.
      splice(hitText('2026-11-20T11:04:00Z'), `${JSON.stringify(`,${forgedTail}`)}:${JSON.stringify(forgedTail)}`),
    ]
    const res = await send(lines)
    t.same({ a: res.body.accepted, r: res.body.rejected }, { a: lines.length, r: 0 })
    await checkStoredTails(t)
    t.same(await matchesOf(s, 'T.Hit'), { events: 4 + lines.length, last: '2026-11-20T11:04:00.000Z' })
    await checkDetection(t)
  })

  await t.test('whitespace around the record is dropped; text after it makes the line unreadable', async (t) => {
    const ok = [
      ` \t${hitText('2026-11-20T12:00:00Z')} \t `,
      `${hitText('2026-11-20T12:01:00Z')}\r`,
      hitText('2026-11-20T12:02:00Z').replace(/,"/g, ', \t\r"'),
    ]
    const bad = [
      `${hitText('2026-11-20T12:03:00Z')} {${forgedTail}}`,
      `${hitText('2026-11-20T12:04:00Z')},${forgedTail}}`,
    ]
    const res = await send([...ok, ...bad])
    t.same({ a: res.body.accepted, r: res.body.rejected }, { a: ok.length, r: bad.length })
    for (const e of res.body.errors) t.match(e.message, /is not JSON/)
    for (const { text } of await storedLines(dataDir, 'Editor.Audit')) {
      t.notOk(/\s/.test(text.replace(/"(?:[^"\\]|\\.)*"/g, '')), 'no whitespace outside strings')
    }
    await checkStoredTails(t)
    t.equal((await matchesOf(s, 'T.Hit')).events, 9 + ok.length)
    await checkDetection(t)
  })

  await t.test('forged parse times cannot reorder records', async (t) => {
    // Nested forged parse times far in the past and future; stored order is acceptance order.
    const lines = [
      splice(
        hitText('2026-11-20T13:00:00Z'),
        `"zz":{"p_log_type":"Editor.Audit","p_event_time":"x","p_parse_time":"9999","p_row_id":"9"}`,
      ),
      splice(
        hitText('2026-11-20T13:01:00Z'),
        `"zz":{"p_log_type":"Editor.Audit","p_event_time":"x","p_parse_time":"0000","p_row_id":"0"}`,
      ),
    ]
    await send(lines)
    const stored = (await storedLines(dataDir, 'Editor.Audit')).map((l) => JSON.parse(l.text))
    const keys = stored.map((p) => `${p.p_parse_time}\u0000${p.p_row_id}`)
    t.same(keys, [...keys].sort(), 'stored keys rise in acceptance order')
    t.ok(
      stored.every((p) => p.p_parse_time > '2026'),
      'every parse time is the arrival time',
    )
    await checkStoredTails(t)
    await checkDetection(t)
  })

  await t.test('near a megabyte of look-alike tails: read in bounded time, the right one', async (t) => {
    const unit = `,${forgedTail}`
    // One record a request: the body limit is 1 MiB.
    const filler = unit.repeat(Math.floor(900_000 / unit.length / 1.1))
    const lines = [
      splice(hitText('2026-11-20T14:00:00Z'), `"note":${JSON.stringify(filler)}`),
      splice(
        hitText('2026-11-20T14:01:00Z'),
        `"zz":[${Array.from({ length: 6500 }, () => `{${forgedTail}}`).join(',')}]`,
      ),
    ]
    const started = Date.now()
    for (const line of lines) {
      t.ok(line.length > 800_000, `a line of ${line.length} bytes`)
      const res = await send([line])
      t.same({ s: res.status, a: res.body.accepted, r: res.body.rejected }, { s: 200, a: 1, r: 0 })
    }
    await checkStoredTails(t)
    t.ok(Date.now() - started < 20_000, `ingested and detected in ${Date.now() - started} ms`)
    t.same(await matchesOf(s, 'T.Hit'), { events: 14 + lines.length, last: '2026-11-20T14:01:00.000Z' })
    await checkDetection(t)
  })

  await t.test('the source keeps serving after the attacks', async (t) => {
    const res = await send([JSON.stringify(makeRecord('after-attacks'))])
    t.equal(res.body.accepted, 1)
  })
})
