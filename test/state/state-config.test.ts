// The `state:` config section (src/state/config.ts): absent is the embedded file store; a wrong value
// is a problem named by its key path (a password in the file's URL too); `state.postgres.url` and `state.replica` reach the settings,
// with the environment's RULEKEEPER_POSTGRES_URL and RULEKEEPER_REPLICA over the file; `state.eventsDir`
// (the shared events directory) is a path, made absolute.
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { loadServiceConfig } from '../../src/config-sections.js'
import { stateSettings } from '../../src/state/config.js'

function problems(over: unknown): string[] {
  try {
    loadServiceConfig({}, over)
  } catch (err) {
    return (err as Error).message.split('\n').slice(1)
  }
  return []
}

const settings = (over: unknown, env: Record<string, string> = {}) =>
  stateSettings(loadServiceConfig({}, over) as unknown as Record<string, unknown>, env)

t.test('state: absent is the file store, named after the host', async (t) => {
  t.same(settings({}), { postgres: null, replica: os.hostname(), eventsDir: null, leaseTtlMs: 30_000 })
})

t.test('state: every wrong value named by its key path', async (t) => {
  t.same(problems({ state: { postgres: { url: 'mysql://db/x', pool: 3 }, replica: '../a', store: 'pg' } }), [
    '  state.store: unknown key; known keys: postgres, replica, eventsDir, leaseTtlMs',
    '  state.replica: must be 1 to 100 letters, digits, dots, dashes or underscores, starting with a letter or digit',
    '  state.postgres.pool: unknown key; known keys: url',
    '  state.postgres.url: must be a postgres:// or postgresql:// URL',
  ])
  t.same(problems({ state: 'postgres' }), ['  state: must be a map'])
  for (const url of ['postgresql://rk:hunter2@db/rk', 'postgres://rk@db/rk?sslmode=require&password=hunter2'])
    t.same(
      problems({ state: { postgres: { url } } }),
      [
        '  state.postgres.url: must not hold a password (put it in PGPASSWORD, or the whole URL in RULEKEEPER_POSTGRES_URL)',
      ],
      'a password in the file is refused',
    )
  t.same(problems({ stat: {} }).length, 1, 'a misspelt section name is an unknown key')
})

t.test('state: the URL and replica reach the settings, the environment first', async (t) => {
  const over = { state: { postgres: { url: 'postgresql://rk@db.internal/rulekeeper' }, replica: 'rk-1' } }
  t.same(problems(over), [])
  t.same(settings(over), {
    postgres: { url: 'postgresql://rk@db.internal/rulekeeper' },
    replica: 'rk-1',
    eventsDir: null,
    leaseTtlMs: 30_000,
  })
  t.same(settings(over, { RULEKEEPER_POSTGRES_URL: 'postgres://other/db', RULEKEEPER_REPLICA: 'rk-2' }), {
    postgres: { url: 'postgres://other/db' },
    replica: 'rk-2',
    eventsDir: null,
    leaseTtlMs: 30_000,
  })
})

t.test('state: the shared events directory is a path, made absolute', async (t) => {
  t.same(problems({ state: { eventsDir: 3 } }), ['  state.eventsDir: must be a directory path (a shared filesystem)'])
  t.same(problems({ state: { eventsDir: '  ' } }), [
    '  state.eventsDir: must be a directory path (a shared filesystem)',
  ])
  t.equal(settings({ state: { eventsDir: '/mnt/rk-events', replica: 'rk-1' } }).eventsDir, '/mnt/rk-events')
  t.equal(settings({ state: { eventsDir: 'events' } }).eventsDir, path.resolve('events'))
})

t.test("state: the schedules lease's time to live, 1 s to 10 min", async (t) => {
  t.equal(settings({ state: { leaseTtlMs: 5_000 } }).leaseTtlMs, 5_000)
  for (const bad of [999, 600_001, 1.5, '30s'])
    t.same(
      problems({ state: { leaseTtlMs: bad } }),
      ['  state.leaseTtlMs: must be a whole number of milliseconds, 1000 to 600000'],
      String(bad),
    )
})
