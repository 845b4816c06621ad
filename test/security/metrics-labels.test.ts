// The unauthenticated /metrics names no rule (issue 27, finding 13): a rule error is counted there
// without the rule's id (per-rule detail is GET /rule-errors?rule-id=, which needs View Alerts),
// and no series of the exposition carries a rule id in any label.
import t from 'tap'
import { ndjson, TOKEN } from '../ingest/helpers.js'
import { commandRecord, DETECT_ENV } from '../detect/helpers.js'
import { startInProcess } from '../helpers/in-process.js'
import { SAMPLE_BODIES } from '../helpers/rulekeeper.js'

t.test('a rule error is counted in /metrics without its rule id', async (t) => {
  const s = await startInProcess({ env: DETECT_ENV })
  t.teardown(() => s.close())
  const id = 'Secret.Team.Raises'
  const made = await s.request(
    'POST',
    '/rules?run-tests-first=false',
    SAMPLE_BODIES.python(id, { body: 'def rule(event):\n    raise ValueError("boom")\n', tests: [] }),
  )
  t.equal(made.status, 200, made.text)
  const simple = await s.request('POST', '/simple-rules?run-tests-first=false', {
    ...SAMPLE_BODIES.simple('Secret.Team.Simple', { logTypes: ['Editor.Audit'], tests: [] }),
  })
  t.equal(simple.status, 200, simple.text)
  const ingest = await s.send('POST', '/http/editor-audit', ndjson([commandRecord('m', 'x', '2026-11-20T10:00:00Z')]), {
    authorization: `Bearer ${TOKEN}`,
  })
  t.equal(ingest.status, 200, ingest.text)
  await s.service.detection.detector.idle()
  const errors = await s.request('GET', `/rule-errors?rule-id=${id}`)
  t.equal(errors.body.results.length, 1, 'the error is listed, with its rule, behind View Alerts')

  const metrics = await s.send('GET', '/metrics')
  t.equal(metrics.status, 200, 'still open to a scraper')
  t.match(metrics.text, /^rulekeeper_detection_rule_errors_total 1$/m, 'counted, with no label')
  for (const name of [id, 'Secret.Team', 'Secret.Team.Simple', 'Editor.Audit.LoginFailed'])
    t.notOk(metrics.text.includes(name), `no series names ${name}`)
})
