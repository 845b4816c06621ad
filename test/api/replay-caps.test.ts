// The caps on what one replay may hold (docs/alerts.md §4): past `detection.replay.maxContentBytes`
// of alert titles, dedup strings and contexts the replay is a 400 naming the key (not a shortened
// answer); a token without View Alerts holds no content, so the same replay gives it the counts;
// past `maxGroups` the counts are refused too. Real stored log and Python rule, requests in process.
import t from 'tap'
import { REPLAY_DAY, writeStoredAudit } from '../detect/stored-records.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'
import { startInProcess } from '../helpers/in-process.js'

t.test('maxContentBytes and maxGroups', async (t) => {
  const dataDir = tempDir('rk-replay-caps-')
  await writeStoredAudit(dataDir, 40)
  const s = await startInProcess({
    dataDir,
    config: { detection: { replay: { maxContentBytes: 4096, maxGroups: 40 } } },
  })
  t.teardown(() => s.close())
  // An alert per record (the title is the dedup string), the record as its context (~250 bytes).
  const rule = await s.request('POST', '/rules', {
    ...SAMPLE_BODIES.python('Rp.Context', {
      body: 'def rule(event):\n    return True\n\n\ndef title(event):\n    return event.get("p_row_id")\n\n\ndef alert_context(event):\n    return dict(event)\n',
      tests: [],
    }),
    enabled: false,
  })
  t.equal(rule.status, 200, rule.text)
  const body = { ...REPLAY_DAY, ruleIds: ['Rp.Context'] }
  const full = await s.request('POST', '/replay', body)
  t.equal(full.status, 400, full.text)
  t.equal(
    full.body.message,
    'this replay would hold more than 4.0 KiB of alert titles, dedup strings and contexts (config detection.replay.maxContentBytes): narrow the range or name fewer rules',
  )
  const rulesOnly = await s.makeToken('rules-only', ['View Rules'])
  const counts = await s.send('POST', '/replay', body, { 'X-API-Key': rulesOnly })
  t.equal(counts.status, 200, 'no content held for a token that cannot see it')
  t.same(counts.body.rules, [{ ruleId: 'Rp.Context', matches: 40, alerts: 40, errors: 0 }])
  const narrow = await s.request('POST', '/replay', { ...body, to: '2026-11-20T01:00:00Z' })
  t.equal(narrow.status, 200, 'a narrower range holds less')
  t.equal(narrow.body.alerts.length, 10)

  // One more group than maxGroups: refused, counts or not.
  await s.close()
  await writeStoredAudit(dataDir, 41)
  const again = await startInProcess({ dataDir, config: { detection: { replay: { maxGroups: 40 } } } })
  t.teardown(() => again.close())
  const token = await again.makeToken('rules-only', ['View Rules'])
  const over = await again.send('POST', '/replay', body, { 'X-API-Key': token })
  t.equal(over.status, 400)
  t.match(
    over.body.message,
    /^this replay would hold more than 40 alert groups \(config detection\.replay\.maxGroups\)/,
  )
})
