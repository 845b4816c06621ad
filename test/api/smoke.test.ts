import t from 'tap'
import { startInProcess } from '../helpers/in-process.js'
import { SAMPLE_BODIES } from '../helpers/rulekeeper.js'

t.test('a created simple rule can be read back and is one commit', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const res = await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('Smoke.Rule'))
  t.equal(res.status, 200, res.text)
  const got = await s.request('GET', '/simple-rules/Smoke.Rule')
  t.equal(got.status, 200)
  t.equal(got.body.severity, 'HIGH')
  t.match(s.git('log', '-1', '--format=%s'), /^Create simple rule Smoke.Rule/)
})
