// The stored form of an accepted record (storedLine in src/ingest/log-type.ts), for
// NDJSON text in every shape JSON allows: whitespace, tabs and carriage returns between tokens,
// duplicate keys, raw and escaped Unicode, 1.0 / 1e2 / big integers / 1e400, `__proto__` keys,
// nested keys named like standard fields, counts sent as strings. The stored line is one line of
// compact JSON that reads back as the checked record everywhere: no carriage return (node:readline
// would cut it), no key twice (DuckDB refuses such a file), the standard fields last and readable
// from the line's tail (readStandardTail). Also through the real ingest endpoint, including the
// duplicate filter's rebuild across a restart for a record sent with a carriage return.
import t, { type Test } from 'tap'
import { checkEditorAuditRecord } from '../../src/ingest/editor-audit-record.js'
import { storedLine } from '../../src/ingest/log-type.js'
import { readStandardTail } from '../../src/detect/stored-log.js'
import { startIngestInProcess } from './fixtures/ingest-in-process.js'
import { TOKEN, makeRecord, storedLines, tempDataDir } from './helpers.js'

const STANDARD = [
  'p_log_type',
  'p_event_time',
  'p_parse_time',
  'p_row_id',
  'p_source_id',
  'p_any_ip_addresses',
  'p_any_emails',
  'p_any_trace_ids',
  'p_any_actor_ids',
]

const ctx = { sourceId: 'editor-audit', parseTime: '2026-11-20T09:00:00.000Z', rowId: 'row-0001' }

/** The record of makeRecord as compact text, with `extra` (raw JSON text) spliced in before its last `}`. */
function recordText(id: string, extra = ''): string {
  const base = JSON.stringify(makeRecord(id))
  return extra === '' ? base : `${base.slice(0, -1)},${extra}}`
}

/** What a checked record's stored line must satisfy; returns the line parsed. */
function checkStored(t: Test, name: string, text: string): Record<string, unknown> {
  const value = JSON.parse(text)
  const verdict = checkEditorAuditRecord(value, ctx)
  if (!verdict.ok) {
    t.fail(`${name}: the record is accepted (${verdict.reason})`)
    return {}
  }
  const line = storedLine(verdict)
  t.notOk(/[\r\n]/.test(line), `${name}: one line, no carriage return`)
  const parsed = JSON.parse(line) as Record<string, unknown>
  t.same(parsed, JSON.parse(JSON.stringify(verdict.stored)), `${name}: reads back as the checked record`)
  t.equal(line, JSON.stringify(parsed), `${name}: compact, each key once (parse and serialize give it back)`)
  t.same(Object.keys(parsed).slice(-STANDARD.length), STANDARD, `${name}: the standard fields last, in order`)
  t.same(
    readStandardTail(line),
    [parsed.p_log_type, parsed.p_event_time, parsed.p_parse_time, parsed.p_row_id],
    `${name}: the tail reader reads the standard fields`,
  )
  return parsed
}

