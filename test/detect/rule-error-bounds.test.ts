// Rule errors in bounded memory (issue 27 finding 7: 180k errors cost +156 MB and a 2.1 s start):
// the alert book keeps the newest errors one by one and every error folded per rule and text; a
// start reads back only the newest errors (from the files' ends), never the whole history.
import pino from 'pino'
import t from 'tap'
import { AlertBook } from '../../src/detect/alert-book.js'
import { DetectionStore } from '../../src/detect/detection-store.js'
import { RuleErrorList } from '../../src/detect/rule-error-list.js'
import { DEFAULT_MAX_ERRORS, RuleErrorWindow } from '../../src/detect/rule-error-window.js'
import { tempDir } from '../helpers/rulekeeper.js'

const err = (n: number, text = `boom ${n % 3}`) => ({
  ruleId: `R.${n % 2}`,
  revision: null,
  time: new Date(Date.UTC(2026, 10, 20) + n * 1000).toISOString(),
  record: { partition: 'Editor.Audit/dt=2026-11-20/hour=00/a.ndjson', offset: n * 10 },
  error: text,
})

t.test('the window holds the newest errors and folds them all', async (t) => {
  const w = new RuleErrorWindow([], 1000, 10)
  for (let n = 0; n < 30_000; n++) w.push(err(n))
  t.ok(w.length - w.first <= 1100, `errors held: ${w.length - w.first} of ${w.length}`)
  t.equal(w.length, 30_000, 'positions count every error')
  t.equal(w.at(29_999)?.record?.offset, 299_990, 'the newest is held')
  t.equal(w.at(0), undefined, 'the oldest is not')
  const counts = [...w.groups.values()].reduce((a, g) => a + g.count, 0)
  t.equal(counts, 30_000, 'the folded counts cover every error')
  t.equal(w.groups.size, 6, 'one entry per rule and text (2 rules × 3 texts)')

  // Distinct texts past the bound: the entries seen least recently go.
  const g = new RuleErrorWindow([], 1000, 100)
  for (let n = 0; n < 5000; n++) g.push(err(n, `unique ${n}`))
  t.ok(g.groups.size <= 110, `distinct entries held: ${g.groups.size}`)
  t.ok(
    [...g.groups.values()].some((e) => e.error === 'unique 4999'),
    'the newest entry is kept',
  )

  // The API's list pages over what is held, newest first, with cursors that stay valid.
  const list = new RuleErrorList(w, '/nonexistent', () => null)
  const p1 = list.list({ limit: 2 })
  t.same(
    p1.results.map((e) => e.record?.offset),
    [299_990, 299_980],
  )
  for (let n = 30_000; n < 30_500; n++) w.push(err(n))
  const p2 = list.list({ limit: 2, before: p1.next! })
  t.same(
    p2.results.map((e) => e.record?.offset),
    [299_970, 299_960],
    'the next page goes on where the first ended, errors added meanwhile',
  )
  const groups = list.groups({ limit: 10 }).results
  t.equal(
    groups.reduce((a, e) => a + e.count, 0),
    30_500,
    'the groups count every error, held or not',
  )
})

t.test('a start reads back only the newest rule errors', async (t) => {
  const dir = tempDir()
  const logger = pino({ level: 'silent' })
  const store = await DetectionStore.open(dir, logger)
  const total = DEFAULT_MAX_ERRORS + 5000
  for (let n = 0; n < total; n++) store.addError(err(n))
  await store.commit()
  await store.close()
  const again = await DetectionStore.open(dir, logger)
  t.equal(again.errors.length, DEFAULT_MAX_ERRORS, `${again.errors.length} of ${total} errors read back`)
  t.equal(again.errors.at(-1)?.record?.offset, (total - 1) * 10, 'the newest last')
  t.equal(again.errors[0]?.record?.offset, (total - DEFAULT_MAX_ERRORS) * 10, 'in order')
  const book = new AlertBook(again, {})
  t.equal(book.ruleErrors.length, DEFAULT_MAX_ERRORS)
  await book.close()
})
