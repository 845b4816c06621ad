// Detection's fast read of a stored line (src/detect/stored-log.ts): readStandardTail takes
// p_log_type, p_event_time, p_parse_time and p_row_id from the end of a line the log source wrote,
// and a StoredRecord parses the record only when asked. Lines made by the real log-source path
// (checkEditorAuditRecord + storedLine, seeded random records with nested look-alike keys, escapes
// and Unicode) read back the fields JSON.parse gives; values with escapes, other key orders and old
// data are parsed whole; a damaged line whose tail looks right is unreadable and never evaluated:
// end to end, a data file holding one beside good lines leaves detection running, the good lines
// matched and the damaged one matching nothing. Seeded (the seed is printed).
import { appendFile, mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { checkEditorAuditRecord } from '../../src/ingest/editor-audit-record.js'
import { storedLine } from '../../src/ingest/log-type.js'
import { LineCursor, readStandardTail, type StoredRecord } from '../../src/detect/stored-log.js'
import { makeRecord, storedLines } from '../ingest/helpers.js'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'
import { SeededRandom } from '../helpers/seeded-random.js'
import { commandRecord, commandRule, DETECT_ENV, sendAndDetect } from './helpers.js'

const seed = Number(process.env.SEED ?? Date.now() % 1_000_000)
const rnd = new SeededRandom(seed)
t.comment(`seed ${seed} (SEED=${seed} reproduces)`)

const LOOK_ALIKES = ['p_log_type', 'p_event_time', 'p_parse_time', 'p_row_id']
const fieldsOf = (r: Record<string, unknown>) => LOOK_ALIKES.map((k) => r[k])

/** A string with quotes, backslashes, look-alike key text, control characters and Unicode. */
function nastyString(): string {
  const parts = [
    '"',
    '\\',
    '\\"',
    ',"p_log_type":"Evil","p_event_time":"1999-01-01T00:00:00.000Z","p_parse_time":"0","p_row_id":"0"}',
    '}',
    '\n',
    '\u2028',
    'Zoë',
    '🙂',
    'x',
  ]
  let s = ''
  for (let i = rnd.int(6); i > 0; i--) s += rnd.pick(parts)
  return s
}

/** Random extra data with look-alike keys at any depth, in objects before and inside arrays. */
function nastyValue(depth: number): unknown {
  const roll = rnd.int(10)
  if (depth > 3 || roll < 3) return rnd.pick([nastyString(), 1, 1.5, true, null])
  if (roll < 6) return Array.from({ length: rnd.int(3) }, () => nastyValue(depth + 1))
  const o: Record<string, unknown> = {}
  for (let i = rnd.int(4); i >= 0; i--) o[rnd.bool(0.5) ? rnd.pick(LOOK_ALIKES) : nastyString()] = nastyValue(depth + 1)
  return o
}

/** One accepted record's stored line, as the log source writes it. */
function logSourceLine(i: number): string {
  const extra: Record<string, unknown> = {}
  for (let k = rnd.int(4); k > 0; k--) extra[`x_${k}_${nastyString()}`] = nastyValue(0)
  const value = JSON.parse(JSON.stringify(makeRecord(`tail-${i}`, '2026-11-20T08:00:00.000Z', extra)))
  const verdict = checkEditorAuditRecord(value, {
    sourceId: 'editor-audit',
    parseTime: new Date(Date.UTC(2026, 10, 20, 9) + i).toISOString(),
    rowId: `r${i.toString(36).padStart(8, '0')}`,
  })
  if (!verdict.ok) throw new Error(verdict.reason)
  return storedLine(verdict)
}

t.test('lines the log source writes: the tail gives the fields JSON.parse gives', async (t) => {
  let mismatches = 0
  for (let i = 0; i < 3000; i++) {
    const line = logSourceLine(i)
    const tail = readStandardTail(line)
    const parsed = JSON.parse(line) as Record<string, unknown>
    if (tail === null || JSON.stringify(tail) !== JSON.stringify(fieldsOf(parsed))) {
      mismatches++
      if (mismatches <= 3) t.fail('the tail differs from the parsed record', { line, tail })
    }
  }
  t.equal(mismatches, 0, 'every line of 3000: the tail is read, and equal')
})

t.test('nested look-alike keys before and inside arrays: the top-level fields are read', async (t) => {
  const nested = {
    inner: { p_log_type: 'Evil', p_event_time: '1999-01-01T00:00:00.000Z', p_parse_time: '9', p_row_id: 'z' },
    list: [{ p_log_type: 'Evil2', p_event_time: 'x', p_parse_time: 'y', p_row_id: 'w' }, ['p_log_type']],
    last: { a: [{ p_log_type: 'Evil3', p_event_time: 'a', p_parse_time: 'b', p_row_id: 'c' }] },
  }
  const line = JSON.stringify({
    ...nested,
    p_log_type: 'Editor.Audit',
    p_event_time: '2026-11-20T08:00:00.000Z',
    p_parse_time: '2026-11-20T09:00:00.000Z',
    p_row_id: 'r1',
    p_source_id: 'editor-audit',
    p_any_ip_addresses: [],
  })
  t.same(readStandardTail(line), ['Editor.Audit', '2026-11-20T08:00:00.000Z', '2026-11-20T09:00:00.000Z', 'r1'])
})

/** Records read by a cursor over `lines` written to a file (a last newline included). */
async function readAll(lines: string[]): Promise<{ records: StoredRecord[]; skipped: number }> {
  const root = tempDir('rk-stored-tail-')
  await writeFile(path.join(root, 'f.ndjson'), `${lines.join('\n')}\n`)
  const size = Buffer.byteLength(`${lines.join('\n')}\n`)
  const c = new LineCursor(root, 'f.ndjson', 0, size, 64)
  const records: StoredRecord[] = []
  for (let r = await c.peek(); r !== null; r = await c.peek()) {
    records.push(r)
    c.take()
  }
  return { records, skipped: c.skipped }
}

t.test('lines not of the written shape are parsed whole, with the right fields', async (t) => {
  const std = { p_log_type: 'A.B', p_event_time: 'E', p_parse_time: 'P', p_row_id: 'R' }
  const cases: Array<[string, Record<string, unknown> | string, string[]]> = [
    ['an escape in p_log_type', { x: 1, ...std, p_log_type: 'A"B\\' }, ['A"B\\', 'E', 'P', 'R']],
    [
      'an escaped letter in p_event_time',
      `{"x":1,"p_log_type":"A.B","p_event_time":"\\u0045","p_parse_time":"P","p_row_id":"R"}`,
      ['A.B', 'E', 'P', 'R'],
    ],
    [
      'another key order',
      { p_parse_time: 'P', p_row_id: 'R', x: 1, p_log_type: 'A.B', p_event_time: 'E' },
      ['A.B', 'E', 'P', 'R'],
    ],
    [
      'old data without p_row_id',
      { x: 1, p_log_type: 'A.B', p_event_time: 'E', p_parse_time: 'P' },
      ['A.B', 'E', 'P', ''],
    ],
    [
      'a number where a string was',
      `{"p_log_type":"A.B","p_event_time":"E","p_parse_time":7,"p_row_id":"R"}`,
      ['A.B', 'E', '7', 'R'],
    ],
    [
      'leading whitespace',
      ` {"x":1,"p_log_type":"A.B","p_event_time":"E","p_parse_time":"P","p_row_id":"R"}`,
      ['A.B', 'E', 'P', 'R'],
    ],
    [
      'whitespace after a colon',
      `{"x":1,"p_log_type": "A.B","p_event_time":"E","p_parse_time":"P","p_row_id":"R"}`,
      ['A.B', 'E', 'P', 'R'],
    ],
  ]
  const lines = cases.map(([, c]) => (typeof c === 'string' ? c : JSON.stringify(c)))
  for (const [i, [name]] of cases.entries()) {
    // Not of the shape the log source writes: left to the whole parse (whose fields are checked below).
    t.equal(readStandardTail(lines[i]!), null, `${name}: not read from the tail`)
  }
  const { records, skipped } = await readAll(lines)
  t.equal(skipped, 0)
  t.equal(records.length, cases.length)
  for (const [i, [name, , want]] of cases.entries()) {
    const r = records[i]!
    t.same([r.logType, r.eventTime, r.parseTime, r.rowId], want, `${name}: the cursor's fields`)
    t.ok(r.readable, `${name}: readable`)
    t.same(r.record, JSON.parse(lines[i]!), `${name}: the record`)
  }
})

t.test('a damaged line whose tail looks right: read, unreadable, its record empty', async (t) => {
  const tail =
    '"p_log_type":"Editor.Audit","p_event_time":"2026-11-20T08:00:00.000Z","p_parse_time":"P","p_row_id":"R"}'
  const damaged = [
    `{"a":,${tail}`,
    `{"team_command":{"command_name":"hit",${tail}`,
    `{"a":"unterminated,${tail}`,
    `{${tail}`.replace('{"p_log_type"', '{,"p_log_type"'),
  ]
  const good = logSourceLine(1)
  for (const line of damaged) t.throws(() => JSON.parse(line), `${line.slice(0, 30)}… is not JSON`)
  const { records, skipped } = await readAll([...damaged, good])
  t.equal(records.length, damaged.length + 1, 'every line with a readable tail is a record (in order)')
  t.equal(skipped, 0)
  for (const r of records.slice(0, damaged.length)) {
    t.equal(r.logType, 'Editor.Audit')
    t.equal(r.readable, false, 'unreadable')
    t.same(r.record, {}, 'its record is empty')
    t.ok(Object.isFrozen(r.record), 'and frozen: nobody writes into it')
  }
  const last = records[damaged.length]!
  t.ok(last.readable)
  t.same(last.record, JSON.parse(good))
  t.equal(last.logType, 'Editor.Audit')
})

t.test('readStandardTail never throws and stays linear on garbage', async (t) => {
  const base = logSourceLine(7)
  const alphabet = '{}[]",:\\ pab_lotygeinmrwd0123456789\u2028'
  let read = 0
  const bad: string[] = []
  for (let i = 0; i < 20_000; i++) {
    let s: string
    if (rnd.bool()) {
      // A real line with a few characters changed, cut or inserted.
      s = base
      for (let k = 1 + rnd.int(3); k > 0; k--) {
        const at = rnd.int(s.length)
        const roll = rnd.int(3)
        s =
          roll === 0
            ? s.slice(0, at) + s.slice(at + 1)
            : roll === 1
              ? s.slice(0, at) + alphabet[rnd.int(alphabet.length)] + s.slice(at)
              : s.slice(0, at) + s.slice(at).replace(/./, alphabet[rnd.int(alphabet.length)]!)
      }
    } else s = `{${rnd.str(rnd.int(80), alphabet)}}`
    const tail = readStandardTail(s) // must not throw
    if (tail === null) continue
    read++
    if (tail.length !== 4 || !tail.every((v) => typeof v === 'string' && !v.includes('"') && !v.includes('\\')))
      bad.push(s)
  }
  t.same(bad.slice(0, 3), [], 'every tail read is four strings without a quote or backslash')
  t.ok(read > 0, `${read} mutated lines still had a readable tail`)
  // Huge lines: a 20 MB record, and 20 MB of look-alike tails; each read at the speed of a scan.
  const started = Date.now()
  const huge = `{"a":"${'x'.repeat(20_000_000)}",${base.slice(1)}`
  t.same(readStandardTail(huge), readStandardTail(base))
  const many = `{${',"p_log_type":"'.repeat(1_000_000)}}`
  t.equal(readStandardTail(many), null)
  const manyOpen = `{"x":1${',"p_log_type":"a","p_event_time":"b","p_parse_time":"c","p_row_id":"d"'.repeat(200_000)}}`
  t.same(readStandardTail(manyOpen), ['a', 'b', 'c', 'd'])
  t.ok(Date.now() - started < 5000, `huge lines read in ${Date.now() - started} ms`)
})

const alertsOf = async (s: InProcessServer, ruleId: string) => {
  const res = await s.request('GET', `/alerts?rule-id=${encodeURIComponent(ruleId)}&limit=1000`)
  if (res.status !== 200) throw new Error(`alerts: ${res.status} ${res.text.slice(0, 300)}`)
  return res.body.results as any[]
}

t.test('end to end: a damaged line beside good ones in a data file', async (t) => {
  const dataDir = tempDir('rk-stored-tail-')
  const env = DETECT_ENV
  let s = await startInProcess({ dataDir, env })
  t.teardown(() => s.close())
  await commandRule(s, 'T.Hit', 'hit')
  // Matches every record, even an empty one: a damaged line evaluated as {} would count here.
  const any = await s.request('POST', '/simple-rules', {
    ...SAMPLE_BODIES.simple('T.Any', {
      logTypes: ['Editor.Audit'],
      detection: '- KeyPath: no.such.field\n  Condition: DoesNotExist\n',
      tests: [],
    }),
  })
  t.equal(any.status, 200)
  await sendAndDetect(s, [
    commandRecord('e2e', 'hit', '2026-11-20T10:00:00Z'),
    commandRecord('e2e', 'miss', '2026-11-20T10:01:00Z'),
  ])
  t.equal((await alertsOf(s, 'T.Hit'))[0]?.eventCount, 1)
  t.equal((await alertsOf(s, 'T.Any'))[0]?.eventCount, 2)
  await s.close()

  // Append to the data file: a damaged 'hit' line with a right-looking tail, then two good lines.
  const [first] = await storedLines(dataDir, 'Editor.Audit')
  const file = path.join(dataDir, 'logs', first!.file)
  const model = JSON.parse(first!.text) as Record<string, any>
  const later = (n: number) => new Date(Date.now() + 60_000 + n).toISOString()
  const good = (n: number, name: string) =>
    JSON.stringify({
      ...model,
      metadata: { ...model.metadata, id: `appended-${n}` },
      team_command: { ...model.team_command, command_name: name },
      p_parse_time: later(n),
      p_row_id: `zz-${n}`,
    })
  const damaged = good(1, 'hit').replace('"team_command":{', '"team_command":{,')
  t.throws(() => JSON.parse(damaged))
  t.ok(readStandardTail(damaged), 'its tail reads')
  await mkdir(path.dirname(file), { recursive: true })
  await appendFile(file, `${damaged}\n${good(2, 'hit')}\n${good(3, 'miss')}\n`)

  s = await startInProcess({ dataDir, env })
  await s.server.detection.detector.idle()
  const status = await s.request('GET', '/status')
  t.equal(status.body.detection.failed, false, 'detection did not stop')
  t.equal(status.body.detection.lagSeconds, 0, 'and caught up')
  t.equal((await alertsOf(s, 'T.Hit'))[0]?.eventCount, 2, 'the good hit after the damaged line matched')
  t.equal((await alertsOf(s, 'T.Any'))[0]?.eventCount, 4, 'both good lines counted; the damaged one matched nothing')
  const errors = await s.request('GET', '/rule-errors?limit=1000')
  t.same(errors.body.results, [], 'no rule error either')
})
