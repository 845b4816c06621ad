// A rule's page in a real browser (Debian's chromium) against a real server (issue 32): its Alerts,
// Rule errors and Runs tabs (each its own address) show this rule's alerts and errors as the API has
// them; Preview runs the unsaved rule in the editors over stored events and shows the alerts a replay
// of the same rule gives once saved, and Cancel preview stops the replay on the server; the tests as
// forms, each run alone (pass and fail, the rule's outputs), the event checked as JSON while typed,
// and the YAML view kept the same; at 1280 and 390 px no sideways page scroll, nothing unnamed,
// axe-core finds nothing serious. Stored events written before start, alerts and errors from ingest.
// Real port: a real client (a browser).
import t from 'tap'
import type { Browser, Page } from 'playwright-core'
import { commandRecord, sendAndDetect } from '../detect/helpers.js'
import { REPLAY_DAY, writeStoredAudit } from '../detect/stored-records.js'
import { SAMPLE_BODIES, startTestServer, tempDir, type TestServer } from '../helpers/rulekeeper.js'
import { TOKEN as AUDIT_TOKEN } from '../ingest/helpers.js'
import { waitFor } from '../helpers/wait.js'
import { hasChromium, launch, newPage, seriousViolations, show, signIn } from './browser.js'

if (!hasChromium) {
  t.plan(0, 'no chromium at /usr/bin/chromium (.ci/run installs it)')
  process.exit(0)
}

const LIVE = `def rule(event):
    name = event.deep_get("team_command", "command_name")
    if name == "boom":
        raise ValueError("boom in the page test")
    return name == "page-alert"
`
const USERS = `def rule(event):
    return event.get("user_email", "").startswith("user1@")


def title(event):
    return "seen " + event.get("user_email")


def dedup(event):
    return event.get("user_email")
`
const EDITED = USERS.replace('startswith("user1@")', 'startswith(("user1@", "user2@"))')
const SLOW = 'import time\n\n\ndef rule(event):\n    time.sleep(0.05)\n    return False\n'

let s: TestServer
let browser: Browser
let page: Page
const problems: string[] = []

async function rule(id: string, body: string, extra: Record<string, unknown> = {}) {
  const r = await s.request('POST', '/rules', { ...SAMPLE_BODIES.python(id, { body, tests: [] }), ...extra })
  if (r.status !== 200) throw new Error(r.text)
}

t.before(async () => {
  const dataDir = tempDir('rk-rule-page-')
  await writeStoredAudit(dataDir, 400)
  s = await startTestServer({ dataDir, env: { RULEKEEPER_EDITOR_AUDIT_TOKEN: AUDIT_TOKEN } })
  await rule('Page.Live', LIVE)
  await rule('Page.Users', USERS, {
    enabled: false,
    tests: [
      { name: 'user one', expectedResult: true, log: { user_email: 'user1@example.com' } },
      { name: 'user two', expectedResult: false, log: { user_email: 'user5@example.com' } },
    ],
  })
  await rule('Page.Slow', SLOW, { enabled: false })
  await sendAndDetect(s, [
    commandRecord('pg', 'page-alert', '2026-11-20T10:01:00Z'),
    commandRecord('pg', 'page-alert', '2026-11-20T10:02:00Z'),
    commandRecord('pg', 'boom', '2026-11-20T10:03:00Z'),
    commandRecord('pg', 'boom', '2026-11-20T10:04:00Z'),
  ])
  browser = await launch()
  page = await newPage(browser, problems)
  await signIn(page, s.url, s.token)
})
t.teardown(async () => {
  await browser?.close()
  await s?.close()
})

const ruleViews = () => page.getByRole('navigation', { name: 'Rule views' })
const noSidewaysScroll = () =>
  page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)

