// Routing in Panther's order (destinations() > OutputIds > severity), the config's checks (secrets
// from the environment only), the payloads (HMAC signature, Slack blocks) and the backoff's bounds.
import { createHmac } from 'node:crypto'
import t from 'tap'
import { parseDestinationConfig } from '../../src/destinations/config.js'
import { backoffMs, parseRetryAfter } from '../../src/destinations/dispatcher.js'
import { buildRequest, slackPayload } from '../../src/destinations/payload.js'
import { route, unknownOutputIds } from '../../src/destinations/routing.js'

const env = { SECRET: 's3cret', SLACK: 'https://hooks.slack.example/services/T/B/X' }
const { destinations, delivery } = parseDestinationConfig(
  {
    destinations: [
      {
        id: 'secops-webhook',
        type: 'webhook',
        url: 'https://h.example/rk',
        severities: ['HIGH', 'critical'],
        secretEnv: 'SECRET',
      },
      { id: 'secops-slack', type: 'slack', urlEnv: 'SLACK', severities: ['CRITICAL'] },
      { id: 'platform-oncall', type: 'webhook', url: 'https://h.example/p', severities: [] },
    ],
  },
  env,
)

t.test('the config: defaults, secrets from the environment', async (t) => {
  t.same(delivery, {
    attempts: 10,
    firstDelayMs: 1000,
    maxDelayMs: 600000,
    budgetMinutes: 60,
    timeoutMs: 10000,
    concurrency: 4,
  })
  t.equal(destinations[0]?.secret, 's3cret')
  t.equal(destinations[1]?.url, env.SLACK)
  t.equal(destinations[1]?.urlLabel, '$SLACK', 'the Slack URL is never shown, only its variable')
  t.same(destinations[0]?.severities, ['HIGH', 'CRITICAL'])
  const bad =
    (c: Record<string, unknown>, e: Record<string, string> = {}) =>
    () =>
      parseDestinationConfig(c, e)
  t.throws(
    bad({ destinations: [{ id: 'x', type: 'webhook', url: 'https://a', secretEnv: 'NOPE' }] }),
    /destinations\[0\]\.secretEnv: the environment variable NOPE is not set/,
  )
  t.throws(bad({ destinations: [{ id: 'x', type: 'slack', url: 'https://hooks.slack.example/x' }] }), /urlEnv/)
  t.throws(bad({ destinations: [{ id: 'x', type: 'webhook', url: 'https://u:p@a/' }] }), /without credentials/)
  t.throws(
    bad({
      destinations: [
        { id: 'x', type: 'email', url: 'https://a' },
        { id: 'x', type: 'webhook', url: 'ftp://a' },
      ],
    }),
    /destinations\[0\]\.type: must be webhook or slack[\s\S]*destinations\[1\]\.id: x is used twice[\s\S]*http\(s\) URL/,
  )
  t.throws(bad({ destinations: [{ id: 'x', type: 'webhook', url: 'https://a', severities: ['URGENT'] }] }), /URGENT/)
  t.throws(
    bad({ delivery: { attempts: 0, retries: 3 } }),
    /delivery\.retries: unknown key[\s\S]*delivery\.attempts: must be/,
  )
})

t.test("routing: Panther's order of precedence", async (t) => {
  const r = (severity: string, outputIds: string[], dynamic?: unknown) =>
    route({ severity, outputIds, dynamic }, destinations)
  t.same(r('HIGH', []), { ids: ['secops-webhook'], by: 'severity', unknown: [] }, 'severity defaults')
  t.same(r('CRITICAL', []).ids, ['secops-webhook', 'secops-slack'])
  t.same(r('LOW', []).ids, [], 'no destination subscribed to LOW')
  t.same(
    r('LOW', ['platform-oncall']),
    { ids: ['platform-oncall'], by: 'OutputIds', unknown: [] },
    'OutputIds over severity',
  )
  t.same(r('CRITICAL', ['platform-oncall', 'nope']), { ids: ['platform-oncall'], by: 'OutputIds', unknown: ['nope'] })
  t.same(r('CRITICAL', ['platform-oncall'], ['secops-slack']).ids, ['secops-slack'], 'destinations() over OutputIds')
  t.same(r('CRITICAL', ['platform-oncall'], []), { ids: [], by: 'destinations()', unknown: [] }, '[] routes nowhere')
  t.same(r('CRITICAL', [], 'SKIP').ids, [], '"SKIP" routes nowhere')
  t.same(r('CRITICAL', [], ['secops-slack', 'SKIP']).ids, [], 'a list holding "SKIP" routes nowhere')
  t.same(r('CRITICAL', ['platform-oncall'], null).ids, ['platform-oncall'], 'None: not set, OutputIds decide')
  t.same(r('HIGH', [], undefined).ids, ['secops-webhook'], 'no destinations(): severity')
  t.same(
    unknownOutputIds(
      [
        { id: 'B', outputIds: ['zz', 'secops-slack'] },
        { id: 'A', outputIds: ['yy'] },
      ],
      destinations,
    ),
    [
      { ruleId: 'A', outputId: 'yy' },
      { ruleId: 'B', outputId: 'zz' },
    ],
  )
})

