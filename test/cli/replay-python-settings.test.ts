// `rulekeeper replay` runs Python rules with the configuration's `detection.python` settings, as the
// server's replay does: a rule sleeping past its configured batch budget is stopped and its
// unfinished records are rule errors (with the engine's defaults it would finish within its budget).
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { commandRecord, DETECT_ENV, sendAndDetect } from '../detect/helpers.js'
import { runCli } from '../helpers/cli.js'
import { startInProcess } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

const SLOW = 'import time\n\n\ndef rule(event):\n    time.sleep(0.2)\n    return True\n'

t.test('the CLI replay takes detection.python from the configuration', async (t) => {
  const dataDir = tempDir('rk-cli-replay-py-')
  const config = { python: { timeoutMs: 3000 }, detection: { python: { budgetMs: 100, budgetMsPerRecord: 0 } } }
  const s = await startInProcess({ dataDir, env: DETECT_ENV, config })
  t.teardown(() => s.close())
  const res = await s.request('POST', '/rules', SAMPLE_BODIES.python('Py.Slow', { body: SLOW, tests: [] }))
  t.equal(res.status, 200, 'the rule is saved')
  const records = Array.from({ length: 4 }, (_, i) =>
    commandRecord('clipy', 'slow', new Date(Date.UTC(2026, 10, 20, 9, 0, i)).toISOString()),
  )
  await sendAndDetect(s, records)
  const file = path.join(tempDir('rk-cli-replay-conf-'), 'config.yaml')
  writeFileSync(
    file,
    'python:\n  timeoutMs: 3000\ndetection:\n  python:\n    budgetMs: 100\n    budgetMsPerRecord: 0\n',
  )
  const cli = await runCli(
    ['replay', '--from', '2026-11-20T09:00:00Z', '--to', '2026-11-20T10:00:00Z', '--json', '--data-dir', dataDir],
    { RULEKEEPER_CONFIG: file },
  )
  t.equal(cli.code, 0, cli.stderr)
  const out = JSON.parse(cli.stdout)
  t.equal(out.records, 4)
  const slow = out.rules.find((r: { ruleId: string }) => r.ruleId === 'Py.Slow')
  t.ok(slow, 'the rule was replayed')
  t.ok(slow.errors > 0, `the rule's batch budget of 100 ms stopped it (${slow.errors} errors, ${slow.matches} matches)`)
  t.ok(slow.matches < 4, 'it did not finish its records')
})
