// The Rule errors page in a real browser (Debian's chromium) against a real server: a Python rule
// raising in the real sandbox on records POSTed to the real log source. The page is in the nav and
// linked from the rule's Rule errors tab (filtered to the rule); each entry shows the rule (a link to its page),
// the count, the times, the message with its place in the code, and the record that caused it,
// fetched through the API on demand; the filters are in the address; axe-core finds nothing serious.
// Screenshot: RULEKEEPER_SCREENSHOTS=1 writes docs/images/console-rule-errors.png.
// Real port: a real client (a browser).
import path from 'node:path'
import t from 'tap'
import type { Browser, Page } from 'playwright-core'
import { ndjson, post, TOKEN } from '../ingest/helpers.js'
import { commandRecord, DETECT_ENV } from '../detect/helpers.js'
import { SAMPLE_BODIES, startTestServer, tempDir, type TestServer } from '../helpers/rulekeeper.js'
import { hasChromium, launch, newPage, seriousViolations, show, signIn } from './browser.js'

if (!hasChromium) {
  t.plan(0, 'no chromium at /usr/bin/chromium (.ci/run installs it)')
  process.exit(0)
}

const RAISES = `def rule(event):
    if event.deep_get("team_command", "command_name") == "boom":
        raise ValueError("boom for " + str(event.get("user_email")))
    return False
`

// The page's screenshot goes to docs/images/ when RULEKEEPER_SCREENSHOTS=1 (else a temp dir).
const SHOTS = process.env.RULEKEEPER_SCREENSHOTS === '1' ? path.resolve('docs/images') : tempDir('rk-console-shots-')
let s: TestServer
let browser: Browser
let page: Page
const problems: string[] = []

t.before(async () => {
  s = await startTestServer({ env: DETECT_ENV })
  for (const [id, body] of [
    ['Console.Raises', RAISES],
    ['Console.Quiet', 'def rule(event):\n    return False\n'],
  ]) {
    const r = await s.request('POST', '/rules', SAMPLE_BODIES.python(id!, { body, tests: [] }))
    if (r.status !== 200) throw new Error(r.text)
  }
  const boom = (m: number, user: number) =>
    commandRecord('ce', 'boom', `2026-11-20T10:0${m}:00Z`, { user_email: `user${user}@example.com`, m })
  const res = await post(`${s.url}/http/editor-audit`, ndjson([boom(1, 1), boom(2, 2), boom(3, 3), boom(4, 3)]), {
    authorization: `Bearer ${TOKEN}`,
  })
  if (res.status !== 200) throw new Error(JSON.stringify(res.body))
  await s.server.detection.detector.idle()
  browser = await launch()
  page = await newPage(browser, problems)
  await signIn(page, s.url, s.token)
})
t.teardown(async () => {
  await browser?.close()
  await s?.close()
})

t.test('the rule errors page: entries, count, record, links, filters', async (t) => {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Rule errors' }).click()
  await page.getByRole('heading', { name: 'Rule errors', level: 1 }).waitFor()
  const entries = page.locator('main li.rule-error')
  await entries.first().waitFor()
  // Each error text is its own entry: four records raised with three messages.
  t.equal(await entries.count(), 3, 'one entry per rule and message')
  // Errors of one chunk share their time: entries are found by their message.
  const latest = entries.filter({ hasText: 'user3@example.com' })
  t.match(await latest.getByRole('heading').textContent(), 'Console.Raises')
  t.match(await latest.textContent(), /2 errors last 2026-\d\d-\d\d \d\d:\d\d:\d\dZ, first 2026-/)
  t.match(await entries.filter({ hasText: 'user1@example.com' }).textContent(), /1 error at 2026-/)
  t.match(await latest.locator('pre').textContent(), /ValueError: boom for user3@example.com \(.*line 3\)/)
  t.equal(
    await page.getByRole('link', { name: 'Rule errors' }).first().getAttribute('aria-current'),
    'page',
    'the nav marks the page',
  )
  t.same(await seriousViolations(page), [], 'axe: rule errors')

  await latest.getByRole('button', { name: 'Show record' }).click()
  const record = latest.getByLabel(/^Record of error \d$/)
  await record.waitFor()
  const shown = JSON.parse((await record.textContent()) ?? '')
  t.equal(shown.user_email, 'user3@example.com', 'the record that caused the latest, as stored')
  t.equal(shown.m, 4)
  t.equal(shown.p_log_type, 'Editor.Audit')
  t.equal(await latest.getByRole('button', { name: 'Hide record' }).getAttribute('aria-expanded'), 'true')
  t.same(await seriousViolations(page), [], 'axe: a record shown')
  await page.screenshot({ path: path.join(SHOTS, 'console-rule-errors.png') })

  await latest.getByRole('link', { name: 'Console.Raises' }).click()
  await page.getByRole('heading', { name: 'Console.Raises', level: 1 }).waitFor()
  t.match(page.url(), /#\/rules\/rules\/Console\.Raises$/, 'the rule id links to the rule')

  // From the rule's page, its errors: its Rule errors tab, and from there the page filtered to the rule.
  await page.getByRole('navigation', { name: 'Rule views' }).getByRole('link', { name: 'Rule errors' }).click()
  await page.getByRole('heading', { name: 'Console.Raises', level: 1 }).waitFor()
  t.match(page.url(), /#\/rules\/rules\/Console\.Raises\/errors$/)
  await entries.first().waitFor()
  t.equal(await entries.count(), 3)
  await page.getByRole('link', { name: 'On the Rule errors page' }).click()
  await page.getByRole('heading', { name: 'Rule errors', level: 1 }).waitFor()
  t.match(page.url(), /#\/rule-errors\?rule-id=Console\.Raises$/)
  t.equal(await page.getByLabel('Rule id').inputValue(), 'Console.Raises')
  await entries.first().waitFor()
  t.equal(await entries.count(), 3)

  await show(page, `${s.url}/#/rules/rules/Console.Quiet`)
  await page.getByRole('heading', { name: 'Console.Quiet', level: 1 }).waitFor()
  await page.getByRole('navigation', { name: 'Rule views' }).getByRole('link', { name: 'Rule errors' }).click()
  await page.getByText('No rule error of this rule.').waitFor()
  await page.getByRole('link', { name: 'On the Rule errors page' }).click()
  await page.getByText('No rule error matches.').waitFor()
  t.pass('a rule without errors: none listed')

  // A bad time is the API's 400, said on the page.
  await page.getByLabel('Since').fill('yesterday')
  await page.getByRole('button', { name: 'Filter' }).click()
  await page.getByRole('alert').waitFor()
  t.match(await page.getByRole('alert').textContent(), /since must be an RFC 3339 time.*HTTP 400/)
  await page.getByLabel('Since').fill('2000-01-01T00:00:00Z')
  await page.getByLabel('Rule id').fill('Console.Raises')
  await page.getByRole('button', { name: 'Filter' }).click()
  await entries.first().waitFor()
  t.equal(await entries.count(), 3, 'since: the errors from then on')
  t.same(problems, [], 'no script error or CSP violation')
})