t.test('payloads: the alert signed with HMAC-SHA256, Slack text + blocks, one key', async (t) => {
  const alert = {
    id: 'a'.repeat(32),
    ruleId: 'R.1',
    severity: 'HIGH',
    title: 'x <@here> & y',
    eventCount: 2,
    runbook: 'call',
  }
  const hook = buildRequest(destinations[0]!, alert, 3)
  t.same(JSON.parse(hook.body), alert)
  t.equal(
    hook.headers['x-rulekeeper-signature'],
    `sha256=${createHmac('sha256', 's3cret').update(hook.body).digest('hex')}`,
  )
  t.equal(hook.headers['idempotency-key'], alert.id)
  t.equal(hook.headers['x-rulekeeper-attempt'], '3')
  const slack = buildRequest(destinations[1]!, alert, 1)
  t.equal(slack.headers['idempotency-key'], alert.id, 'Slack gets the key too')
  t.notOk(slack.headers['x-rulekeeper-signature'])
  const p = slackPayload(alert) as { text: string; blocks: Array<{ type: string }> }
  t.equal(p.text, '[HIGH] x &lt;@here&gt; &amp; y', 'mrkdwn escaped: no mention or link injection')
  t.same(
    p.blocks.map((b) => b.type),
    ['header', 'section', 'section', 'context'],
  )
})

t.test('backoff: doubling, jittered into [½, 1], capped; Retry-After', async (t) => {
  const p = { ...delivery, firstDelayMs: 1000, maxDelayMs: 5000 }
  t.equal(
    backoffMs(p, 1, () => 1),
    1000,
  )
  t.equal(
    backoffMs(p, 1, () => 0),
    500,
  )
  t.equal(
    backoffMs(p, 3, () => 1),
    4000,
  )
  t.equal(
    backoffMs(p, 30, () => 1),
    5000,
  )
  t.equal(
    backoffMs(p, 1, () => 1, 2_000_000),
    5000,
    'with a budget left: the spread step (2,000 s / 2^8), capped by maxDelayMs',
  )
  t.equal(
    backoffMs(p, 1, () => 1, 1_000_000),
    3906,
    'with a budget left: 1,000 s / 2^8 (9 attempts left)',
  )
  t.equal(parseRetryAfter('7', 0), 7000)
  t.equal(parseRetryAfter(new Date(10_000).toUTCString(), 4000), 6000)
  t.equal(parseRetryAfter('soon', 0), null)
})

t.test('backoff with the default policy: the attempts reach past a 10-minute outage, inside the budget', async (t) => {
  // The round as the dispatcher runs it: each wait computed from the budget left at that moment.
  const schedule = (jitter: number) => {
    const at = [0]
    const budget = delivery.budgetMinutes * 60_000
    for (let n = 1; n < delivery.attempts; n++)
      at.push(at[n - 1]! + backoffMs(delivery, n, () => jitter, budget - at[n - 1]!))
    return at
  }
  for (const jitter of [0, 0.5, 1]) {
    const at = schedule(jitter)
    t.equal(at.length, 10)
    t.ok(
      at.some((x) => x > 10 * 60_000),
      `jitter ${jitter}: an attempt after 10 minutes (${at.map((x) => Math.round(x / 1000)).join(', ')} s)`,
    )
    t.ok(at[9]! <= 60 * 60_000, `jitter ${jitter}: the last attempt within the 60-minute budget`)
    t.ok(at[1]! < 15_000, `jitter ${jitter}: the first retry within 15 s`)
    for (let n = 2; n < at.length; n++)
      t.ok(at[n]! - at[n - 1]! <= delivery.maxDelayMs, 'no wait longer than maxDelayMs')
  }
  // Without a budget to spread over (plain doubling) the ten attempts end within 8.5 minutes.
  let plain = 0
  for (let n = 1; n < delivery.attempts; n++) plain += backoffMs(delivery, n, () => 1)
  t.ok(plain < 10 * 60_000, `plain doubling would end at ${Math.round(plain / 1000)} s`)
})
