// Triage in the console (Playwright on Debian's chromium, a real server and repository, alerts made
// by the real ingest and detection path): the assignee and a comment set on an alert's page and seen
// through the API and after a reload; three alerts set to RESOLVED in one action from the list; the
// events table (the default columns hold the rule's GroupBy key, a chosen column is still chosen
// after a reload, the JSON toggle shows the raw event); the list's filters in the address; the
// layout at 1280 and 390 px (a MEDIUM badge on one line, no horizontal page scroll, labels) and
// axe-core. Screenshots at both widths go to a temp dir (never the repository).
// Real port: a real client (a browser).
import path from 'node:path'
import t from 'tap'
import type { Page } from 'playwright-core'
import type { Browser } from 'playwright-core'
import { commandRecord, commandRule, sendAndDetect } from '../detect/helpers.js'
import { startTestServer, tempDir, type TestServer } from '../helpers/rulekeeper.js'
import { TOKEN as AUDIT_TOKEN } from '../ingest/helpers.js'
import { hasChromium, launch, newPage, seriousViolations, show, signIn } from './browser.js'

if (!hasChromium) {
  t.plan(0, 'no chromium at /usr/bin/chromium (.ci/run installs it)')
  process.exit(0)
}

const SHOTS = process.env.RULEKEEPER_TRIAGE_SHOTS ?? tempDir('rk-triage-shots-')
const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true })

let s: TestServer
let browser: Browser
let page: Page
const problems: string[] = []
let ids: string[] = []

t.before(async () => {
  s = await startTestServer({ env: { RULEKEEPER_EDITOR_AUDIT_TOKEN: AUDIT_TOKEN } })
  // A long title squeezes the other columns of the list at 390 px (where a badge used to break).
  await commandRule(s, 'T.Triage.Console', 'tri', {
    severity: 'MEDIUM',
    groupBy: '- Key: user_email\n',
    displayName: 'Team command created by an administrator outside of the approved change window for the team',
  })
  await sendAndDetect(
    s,
    ['ana', 'ben', 'cy'].map((u, i) =>
      commandRecord('id', 'tri', `2026-11-20T10:0${i}:00Z`, { user_email: `${u}@example.com` }),
    ),
  )
  ids = ((await s.request('GET', '/alerts?rule-id=T.Triage.Console')).body.results as any[]).map((a) => a.id)
  if (ids.length !== 3) throw new Error(`expected 3 alerts, got ${ids.length}`)
  browser = await launch()
  page = await newPage(browser, problems)
  await signIn(page, s.url, s.token)
  t.comment(`screenshots in ${SHOTS}`)
})
t.teardown(async () => {
  await browser?.close()
  await s?.close()
})

const main = () => page.locator('main')
const api = async (id: string) => (await s.request('GET', `/alerts/${encodeURIComponent(id)}`)).body
const alertPage = async (id: string) => {
  const dedup = (await s.request('GET', `/alerts/${encodeURIComponent(id)}`)).body.dedup as string
  await show(page, `${s.url}/#/alerts/${encodeURIComponent(id)}`)
  // The address changes at once; the page before it stays until this alert is drawn, events included
  // (the alerts share a title; their dedup strings differ).
  await page.waitForFunction(
    (d) =>
      [...document.querySelectorAll('main dd')].some((e) => e.textContent === d) &&
      document.querySelector('main table.events') !== null,
    dedup,
  )
  await page.getByLabel('Assignee').waitFor()
}

t.test('assignee and a comment: set in the console, seen through the API and after a reload', async (t) => {
  await alertPage(ids[0]!)
  await page.getByLabel('Assignee').fill('dana@example.com')
  await page.getByRole('button', { name: 'Set assignee' }).click()
  await page.getByText('Assigned to dana@example.com.').waitFor()
  await page.getByLabel('Comment', { exact: true }).fill('Checked with Dana:\nit was a planned change.')
  await page.getByRole('button', { name: 'Add comment' }).click()
  await page.getByText('Comment added.').waitFor()
  const a = await api(ids[0]!)
  t.equal(a.assignee, 'dana@example.com', 'the API has the assignee')
  t.same(
    a.comments.map((c: any) => c.text),
    ['Checked with Dana:\nit was a planned change.'],
    'the API has the comment as typed',
  )
  t.same(
    a.history.map((h: any) => h.field),
    ['assignee', 'comment'],
  )
  await page.reload()
  await page.getByLabel('Assignee').waitFor()
  t.equal(await page.getByLabel('Assignee').inputValue(), 'dana@example.com', 'after a reload: the assignee')
  t.match(await main().locator('ol.comments').textContent(), /Checked with Dana:\s*it was a planned change\./)
  t.match(await main().locator('ul.history').textContent(), /assignee: \(nobody\) → dana@example\.com/)
  // Empty clears it.
  await page.getByLabel('Assignee').fill('')
  await page.getByRole('button', { name: 'Set assignee' }).click()
  await page.getByText('Nobody is assigned.').waitFor()
  t.equal((await api(ids[0]!)).assignee, null)
})