t.test('NDJSON text in every shape JSON allows is stored as one compact line', async (t) => {
  const compact = recordText('w-1')
  // Pretty-printed, then its line breaks (only ever between tokens) turned into other whitespace.
  const spaced = (ws: string) => JSON.stringify(makeRecord('w-1'), null, 2).replace(/\n/g, ws)
  const cases: Array<[string, string, (p: Record<string, unknown>) => void]> = [
    ['compact', compact, () => {}],
    [
      'spaces around every token, trailing spaces',
      `  ${spaced(' ')}   `,
      (p) => t.equal((p.metadata as { id: string }).id, 'w-1'),
    ],
    ['tabs', spaced('\t'), () => {}],
    ['carriage returns between tokens', spaced('\r'), () => {}],
    ['carriage returns and tabs before a colon', compact.replace(/":/g, '"\r\t:'), () => {}],
    [
      'a key given twice: the last wins, stored once',
      recordText('w-2', '"extra":"first","extra":"second"'),
      (p) => t.equal(p.extra, 'second'),
    ],
    ['a nested key given twice', recordText('w-3', '"nested":{"k":1,"k":2}'), (p) => t.same(p.nested, { k: 2 })],
    [
      'raw and escaped Unicode, escaped quotes and backslashes',
      recordText('w-4', '"u":"Zoë 日本語 🙂","e":"Zo\\u00eb \\ud83d\\ude42 \\"q\\" \\\\ \\/","ls":"\u2028\u2029"'),
      (p) => {
        t.equal(p.u, 'Zoë 日本語 🙂')
        t.equal(p.e, 'Zoë 🙂 "q" \\ /')
        t.equal(p.ls, '\u2028\u2029')
      },
    ],
    [
      'numbers as 1.0, 1e2, -0 and past 2^53',
      recordText('w-5', '"a":1.0,"b":1e2,"c":-0,"big":123456789012345678901234567890'),
      (p) => {
        t.equal(p.a, 1)
        t.equal(p.b, 100)
        t.equal(p.c, 0)
        t.equal(p.big, 1.2345678901234568e29, 'a big integer keeps the double JSON.parse reads')
      },
    ],
    [
      'a number out of double range is stored as null (as serializing writes Infinity)',
      recordText('w-6', '"inf":1e400,"ninf":-1e400,"tiny":1e-400'),
      (p) => {
        t.equal(p.inf, null)
        t.equal(p.ninf, null)
        t.equal(p.tiny, 0)
      },
    ],
    [
      '__proto__ keys stay plain data',
      recordText('w-7', '"__proto__":{"polluted":true},"o":{"__proto__":{"x":1}}'),
      (p) => {
        t.ok(Object.hasOwn(p, '__proto__'), 'an own key')
        t.same(Object.getOwnPropertyDescriptor(p, '__proto__')?.value, { polluted: true })
        t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched')
      },
    ],
    [
      'nested keys named like standard fields, before and inside arrays',
      recordText(
        'w-8',
        '"inner":{"p_log_type":"Evil","p_event_time":"1999-01-01T00:00:00.000Z","p_parse_time":"9999","p_row_id":"zzz"},"list":[{"p_log_type":"Evil2","p_event_time":"x","p_parse_time":"y","p_row_id":"z"}]',
      ),
      (p) => {
        t.equal(p.p_log_type, 'Editor.Audit')
        t.equal((p.inner as Record<string, unknown>).p_log_type, 'Evil')
      },
    ],
  ]
  for (const [name, text, more] of cases) more(checkStored(t, name, text))
})

t.test('counts sent as strings are stored as numbers', async (t) => {
  const text = recordText('c-1').replace(
    /"login":\{[^}]*\}/,
    '"user_spend_limit":{"new_limit_cents":"500000","old_limit_cents":"-20","target_user_email":"gus@example.com"}',
  )
  const p = checkStored(t, 'counts as strings', text)
  t.same(p.user_spend_limit, { new_limit_cents: 500000, old_limit_cents: -20, target_user_email: 'gus@example.com' })
})

t.test('through the ingest endpoint: every stored line is compact JSON, standard fields last', async (t) => {
  const dataDir = await tempDataDir(t)
  const s = await startIngestInProcess({ dataDir, env: { RULEKEEPER_EDITOR_AUDIT_TOKEN: TOKEN } })
  t.teardown(() => s.close())
  const lines = [
    recordText('e-1').replace(/,"/g, ',\r"'),
    ` { "ip_address" : "198.51.100.7" ,\t"metadata" : { "id" : "e-2" , "timestamp" : "2026-11-20T08:00:00Z" } , "login" : { "success" : true } }  `,
    recordText('e-3', '"dup":1,"dup":2'),
    recordText('e-4', '"inf":1e400'),
  ]
  const body = `${lines.join('\n')}\n`
  const res = await s.post('/http/editor-audit', body)
  t.equal(res.status, 200)
  t.equal(res.body.accepted, lines.length)
  const stored = await storedLines(dataDir, 'Editor.Audit')
  t.equal(stored.length, lines.length)
  for (const { text } of stored) {
    const p = JSON.parse(text) as Record<string, unknown>
    const id = (p.metadata as { id: string }).id
    t.notOk(text.includes('\r'), `${id}: no carriage return`)
    t.equal(text, JSON.stringify(p), `${id}: compact, each key once`)
    t.same(Object.keys(p).slice(-STANDARD.length), STANDARD, `${id}: the standard fields last`)
    t.same(readStandardTail(text), [p.p_log_type, p.p_event_time, p.p_parse_time, p.p_row_id], `${id}: tail`)
    if (id === 'e-3') t.equal(p.dup, 2)
    if (id === 'e-4') t.equal(p.inf, null)
  }
})

t.test('a record sent with carriage returns between tokens is still a duplicate after a restart', async (t) => {
  const dataDir = await tempDataDir(t)
  const env = { RULEKEEPER_EDITOR_AUDIT_TOKEN: TOKEN }
  const body = `${recordText('cr-1').replace(/,"/g, ',\r"')}\n${recordText('cr-2')}\n`
  const s1 = await startIngestInProcess({ dataDir, env })
  t.equal((await s1.post('/http/editor-audit', body)).body.accepted, 2)
  await s1.close()
  // The duplicate filter is rebuilt from the stored lines (node:readline, for which \r ends a line).
  const s2 = await startIngestInProcess({ dataDir, env })
  t.teardown(() => s2.close())
  const again = await s2.post('/http/editor-audit', body)
  t.same({ a: again.body.accepted, d: again.body.duplicates }, { a: 0, d: 2 })
  t.equal((await storedLines(dataDir, 'Editor.Audit')).length, 2, 'stored once each')
})
