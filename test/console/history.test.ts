// A rule's History tab in a real browser against a real server and repository: two saves made in
// the console (one with a change reason beyond Latin-1) are listed with their actor, time, reason
// and revision as git has them; a diff against the parent; the rule at an older revision; a restore
// over a rule changed since the history was shown is the API's 412 (nothing written); a restore with
// a reason is one new commit with the `Restored-From` trailer and that reason, as `git log` shows.
// Real port: a real client (a browser).
import t from 'tap'
import type { Browser, Page } from 'playwright-core'
import { SAMPLE_BODIES, startTestServer, type TestServer } from '../helpers/rulekeeper.js'
import { hasChromium, launch, newPage, seriousViolations, show, signIn } from './browser.js'

if (!hasChromium) {
  t.plan(0, 'no chromium at /usr/bin/chromium (.ci/run installs it)')
  process.exit(0)
}

const ID = 'Console.History.Rule'
const RULE = `/simple-rules/${ID}`
const LOWER = 'Lower: too noisy, SEC-42'
const ZURICH = 'Réglage für Zürich — ✓'
const RESTORE = 'Zurück zur ersten Fassung — ✓ 東京'

let s: TestServer
let browser: Browser
let page: Page
const problems: string[] = []
const head = () => s.git('rev-parse', 'main').trim()
const short = (rev: string) => rev.slice(0, 10)
/** Commits on main, oldest first: [revision, message body]. */
const commits = () =>
  s
    .git('log', '--reverse', '--format=%H%x00%b%x01', 'main')
    .split('\x01')
    .map((c) => c.trim())
    .filter(Boolean)
    .map((c) => c.split('\x00') as [string, string])

t.before(async () => {
  s = await startTestServer()
  const r = await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple(ID), {
    'X-Change-Reason': 'first version',
  })
  if (r.status !== 200) throw new Error(r.text)
  browser = await launch()
  page = await newPage(browser, problems)
  await signIn(page, s.url, s.token)
})
t.teardown(async () => {
  await browser?.close()
  await s?.close()
})

const main = () => page.locator('main')

async function saveInConsole(from: string, to: string, reason: string) {
  await show(page, `${s.url}/#/rules/simple-rules/${ID}`)
  const yaml = page.getByLabel('Rule (YAML)')
  await page.waitForFunction(
    (v) => (document.querySelector('main textarea') as HTMLTextAreaElement)?.value.includes(v),
    `severity: ${from}`,
  )
  await yaml.fill((await yaml.inputValue()).replace(`severity: ${from}`, `severity: ${to}`))
  await page.getByLabel('Change reason').fill(reason)
  await page.getByRole('button', { name: 'Save' }).click()
  await page.getByText(/^Saved at/).waitFor()
}

t.test('two saves in the console; the history lists them as git has them', async (t) => {
  const created = head()
  await saveInConsole('HIGH', 'LOW', LOWER)
  const lowered = head()
  t.not(lowered, created, 'the first save is a commit')
  await saveInConsole('LOW', 'MEDIUM', ZURICH)
  const zurich = head()
  t.equal(s.git('log', '-1', '--format=%b', 'main').split('\n')[0], ZURICH, 'git log: the reason as typed')

  await page.getByRole('link', { name: 'History' }).click()
  const rows = main().locator('table.list tbody tr')
  await rows.first().waitFor()
  t.equal(await rows.count(), 3, 'the creation and two saves')
  const texts = await rows.allTextContents()
  t.match(texts[0], ZURICH, 'newest first: the last save, its reason intact')
  t.match(texts[0], short(zurich))
  t.match(texts[1], LOWER)
  t.match(texts[1], short(lowered))
  t.match(texts[2], 'first version')
  t.match(texts[2], short(created))
  t.match(texts[2], 'created')
  const tokenId = (await s.request('GET', RULE)).body.lastModifiedBy.id
  for (const row of texts) t.match(row, `${tokenId} (api-token)`, 'the actor: the token')
  t.match(texts[0], /\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ/, 'the time')
  t.same(await seriousViolations(page), [], 'axe: history')
})