t.test('the events table: default columns, a chosen column kept after a reload, the JSON toggle', async (t) => {
  await alertPage(ids[0]!)
  const heads = () => main().locator('table.events thead th').allTextContents()
  t.same(await heads(), ['p_event_time', 'p_log_type', 'user_email', 'Event'], 'default: time, log type, GroupBy key')
  t.match(await main().locator('table.events tbody tr').first().textContent(), /@example\.com/)
  await page.getByText('Columns', { exact: true }).click()
  await page.getByRole('checkbox', { name: 'team_id', exact: true }).check()
  await page.getByRole('checkbox', { name: 'p_log_type', exact: true }).uncheck()
  t.same(await heads(), ['p_event_time', 'user_email', 'team_id', 'Event'])
  await page.reload()
  await page.getByLabel('Assignee').waitFor()
  t.same(await heads(), ['p_event_time', 'user_email', 'team_id', 'Event'], 'still chosen after a reload')
  // Another alert of the same log type uses the same choice.
  await alertPage(ids[1]!)
  t.same(await heads(), ['p_event_time', 'user_email', 'team_id', 'Event'], 'the same choice on another alert')
  const raw = main().locator('table.events tr.raw pre')
  t.equal(await raw.count(), 0, 'no raw event before the toggle')
  const toggle = page.getByRole('button', { name: 'JSON of event 1' })
  await toggle.click()
  t.equal(await toggle.getAttribute('aria-expanded'), 'true')
  const shown = JSON.parse((await raw.first().textContent()) ?? '')
  const events = (await s.request('GET', `/alerts/${encodeURIComponent(ids[1]!)}/events`)).body.results
  t.same(shown, events[0], 'the raw event as the API answers it')
  await toggle.click()
  t.ok(await main().locator('table.events tr.raw').first().isHidden(), 'hidden again')
  t.match(
    await page.evaluate(() => Object.keys(localStorage)),
    [/^rulekeeper\.alert-columns\./],
    'kept in localStorage',
  )
  t.notMatch(JSON.stringify(await page.evaluate(() => ({ ...localStorage }))), s.token, 'never the token')
})

t.test('bulk: three alerts set to RESOLVED in one action', async (t) => {
  const posts: string[] = []
  page.on('request', (r) => {
    if (r.method() === 'POST') posts.push(new URL(r.url()).pathname)
  })
  await show(page, `${s.url}/#/alerts?rule-id=T.Triage.Console`)
  await main().locator('table.list tbody tr').first().waitFor()
  t.equal(await main().locator('table.list tbody tr').count(), 3)
  await page.getByLabel('Select all on this page').check()
  await page.getByText('3 alerts selected.').waitFor()
  await page.getByLabel('Status of the selected alerts').selectOption('RESOLVED')
  await page.getByRole('button', { name: 'Set status' }).click()
  await page.getByText('3 alerts set to RESOLVED.').waitFor()
  t.same(posts, ['/alerts/status'], 'one request')
  for (const id of ids) t.equal((await api(id)).status, 'RESOLVED', id)
  t.same(
    await main().locator('td[data-status-of]').allTextContents(),
    ['RESOLVED', 'RESOLVED', 'RESOLVED'],
    'the rows show it',
  )
  // Back to OPEN one by one: the checkbox of one row.
  await page
    .getByLabel(/^Select alert /)
    .first()
    .check()
  await page.getByText('1 alert selected.').waitFor()
  await page.getByLabel('Status of the selected alerts').selectOption('OPEN')
  await page.getByRole('button', { name: 'Set status' }).click()
  await page.getByText('1 alert set to OPEN.').waitFor()
})

t.test('the list filters are the API’s and live in the address', async (t) => {
  await show(page, `${s.url}/#/alerts`)
  await page.getByLabel('Created after').fill('2999-01-01T00:00:00Z')
  await page.getByLabel('Rule id').fill('T.Triage.Console')
  await page.getByRole('button', { name: 'Filter' }).click()
  await page.getByText('No alert matches.').waitFor()
  t.match(page.url(), /created-after=2999-01-01T00%3A00%3A00Z/)
  t.match(page.url(), /rule-id=T.Triage.Console/)
  await show(page, `${s.url}/#/alerts?rule-id=T.Triage.Console&created-before=2999-01-01T00:00:00Z&status=RESOLVED`)
  await main().locator('table.list tbody tr').first().waitFor()
  t.equal(await main().locator('table.list tbody tr').count(), 2, 'status and created-before applied')
  t.equal(await page.getByLabel('Created before').inputValue(), '2999-01-01T00:00:00Z', 'the form shows the address')
  await show(page, `${s.url}/#/alerts?created-after=yesterday`)
  await page
    .getByText(/created-after/)
    .first()
    .waitFor()
  t.match(await main().locator('[role=alert]').textContent(), /HTTP 400/, 'a bad time is the API’s 400')
})

