// The undo log of alert groups (group-undo.ts) as the grouper keeps it and the alert book rolls it
// back after a failed run: counts and summaries go back, deliveries are shared (the dispatcher
// updates its entries in place), and changes made by outside output still waiting for its commit
// (a correlation run during the loop) are left for that commit.
import pino from 'pino'
import t from 'tap'
import { AlertBook } from '../../src/detect/alert-book.js'
import { DetectionStore } from '../../src/detect/detection-store.js'
import { Grouper } from '../../src/detect/grouping.js'
import { tempDir } from '../helpers/rulekeeper.js'
import { ruleMeta, storedRecord } from './rule-meta.js'

const rule = ruleMeta({ id: 'R.Undo', summaryAttributes: ['n'] })
const fields = { title: 't', dedup: 'd', severity: 'HIGH', alertContext: {} }
const at = Date.UTC(2026, 10, 20, 10)

t.test('a roll-back puts counts back and leaves a delivery entry the dispatcher updated as it is', async (t) => {
  const grouper = new Grouper([], { undo: true })
  const { group } = grouper.add(rule, fields, at, { n: 1 }, at)
  grouper.takeUndo() // its commit
  const entry = { id: 'dest', state: 'pending' as const, attempts: 0, lastError: null }
  group.destinations = [entry]
  grouper.add(rule, fields, at, { n: 2 }, at)
  t.equal(group.eventCount, 2)
  // The dispatcher delivers meanwhile, updating the entry it was given.
  Object.assign(entry, { state: 'delivered', attempts: 1 })
  grouper.rollBack(grouper.takeUndo())
  t.equal(group.eventCount, 1, 'the count is back')
  t.same(Object.keys(group.summaryCounts.n ?? {}), ['1'], 'the summary is back')
  t.equal(group.destinations[0], entry, 'the delivery entry is the one the dispatcher holds')
  t.equal(entry.state, 'delivered', 'with the state it gave it')
})

t.test('a replay grouper keeps no undo log', async (t) => {
  const grouper = new Grouper()
  grouper.add(rule, fields, at, { n: 1 }, at)
  t.equal(grouper.takeUndo().size, 0)
})

t.test('a failed run leaves the groups of outside output still waiting for its commit', async (t) => {
  const dir = tempDir('rk-undo-')
  const store = await DetectionStore.open(dir, pino({ level: 'silent' }))
  const book = new AlertBook(store, {})
  book.hold() // the loop runs
  book.addMatch(storedRecord(0), rule, fields, at)
  // A correlation run meanwhile: its group is outside output, committed after the loop.
  const correlation = ruleMeta({ id: 'C.Undo', kind: 'correlation' })
  const outcome = book.addEvents(correlation, fields, at, [{ eventMs: at, event: {} }], at)
  const waiting = book.commitOutput({
    matches: [],
    groups: [outcome.group],
    created: outcome.created ? [{ group: outcome.group, rule: correlation, match: fields }] : [],
    errors: [],
  })
  book.discardLoop() // the loop's run failed
  book.release()
  await book.commitWaiting()
  await waiting
  t.equal(book.query({ limit: 10, ruleIds: ['R.Undo'] }).results.length, 0, "the loop's alert is rolled back")
  t.same(
    book.query({ limit: 10, ruleIds: ['C.Undo'] }).results.map((g) => g.id),
    [outcome.group.id],
    "the correlation's alert stays, and is committed",
  )
  t.same(
    store.groups.map((g) => g.id),
    [],
    'nothing was committed before this store was opened',
  )
  await book.close()
  const again = await DetectionStore.open(dir, pino({ level: 'silent' }))
  t.same(
    again.groups.map((g) => g.ruleId),
    ['C.Undo'],
    "after a restart: the correlation's group, and not the loop's",
  )
  await again.close()
})
