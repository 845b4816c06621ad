// What the alert book stores is capped as it enters (issue 27 findings 10, 11): a rule error's text
// (a 60 KiB exception message on every record), an alert's title and dedup string (Panther's 1,000
// characters: the first 985 and `... (truncated)`), and its context (Panther's 200 KiB, replaced by
// `{"_error": …}`) — in memory, and in the files a restart reads back.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import pino from 'pino'
import t from 'tap'
import { AlertBook } from '../../src/detect/alert-book.js'
import { DetectionStore } from '../../src/detect/detection-store.js'
import type { RuleMeta } from '../../src/detect/grouping.js'
import { BOOK_FILE, ruleMeta, storedRecord } from './rule-meta.js'
import { tempDir } from '../helpers/rulekeeper.js'

const rule: RuleMeta = ruleMeta({ id: 'R.Caps', kind: 'python' })
const FILE = BOOK_FILE
const rec = storedRecord

t.test('rule errors, titles, dedup strings and contexts are capped before they are stored', async (t) => {
  const dir = tempDir()
  const logger = pino({ level: 'silent' })
  const store = await DetectionStore.open(dir, logger)
  const book = new AlertBook(store, {})
  const huge = 'x'.repeat(60 * 1024)
  book.addError({ ruleId: rule.id, revision: null, time: new Date().toISOString(), record: null, error: huge })
  await book.commitOutput({
    matches: [],
    groups: [],
    created: [],
    errors: [{ ruleId: 'R.Corr', revision: null, time: new Date().toISOString(), record: null, error: huge }],
  })
  book.addMatch(
    rec(0),
    rule,
    {
      title: 't'.repeat(5000),
      dedup: 'd'.repeat(5000),
      severity: 'HIGH',
      alertContext: { big: 'c'.repeat(300 * 1024) },
      runbook: 'r'.repeat(3000),
    },
    Date.UTC(2026, 10, 20, 10),
  )
  book.addMatch(
    rec(100),
    rule,
    { title: 'short', dedup: 'short', severity: 'HIGH', alertContext: { small: 1 } },
    Date.UTC(2026, 10, 20, 10),
  )
  await book.commit({ logs: { [FILE]: 200 }, records: 2 })

  const errors = [...book.ruleErrors.map((e) => e.error)]
  t.equal(errors.length, 2)
  for (const e of errors) {
    t.ok(e.length <= 4096, `an error text is capped (${e.length})`)
    t.ok(e.endsWith('... (truncated)'))
  }
  const alerts = book.query({ limit: 10 }).results
  t.equal(alerts.length, 2)
  const big = alerts.find((a) => a.title !== 'short')!
  t.equal(big.title.length, 1000, 'the title: 1,000 characters')
  t.equal(big.title, `${'t'.repeat(985)}... (truncated)`, 'the first 985 and `... (truncated)`, as Panther')
  t.equal(big.dedup, `${'d'.repeat(985)}... (truncated)`, 'the dedup string too')
  t.equal(big.runbook.length <= 1000, true, 'and a runbook() over 1,000 characters')
  t.match(
    await book.context(big),
    { _error: /^alert_context size is \d+ characters, bigger than maximum of 204800 characters$/ },
    "a context over 200 KiB is replaced by Panther's _error",
  )
  t.same(await book.context(alerts.find((a) => a.title === 'short')!), { small: 1 }, 'a small context is kept whole')
  await book.close()

  // On disk: no file holds the large texts.
  const det = path.join(dir, 'detections')
  const cp = JSON.parse(await readFile(path.join(det, 'checkpoint.json'), 'utf8'))
  let bytes = 0
  for (const f of Object.keys(cp.outputs)) bytes += (await readFile(path.join(det, f))).length
  t.ok(bytes < 40_000, `the detection files hold ${bytes} bytes (the inputs were > 400 KB)`)
})
