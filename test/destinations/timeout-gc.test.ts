// A delivery attempt to a receiver that never answers ends at the destination's timeout even when
// the garbage collector runs meanwhile. Node 20's AbortSignal.any() holds an AbortSignal.timeout()
// source weakly (nodejs/node#57736): a collection before the deadline left the request hanging for
// ever, and the destination's lane with it (attempts stayed 0). Here the collector runs every 10 ms.
// Real port: a remote (a receiver that never answers).
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import t from 'tap'
import { ndjson, TOKEN } from '../ingest/helpers.js'
import { commandRecord } from '../detect/helpers.js'
import { startInProcess } from '../helpers/in-process.js'
import { startReceiver } from '../helpers/receiver.js'
import { SAMPLE_BODIES } from '../helpers/rulekeeper.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

t.test('a hanging receiver times out on schedule while the garbage collector runs', async (t) => {
  const hang = await startReceiver(() => 'hang')
  t.teardown(() => hang.close())
  const s = await startInProcess({
    env: { RULEKEEPER_EDITOR_AUDIT_TOKEN: TOKEN },
    config: {
      destinations: [
        {
          id: 'hang',
          type: 'webhook',
          url: hang.url,
          severities: ['INFO', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL'],
          timeoutMs: 300,
          concurrency: 1,
        },
      ],
      delivery: { attempts: 2, firstDelayMs: 30, maxDelayMs: 100, budgetMinutes: 1, timeoutMs: 2000 },
    },
  })
  t.teardown(() => s.close())
  const rule = await s.request('POST', '/simple-rules', {
    ...SAMPLE_BODIES.simple('Timeout.Gc', {
      logTypes: ['Editor.Audit'],
      detection: '- KeyPath: team_command.command_name\n  Condition: Equals\n  Value: gc\n',
      tests: [],
    }),
  })
  t.equal(rule.status, 200, rule.text)
  const collector = setInterval(gc, 10)
  t.teardown(() => clearInterval(collector))
  const ingest = await s.send(
    'POST',
    '/http/editor-audit',
    ndjson([commandRecord('g', 'gc', '2026-11-20T10:00:00Z')]),
    {
      Authorization: `Bearer ${TOKEN}`,
      'Content-Type': 'application/x-ndjson',
    },
  )
  t.equal(ingest.status, 200, ingest.text)
  await s.service.detection.detector.idle()
  const [alert] = (await s.request('GET', '/alerts?rule-id=Timeout.Gc')).body.results as any[]
  t.ok(alert, 'the alert')
  // Each attempt takes 300 ms; 10 s bounds a wait that would otherwise never end.
  const end = Date.now() + 10_000
  let hanging: any
  for (;;) {
    hanging = (await s.request('GET', `/alerts/${alert.id}`)).body.destinations[0]
    if (hanging.attempts >= 1 || Date.now() > end) break
    await new Promise((r) => setTimeout(r, 25)) // wait: poll interval of a wait on a condition
  }
  t.ok(hanging.attempts >= 1, `the first attempt ended: ${JSON.stringify(hanging)}`)
  t.equal(hanging.lastError, 'timed out')
})
