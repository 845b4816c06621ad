// How a record's event kind is found and checked, table-driven over checkEditorAuditRecord itself:
// one listed kind, unknown kinds, ambiguous records, reserved p_ keys, prototype-named keys, counts.
import t from 'tap'
import { checkEditorAuditRecord } from '../../src/ingest/editor-audit-record.js'

const ctx = { sourceId: 'editor-audit', parseTime: '2026-11-21T00:00:00.000Z', rowId: 'r1' }
const envelope = () => ({ ip_address: '203.0.113.1', metadata: { id: 'm1', timestamp: '2026-11-20T08:00:00Z' } })

const cases: Array<[string, Record<string, unknown>, { ok: boolean; unknownKind?: boolean; reason?: RegExp }]> = [
  ['one listed kind', { login: { success: true } }, { ok: true, unknownKind: false }],
  ['one unknown kind', { cloud_agent_secret: { action: 'x' } }, { ok: true, unknownKind: true }],
  ['an unknown kind whose detail is not an object', { new_thing: 'x' }, { ok: true, unknownKind: true }],
  ['a listed kind plus an unlisted top-level field', { login: {}, vendor_extra: 1 }, { ok: true, unknownKind: false }],
  ['no kind', {}, { ok: false, reason: /names no event kind/ }],
  ['two listed kinds', { login: {}, api_key: {} }, { ok: false, reason: /more than one event kind: login, api_key/ }],
  [
    'two unknown keys',
    { a_thing: {}, b_thing: {} },
    { ok: false, reason: /more than one event kind: a_thing, b_thing/ },
  ],
  [
    'a reserved p_ key',
    { login: {}, p_source_id: 'forged' },
    { ok: false, reason: /p_source_id: top-level p_\* fields are reserved/ },
  ],
  ['a key named like an Object.prototype member', { constructor: { a: 1 } }, { ok: true, unknownKind: true }],
  ['toString beside a listed kind', { toString: 1, login: {} }, { ok: true, unknownKind: false }],
  ['a count as a decimal string', { invite_link: { expires_in_seconds: '604800' } }, { ok: true }],
  [
    'a count as a non-decimal string',
    { invite_link: { expires_in_seconds: '6e5' } },
    { ok: false, reason: /must be an integer/ },
  ],
  [
    'a count as a fraction',
    { team_marketplace: { plugins_created: 1.5 } },
    { ok: false, reason: /must be an integer/ },
  ],
  [
    'a count past 2^53',
    { user_spend_limit: { new_limit_cents: '9999999999999999' } },
    { ok: false, reason: /within ±2\^53/ },
  ],
  ['a listed kind that is not an object', { login: 'yes' }, { ok: false, reason: /login must be an object/ }],
  [
    'operating_systems with a non-string',
    { team_hook: { operating_systems: ['linux', 1] } },
    { ok: false, reason: /operating_systems\.1 must be a string/ },
  ],
]

for (const [name, extra, want] of cases) {
  t.test(name, async (t) => {
    const v = checkEditorAuditRecord({ ...envelope(), ...extra }, ctx)
    t.equal(v.ok, want.ok)
    if (v.ok && want.unknownKind !== undefined) t.equal(v.unknownKind, want.unknownKind)
    if (!v.ok && want.reason) t.match(v.reason, want.reason)
  })
}

t.test('a rejected record is left exactly as it came', async (t) => {
  const rec = { ...envelope(), team_marketplace: { plugins_created: '3', plugins_updated: 'x' } }
  const copy = structuredClone(rec)
  t.equal(checkEditorAuditRecord(rec, ctx).ok, false)
  t.same(rec, copy, 'no count was converted')
})

t.test('timestamps: offsets, precision, leap seconds', async (t) => {
  const at = (ts: string) => checkEditorAuditRecord({ metadata: { timestamp: ts }, login: {} }, ctx)
  const plus = at('2026-11-20T10:00:00+02:00')
  t.ok(plus.ok && plus.eventTime === '2026-11-20T08:00:00.000Z')
  const micro = at('2026-11-20T23:59:59.999999Z')
  t.ok(micro.ok && micro.eventTime === '2026-11-20T23:59:59.999Z', 'kept to the millisecond, same hour')
  t.equal(at('2026-11-20T08:00:00').ok, false, 'no offset is not RFC 3339')
  t.equal(at('2026-02-30T08:00:00Z').ok, false, 'no 30 February')
  const leap = at('2016-12-31T23:59:60Z')
  t.ok(!leap.ok && /cannot be read as a point in time|RFC 3339/.test(leap.reason))
})
