// The query page in a real browser (Debian's chromium) against a real server: SQL run through
// POST /queries shows its columns and rows, the next page replaces the one shown, DuckDB's error is
// shown with its line; an alert's page links to "events around this alert", which opens the query
// page with the SQL of the alert's log type ±15 minutes around its first event (editable), and it
// finds the alert's event. Without Query Data, Run is disabled with the reason. axe-core finds
// nothing serious.
// Real port: a real client (a browser).
import path from 'node:path'
import { readFile } from 'node:fs/promises'
import t from 'tap'
import type { Browser, Page } from 'playwright-core'
import { startTestServer, type TestServer } from '../helpers/rulekeeper.js'
import { EXAMPLES, TOKEN as AUDIT_TOKEN, post } from '../ingest/helpers.js'
import { hasChromium, launch, newPage, seriousViolations, show, signIn } from './browser.js'

if (!hasChromium) {
  t.plan(0, 'no chromium at /usr/bin/chromium (.ci/run installs it)')
  process.exit(0)
}

let s: TestServer
let browser: Browser
let page: Page
const problems: string[] = []
const main = () => page.locator('main')

t.before(async () => {
  s = await startTestServer({ env: { RULEKEEPER_EDITOR_AUDIT_TOKEN: AUDIT_TOKEN } })
  const res = await post(`${s.url}/http/editor-audit`, await readFile(path.join(EXAMPLES, 'valid.ndjson')))
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

t.test('run a query: columns, rows, the next page, an error', async (t) => {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Query' }).click()
  await page.getByRole('heading', { name: 'Query', level: 1 }).waitFor()
  const sql = page.getByLabel('SQL')
  await sql.fill('SELECT i, i * 2 AS twice FROM range(250) t(i) ORDER BY i')
  await page.getByRole('button', { name: 'Run' }).click()
  const caption = main().locator('table.query-rows caption')
  await caption.filter({ hasText: 'Rows 1–100' }).waitFor()
  t.same(await main().locator('table.query-rows thead th').allTextContents(), ['i', 'twice'])
  t.equal(await main().locator('table.query-rows tbody tr').count(), 100)
  t.same(await main().locator('table.query-rows tbody tr').nth(7).locator('td').allTextContents(), ['7', '14'])
  t.same(await seriousViolations(page), [], 'axe: the query page with rows')
  await page.getByRole('button', { name: 'Next page' }).click()
  await caption.filter({ hasText: 'Rows 101–200' }).waitFor()
  t.same(await main().locator('table.query-rows tbody tr').first().locator('td').allTextContents(), ['100', '200'])
  t.equal(await main().locator('table.query-rows tbody tr').count(), 100, 'the next page replaced the first')

  // Rows of the stored events.
  await sql.fill('SELECT user_email, p_event_time FROM editor_audit ORDER BY p_event_time')
  await page.getByRole('button', { name: 'Run' }).click()
  await caption.filter({ hasText: /^Rows 1–/ }).waitFor()
  t.ok((await main().locator('table.query-rows tbody tr').count()) > 0, 'stored events are rows')

  await sql.fill('SELECT user_email\nFROM editor_audit\nWHERE nope = 1')
  await page.getByRole('button', { name: 'Run' }).click()
  const err = main().getByRole('alert')
  await err.waitFor()
  t.match(await err.textContent(), /Binder Error.*nope.*\(line 3, column 7\) \(HTTP 400\)/s)
  t.same(problems, [])
})

t.test('an alert links to the events around it, on the query page', async (t) => {
  await show(page, `${s.url}/#/alerts`)
  const link = main().locator('table.list tbody tr a').first()
  await link.waitFor()
  await link.click()
  const around = page.getByRole('link', { name: 'Events around this alert' })
  await around.waitFor()
  const alertId = decodeURIComponent(page.url().split('#/alerts/')[1]!)
  const alert = (await s.request('GET', `/alerts/${encodeURIComponent(alertId)}`)).body
  await around.click()
  await page.getByRole('heading', { name: 'Query', level: 1 }).waitFor()
  const sql = await page.getByLabel('SQL').inputValue()
  t.match(sql, /FROM panther_logs\.public\.editor_audit/)
  t.ok(sql.includes(`p_occurs_around('${alert.firstEventTime}', '15 minutes')`), sql)
  await page.getByRole('button', { name: 'Run' }).click()
  await main()
    .locator('table.query-rows caption')
    .filter({ hasText: /^Rows 1–/ })
    .waitFor()
  const times = await main()
    .locator('table.query-rows tbody tr')
    .evaluateAll((rows) => rows.map((r) => r.textContent ?? ''))
  t.ok(
    times.some((row) => row.includes(alert.firstEventTime)),
    'the alert’s first event is among the rows',
  )
  t.same(problems, [])
})

t.test('without Query Data, Run is disabled with the reason', async (t) => {
  const viewer = await s.makeToken('viewer', ['View Rules', 'View Alerts'])
  const other = await newPage(browser, problems)
  await signIn(other, s.url, viewer)
  await show(other, `${s.url}/#/query`)
  await other.getByRole('heading', { name: 'Query', level: 1 }).waitFor()
  t.ok(await other.getByRole('button', { name: 'Run' }).isDisabled())
  t.match(await other.locator('main').textContent(), /lacks the Query Data permission/)
  await other.close()
})

t.test('a query file has its page, reached from the rules list (its kind path holds a slash)', async (t) => {
  await show(page, `${s.url}/#/rules`)
  const link = main().getByRole('link', { name: 'Editor.Audit.AdminGrants.Hourly' })
  await link.waitFor()
  t.equal(await link.getAttribute('href'), '#/rules/queries%2Fscheduled/Editor.Audit.AdminGrants.Hourly')
  await link.click()
  await page.getByRole('heading', { name: /Editor\.Audit\.AdminGrants\.Hourly/, level: 1 }).waitFor()
  t.match(await main().textContent(), /p_occurs_since/)
  t.same(problems, [])
})
