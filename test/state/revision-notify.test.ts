// The revision channel (src/state/revision-notify.ts) on a real PostgreSQL: an announced revision
// reaches every listener, a payload that is not a commit id is ignored, a channel whose connection
// is terminated connects again (telling its owner, who must fetch), and what it announced while
// away is sent once it is back.
import pg from 'pg'
import pino from 'pino'
import t from 'tap'
import { RevisionChannel } from '../../src/state/revision-notify.js'
import { freshDatabase } from '../helpers/postgres.js'
import { waitFor } from '../helpers/wait.js'

const SHA_1 = 'a'.repeat(40)
const SHA_2 = 'b'.repeat(40)
const SHA_3 = 'c'.repeat(40)

t.test('announcements reach every listener; a lost connection is reopened and catches up', async (t) => {
  const url = await freshDatabase()
  const logger = pino({ level: 'silent' })
  const open = async (retryMs: { first: number; max: number }) => {
    const heard: string[] = []
    let connects = 0
    const channel = new RevisionChannel({
      url,
      logger,
      onRevision: (r) => heard.push(r),
      onConnect: () => connects++,
      retryMs,
    })
    t.teardown(() => channel.close())
    await channel.start()
    return { channel, heard, connects: () => connects }
  }
  // a waits a second before connecting again: long enough to announce while it is away.
  const a = await open({ first: 1000, max: 1000 })
  const b = await open({ first: 50, max: 200 })
  t.equal(a.connects(), 1, 'the first connect is reported (the owner fetches then)')

  await a.channel.announce(SHA_1)
  await waitFor('b hears the revision', () => b.heard.includes(SHA_1))
  await waitFor('a hears its own revision too', () => a.heard.includes(SHA_1))

  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  t.teardown(() => admin.end())
  await admin.query("SELECT pg_notify('rulekeeper_revision', 'not a revision; DROP TABLE x')")
  await admin.query(`SELECT pg_notify('rulekeeper_revision', '${SHA_2}')`)
  await waitFor('b hears the next revision', () => b.heard.includes(SHA_2))
  t.same(b.heard, [SHA_1, SHA_2], 'a payload that is not a commit id is ignored')

  // a's connection is terminated; what it announces meanwhile is sent once it is back.
  const [row] = (
    await admin.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE application_name = 'rulekeeper-revisions' ORDER BY backend_start LIMIT 1",
    )
  ).rows
  await admin.query('SELECT pg_terminate_backend($1)', [row!.pid])
  await waitFor('a notices', () => !a.channel.listening, 20_000, 5)
  await a.channel.announce(SHA_3)
  await waitFor('a connects again', () => a.channel.listening)
  t.equal(a.connects(), 2, 'the reconnect is reported')
  await waitFor('b hears what a announced while away', () => b.heard.includes(SHA_3))
  t.equal(b.connects(), 1, "b's connection was never lost")

  await a.channel.close()
  t.notOk(a.channel.listening, 'closed')
  await admin.query(`SELECT pg_notify('rulekeeper_revision', '${SHA_1}')`)
  await waitFor('b hears it', () => b.heard.filter((r) => r === SHA_1).length === 2)
  t.equal(a.heard.filter((r) => r === SHA_1).length, 1, 'a closed channel hears nothing more')
})