for (const width of [1280, 390]) {
  t.test(`layout at ${width} px: no page scroll sideways, badges on one line, labels, axe`, async (t) => {
    await page.setViewportSize({ width, height: 800 })
    t.teardown(() => page.setViewportSize({ width: 1280, height: 800 }))
    for (const [name, hash] of [
      ['alerts', '#/alerts?rule-id=T.Triage.Console'],
      ['alert', `#/alerts/${encodeURIComponent(ids[2]!)}`],
    ] as const) {
      await show(page, `${s.url}/${hash}`)
      await main().locator('.sev-MEDIUM').first().waitFor()
      await page.waitForLoadState('networkidle')
      const scroll = await page.evaluate(() => document.scrollingElement!.scrollWidth)
      t.ok(scroll <= width + 1, `${name}: the page is ${scroll} px wide at ${width}`)
      const badges = await page.evaluate(() =>
        [...document.querySelectorAll('main .sev-MEDIUM')].map((el) => {
          const range = document.createRange()
          range.selectNodeContents(el)
          const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)))
          const fontSize = Number.parseFloat(getComputedStyle(el).fontSize)
          return { lines: tops.size, height: el.getBoundingClientRect().height, fontSize }
        }),
      )
      t.ok(badges.length > 0, `${name}: MEDIUM badges shown`)
      for (const b of badges) {
        t.equal(b.lines, 1, `${name}: a MEDIUM badge is one line`)
        t.ok(b.height < b.fontSize * 2, `${name}: its box is one line high (${b.height} px)`)
      }
      const broken = await page.evaluate(() =>
        [...document.querySelectorAll('main th, main td, main h1, main .sev')]
          .filter((el) => {
            // A text without a space or hyphen (where a line may break) is one word: it must be on one line.
            const text = el.textContent ?? ''
            if (el.children.length > 0 || !text || /[\s-]/.test(text.trim()) || text.length > 40) return false
            const range = document.createRange()
            range.selectNodeContents(el)
            return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1
          })
          .map((el) => el.textContent),
      )
      t.same(broken, [], `${name}: no word is broken across lines`)
      const unlabelled = await page.evaluate(() =>
        [...document.querySelectorAll('main input, main select, main textarea, main button')]
          .filter((el) => {
            const c = el as HTMLInputElement
            if (c.labels?.length || c.getAttribute('aria-label')) return false
            return !(el.tagName === 'BUTTON' && el.textContent?.trim())
          })
          .map((el) => el.outerHTML.slice(0, 120)),
      )
      t.same(unlabelled, [], `${name}: every control has a name`)
      if (name === 'alert') await page.getByRole('button', { name: 'JSON of event 1' }).click()
      t.same(await seriousViolations(page), [], `${name}: axe finds no serious or critical violation`)
      await shot(page, `${name}-${width}`)
    }
  })
}

t.test('a token with View Alerts only: the writes are disabled with the reason, nothing is sent', async (t) => {
  const viewer = await s.makeToken('viewer', ['View Alerts'])
  const p = await newPage(browser, problems)
  const writes: string[] = []
  p.on('request', (r) => {
    if (r.method() !== 'GET') writes.push(`${r.method()} ${r.url()}`)
  })
  await show(p, `${s.url}/`)
  await p.getByLabel('API token').fill(viewer)
  await p.getByRole('button', { name: 'Sign in' }).click()
  await p.locator('main h1').waitFor()
  await show(p, `${s.url}/#/alerts/${encodeURIComponent(ids[0]!)}`)
  await p.getByLabel('Assignee').waitFor()
  for (const name of ['Set assignee', 'Add comment', 'Change status'])
    t.ok(await p.getByRole('button', { name }).isDisabled(), `${name} is disabled`)
  t.match(await p.locator('main').textContent(), /lacks the Manage Alerts permission/)
  t.ok(await p.locator('table.events').isVisible(), 'the events table without View Rules (default columns)')
  await show(p, `${s.url}/#/alerts`)
  await p.getByLabel('Select all on this page').check()
  t.ok(await p.getByRole('button', { name: 'Set status' }).isDisabled(), 'Set status is disabled')
  t.same(writes, [], 'no write request was sent')
  await p.close()
})

t.test('no script error, console error or CSP violation', async (t) => {
  t.same(problems, [])
})