t.test('the Alerts, Rule errors and Runs tabs show this rule’s', async (t) => {
  const alerts = (await s.request('GET', '/alerts?rule-id=Page.Live')).body.results as any[]
  t.equal(alerts.length, 1, 'the API: one alert of the rule')
  await show(page, `${s.url}/#/rules/rules/Page.Live`)
  await page.getByRole('heading', { name: 'Page.Live', level: 1 }).waitFor()
  await ruleViews().getByRole('link', { name: 'Alerts' }).click()
  const table = page.locator('table.rule-alerts')
  await table.waitFor()
  t.match(page.url(), /#\/rules\/rules\/Page\.Live\/alerts$/, 'the tab is in the address')
  t.equal(await ruleViews().getByRole('link', { name: 'Alerts' }).getAttribute('aria-current'), 'page')
  t.equal(await table.locator('tbody tr').count(), 1)
  t.match(await table.locator('tbody tr').textContent(), /MEDIUM|LOW/)
  t.match(await table.locator('tbody tr').textContent(), new RegExp(`${alerts[0].eventCount}$`))
  t.same(await seriousViolations(page), [], 'axe: alerts tab')

  // Bookmarkable: the errors tab opened by its address.
  await show(page, `${s.url}/#/rules/rules/Page.Live/errors`)
  const entries = page.locator('main li.rule-error')
  await entries.first().waitFor()
  const groups = (await s.request('GET', '/rule-errors/groups?rule-id=Page.Live')).body.results as any[]
  t.equal(await entries.count(), groups.length, 'as many entries as the API’s groups')
  t.match(await entries.first().textContent(), /2 errors/)
  t.match(await entries.first().locator('pre').textContent(), /ValueError: boom in the page test/)
  t.same(await seriousViolations(page), [], 'axe: errors tab')

  await ruleViews().getByRole('link', { name: 'Runs' }).click()
  await page.getByText('This rule runs on each record as it is stored: it has no runs.').waitFor()
  t.pass('a streaming rule has no runs')

  // A correlation rule: its schedule, last and next run, as GET /status has them.
  const corr = await s.request('POST', '/correlation-rules', {
    id: 'Page.Corr',
    severity: 'HIGH',
    detection:
      '- Sequence:\n    - ID: First\n      RuleID: Page.Live\n    - ID: Then\n      RuleID: Page.Users\n  Transitions:\n    - ID: First FOLLOWED BY Then\n      From: First\n      To: Then\n      WithinTimeFrameMinutes: 30\n      Match:\n        - On: p_alert_context.actor\n  LookbackWindowMinutes: 60\n  Schedule:\n    RateMinutes: 60\n    TimeoutMinutes: 5\n',
  })
  t.equal(corr.status, 200, corr.text)
  // The rule's first run may happen while the page loads: the status read before and after the
  // page must agree for the page to be compared with it (read again until they do).
  const statusOf = async () =>
    (await s.request('GET', '/status')).body.detection?.correlation?.rules?.find((r: any) => r.ruleId === 'Page.Corr')
  const { scheduled, cells } = await waitFor(
    'the runs tab with the rule as GET /status has it',
    async () => {
      const before = await statusOf()
      if (!before) return undefined
      await show(page, `${s.url}/#/rules/correlation-rules/Page.Corr/runs`)
      const runs = page.locator('table.runs tbody tr')
      await runs.waitFor()
      const shown = await runs.locator('th, td').allTextContents()
      const after = await statusOf()
      return JSON.stringify(after) === JSON.stringify(before) ? { scheduled: after, cells: shown } : undefined
    },
    20_000,
    50,
  )
  t.equal(cells[0], 'Page.Corr')
  t.equal(cells[1], 'every 60 min')
  t.equal(
    cells[2],
    scheduled.lastRun ? scheduled.lastRun.evaluatedAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : 'never',
  )
  t.equal(cells[4], scheduled.nextRunAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z'), 'the next run')
  t.match(cells[5], /^\d+ runs, \d+ errors$/)
  t.same(await seriousViolations(page), [], 'axe: runs tab')

  // Another rule's tabs: none of Page.Live's.
  await show(page, `${s.url}/#/rules/rules/Page.Users/alerts`)
  await page.getByText('This rule has raised no alert.').waitFor()
  await ruleViews().getByRole('link', { name: 'Rule errors' }).click()
  await page.getByText('No rule error of this rule.').waitFor()

  // At 390 px: the tabs and the table fit, a badge is one line, nothing scrolls sideways.
  await show(page, `${s.url}/#/rules/rules/Page.Live/alerts`)
  await table.waitFor()
  await page.setViewportSize({ width: 390, height: 800 })
  t.ok(await noSidewaysScroll(), 'no sideways page scroll at 390 px')
  const badge = (await table.locator('.sev').first().boundingBox())!
  const tab = (await ruleViews().getByRole('link', { name: 'Rule errors' }).boundingBox())!
  t.ok(badge.height < 30 && tab.height < 40, `one line each: badge ${badge.height} px, tab ${tab.height} px`)
  t.same(await seriousViolations(page), [], 'axe: alerts tab at 390 px')
  await page.setViewportSize({ width: 1280, height: 800 })

  // The alert's row links to its page.
  await table.locator('tbody a').click()
  await page.getByLabel('Assignee').waitFor()
  t.match(page.url(), new RegExp(`#/alerts/${alerts[0].id}$`), 'to the alert page')
})

t.test('preview of an unsaved change: the alerts its replay gives; cancel stops it', async (t) => {
  await show(page, `${s.url}/#/rules/rules/Page.Users`)
  await page.getByLabel('Python body').fill(EDITED)
  await page.getByLabel('From', { exact: true }).fill(REPLAY_DAY.from)
  await page.getByLabel('To', { exact: true }).fill(REPLAY_DAY.to)
  await page.getByRole('button', { name: 'Preview', exact: true }).click()
  const counts = page.locator('.preview-counts')
  await counts.waitFor()
  const shown = {
    counts: await counts.textContent(),
    titles: await page.locator('li.preview-alert .alert-title').allTextContents(),
  }
  t.equal((await s.request('GET', '/rules/Page.Users')).body.body, USERS, 'nothing was saved')
  const events = page.locator('li.preview-alert').first()
  await events.getByText(/^Its first 2 events$/).click()
  const sample = (await events.locator('pre').textContent())!.split('\n').map((l) => JSON.parse(l))
  t.equal(sample.length, 2)
  t.ok(
    sample.every((e) => `seen ${e.user_email}` === shown.titles[0]),
    'the events of that alert',
  )
  t.same(await seriousViolations(page), [], 'axe: a preview shown')

  // The same rule saved: the API's replay gives what the page showed.
  await page.getByLabel('Change reason').fill('users 1 and 2')
  await page.getByRole('button', { name: 'Save' }).click()
  await page.getByText(/^Saved at /).waitFor()
  const replay = await s.request('POST', '/replay', { ...REPLAY_DAY, ruleIds: ['Page.Users'] })
  t.equal(replay.status, 200, replay.text)
  const [c] = replay.body.rules
  t.equal(shown.counts, `${replay.body.records} events read, ${c.matches} matched, ${replay.body.alertCount} alerts.`)
  t.same(
    shown.titles,
    replay.body.alerts.map((a: any) => a.title),
    'the same alerts, in the same order',
  )
  t.ok(shown.titles.length >= 2, `${shown.titles.length} alerts`)

  // A slow preview (50 ms a record), cancelled: the server's replay stops and frees its place.
  const queue = s.server.detection.replays.queue
  await show(page, `${s.url}/#/rules/rules/Page.Slow`)
  await page.getByLabel('From', { exact: true }).fill(REPLAY_DAY.from)
  await page.getByLabel('To', { exact: true }).fill(REPLAY_DAY.to)
  const started = Date.now()
  await page.getByRole('button', { name: 'Preview', exact: true }).click()
  await waitFor('the preview running on the server', () => queue.size.running === 1, 15_000, 20)
  await page.getByRole('button', { name: 'Cancel preview' }).click()
  await page.getByText('Preview cancelled: the server stopped it.').waitFor()
  await waitFor('the replay place freed', () => queue.size.running === 0, 20_000, 20)
  const took = Date.now() - started
  t.ok(took < 15_000, `the replay stopped after ${took} ms (it would run 20 s)`)
  t.equal(await page.getByRole('button', { name: 'Preview', exact: true }).isEnabled(), true)
  t.same(problems, [], 'no script error or CSP violation')
})

t.test('tests as forms: one run alone, pass and fail; JSON checked; the YAML the same', async (t) => {
  await show(page, `${s.url}/#/rules/rules/Page.Users`)
  await page.getByRole('heading', { name: 'Page.Users', level: 1 }).waitFor()
  await page.getByLabel('Forms, one per test').check()
  const forms = page.locator('fieldset.test-form')
  t.equal(await forms.count(), 2, 'a form per test')
  t.notMatch(await page.getByLabel('Rule (YAML)').inputValue(), /user one/, 'the tests left the YAML')
  // Saved above: users 1 and 2 match; user5 does not (expected false: passes).
  await page.getByRole('button', { name: 'Run test user one' }).click()
  const one = forms.nth(0).locator('.test-result')
  await one.getByText('passed').waitFor()
  t.match(await one.textContent(), /title"seen user1@example\.com"/, 'the rule’s outputs')
  await forms.nth(1).getByLabel('Expected result').selectOption('true')
  await page.getByRole('button', { name: 'Run test user two' }).click()
  const two = forms.nth(1).locator('.test-result')
  await two.getByText('failed').waitFor()
  t.match(await two.textContent(), /expected true, the rule returned false/)

  const event = forms.nth(1).getByLabel('Event (JSON)')
  await event.fill('{"user_email": ')
  t.equal(await event.getAttribute('aria-invalid'), 'true', 'checked as typed')
  await forms
    .nth(1)
    .getByText(/^Not valid JSON/)
    .waitFor()
  await event.fill('{"user_email": "user2@example.com"}')
  t.equal(await event.getAttribute('aria-invalid'), null)
  await page.getByRole('button', { name: 'Run test user two' }).click()
  await two.getByText('passed').waitFor()
  t.pass('user2 and expected true: passes')
  await forms.nth(1).getByLabel('Log type').fill('Editor.Audit')
  await forms.nth(1).getByRole('button', { name: 'Add mock' }).click()
  await forms.nth(1).getByLabel('Mock 1 name').fill('lookup')
  await forms.nth(1).getByLabel('Mock 1 return value').fill('yes')

  // 390 px: nothing sideways, nothing unnamed.
  await page.setViewportSize({ width: 390, height: 800 })
  t.ok(await noSidewaysScroll(), 'no sideways page scroll at 390 px')
  t.same(await seriousViolations(page), [], 'axe: forms at 390 px')
  await page.setViewportSize({ width: 1280, height: 800 })
  t.ok(await noSidewaysScroll(), 'no sideways page scroll at 1280 px')

  await page.getByLabel('YAML (in the rule)').check()
  const yaml = await page.getByLabel('Rule (YAML)').inputValue()
  t.match(yaml, /name: user two\n\s+expectedResult: true\n\s+log:\n\s+user_email: user2@example.com/)
  t.match(yaml, /logType: Editor.Audit/)
  t.match(yaml, /objectName: lookup\n\s+returnValue: yes/)
  // And back: the forms read the YAML's tests.
  await page.getByLabel('Rule (YAML)').fill(yaml.replace('name: user one', 'name: user uno'))
  await page.getByLabel('Forms, one per test').check()
  t.equal(await forms.nth(0).getByLabel('Test name').inputValue(), 'user uno')
  t.same(problems, [], 'no script error or CSP violation')
})