t.test('a diff against the parent; the rule at an older revision', async (t) => {
  const rows = main().locator('table.list tbody tr')
  const [created, lowered] = commits()
    .slice(-3)
    .map(([rev]) => rev)
  await rows.nth(1).getByRole('button', { name: /^Diff/ }).click()
  await page.getByRole('heading', { name: `Diff of ${short(lowered!)} against ${short(created!)}` }).waitFor()
  t.same(await main().locator('.t-diff-del').allTextContents(), ['-Severity: High'])
  t.same(await main().locator('.t-diff-add').allTextContents(), ['+Severity: Low'])
  t.same(await seriousViolations(page), [], 'axe: diff')

  await rows.nth(2).getByRole('button', { name: /^View/ }).click()
  await page.getByRole('heading', { name: `The rule at ${short(created!)}` }).waitFor()
  t.match(await main().locator('pre.code-view').first().textContent(), /severity: HIGH/)
})

t.test('a restore over a rule changed since the history was shown: 412, nothing written', async (t) => {
  await page.reload()
  const rows = main().locator('table.list tbody tr')
  await rows.first().waitFor()
  // Someone else changes the rule after the history was shown.
  const current = await s.request('GET', RULE)
  const theirs = await s.request('PUT', RULE, { ...current.body, description: 'changed elsewhere' })
  t.equal(theirs.status, 200, theirs.text)
  const before = head()
  await rows
    .nth(2)
    .getByRole('button', { name: /^Restore/ })
    .click()
  await page.getByLabel('Change reason').fill(RESTORE)
  await page.getByRole('button', { name: 'Restore', exact: true }).click()
  await page.getByText(/^Not restored: the rule was changed by someone else/).waitFor()
  t.match(await main().textContent(), /HTTP 412/)
  t.equal(head(), before, 'nothing written')
  t.equal((await s.request('GET', RULE)).body.description, 'changed elsewhere')
  t.same(await seriousViolations(page), [], 'axe: the restore conflict')
})

t.test('a restore with a reason: one new commit with Restored-From and the reason', async (t) => {
  await page.reload()
  const rows = main().locator('table.list tbody tr')
  await rows.first().waitFor()
  t.equal(await rows.count(), 4, 'the change made elsewhere is listed now')
  const all = commits()
  const created = all.find(([, body]) => body.startsWith('first version'))![0]
  const before = head()
  const createdRow = rows.filter({ hasText: 'first version' })
  await createdRow.getByRole('button', { name: /^Restore/ }).click()
  await page.getByLabel('Change reason').fill(RESTORE)
  await page.getByRole('button', { name: 'Restore', exact: true }).click()
  await page.getByText(`Restored to ${short(created)}.`).waitFor()
  t.equal(s.git('rev-parse', 'main^').trim(), before, 'one new commit on the previous head')
  const message = s.git('log', '-1', '--format=%B', 'main')
  t.equal(message.split('\n\n')[1]?.split('\n')[0], RESTORE, 'the reason as typed')
  t.match(message, new RegExp(`^Restored-From: ${created}$`, 'm'), 'the Restored-From trailer')
  const rule = (await s.request('GET', RULE)).body
  t.equal(rule.severity, 'HIGH', 'the first version’s severity')
  t.equal(rule.description, '', 'the first version’s description')
  t.equal(
    s.git('rev-parse', `main:simple_rules/console/${ID}.yml`).trim(),
    s.git('rev-parse', `${created}:simple_rules/console/${ID}.yml`).trim(),
    'the file is byte-identical to the restored revision',
  )
  // The history shows the restore at the top once reloaded.
  await page.reload()
  await rows.first().waitFor()
  t.match(await rows.first().textContent(), RESTORE)
})

t.test('no script error, console error or CSP violation', async (t) => {
  t.same(problems, [])
})
