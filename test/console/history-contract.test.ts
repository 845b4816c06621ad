// The console's history, diff, restore and If-Match paths against the API's spec'd shape (api.md
// "History, restore and optimistic concurrency"), answered by Playwright's request interception in
// front of a real server: what the console sends (If-Match with the ETag it was given, the change
// reason, the revision) and how it shows what it gets back (a 412, the commits, a diff, a version).
// console.test.ts runs the same paths against the real API once the server has it.
import t from 'tap'
import path from 'node:path'
import type { Browser, Page, Route } from 'playwright-core'
import { SAMPLE_BODIES, startTestServer, tempDir, type TestServer } from '../helpers/rulekeeper.js'
import { hasChromium, launch, newPage, seriousViolations, signIn } from './browser.js'

if (!hasChromium) {
  t.plan(0, 'no chromium at /usr/bin/chromium (.ci/run installs it)')
  process.exit(0)
}

const SHOTS = process.env.RULEKEEPER_SCREENSHOTS === '1' ? path.resolve('docs/images') : tempDir('rk-console-shots-')
const ID = 'Stub.History.Rule'
const REV1 = 'a'.repeat(40)
const REV2 = 'b'.repeat(40)
const HISTORY = {
  results: [
    {
      revision: REV2,
      parent: REV1,
      time: '2026-11-22T10:00:00.000Z',
      actor: { id: 'tok_reviewer', type: 'api-token' },
      authorName: 'ci',
      reason: 'Raise the severity after incident 42',
      change: 'updated',
      paths: [`simple_rules/stub/${ID}.yml`],
    },
    {
      revision: REV1,
      parent: null,
      time: '2026-11-21T09:00:00.000Z',
      actor: { id: 'pat@example.com', type: 'user' },
      authorName: 'Pat',
      reason: 'First version',
      change: 'created',
      paths: [`simple_rules/stub/${ID}.yml`],
    },
  ],
  next: null,
}
const DIFF = {
  from: REV1,
  to: REV2,
  files: [
    {
      path: `simple_rules/stub/${ID}.yml`,
      unifiedDiff: `--- a/simple_rules/stub/${ID}.yml\n+++ b/simple_rules/stub/${ID}.yml\n@@ -3,3 +3,3 @@\n Enabled: true\n-Severity: Medium\n+Severity: High\n LogTypes:\n`,
    },
  ],
}

let s: TestServer
let browser: Browser
let page: Page
const problems: string[] = []
const seen: Array<{ method: string; path: string; query: string; headers: Record<string, string> }> = []

t.before(async () => {
  s = await startTestServer()
  const r = await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple(ID))
  if (r.status !== 200) throw new Error(r.text)
  browser = await launch()
  page = await newPage(browser, problems)
  await signIn(page, s.url, s.token)
  // The spec'd answers for the rule's history routes, and an ETag/If-Match writer in front of the real one.
  await page.route(`**/simple-rules/${ID}**`, async (route: Route) => {
    const req = route.request()
    const url = new URL(req.url())
    const rest = url.pathname.slice(`/simple-rules/${ID}`.length)
    seen.push({ method: req.method(), path: url.pathname, query: url.search, headers: req.headers() })
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
      route.fulfill({ status, contentType: 'application/json', headers, body: JSON.stringify(body) })
    if (rest === '/history') return json(200, HISTORY)
    if (rest === `/history/${REV1}`)
      return json(200, { ...SAMPLE_BODIES.simple(ID, { severity: 'MEDIUM' }), revision: REV1 })
    if (rest === '/diff') return json(200, DIFF)
    if (rest === '/restore') {
      // The real server's ETag of the version shown, as the real writer would judge it.
      const current = (await s.request('GET', `/simple-rules/${ID}`)).headers.get('etag')
      if (req.headers()['if-match'] !== current) return json(412, { message: 'the rule changed since that ETag' })
      const rule = (await s.request('GET', `/simple-rules/${ID}`)).body
      return json(200, { ...rule, severity: 'MEDIUM' }, { ETag: '"restored"' })
    }
    // The rule itself: the real server (its ETag, its If-Match check in the writer).
    return route.continue()
  })
})
t.teardown(async () => {
  await browser?.close()
  await s?.close()
})

t.test('Save sends If-Match with the ETag the GET gave; a stale one is a 412, shown, edits kept', async (t) => {
  await page.goto(`${s.url}/#/rules/simple-rules/${ID}`)
  const yaml = page.getByLabel('Rule (YAML)')
  await yaml.waitFor()
  await yaml.fill((await yaml.inputValue()).replace('severity: HIGH', 'severity: LOW'))
  await page.getByLabel('Change reason').fill('lower it')
  const shown = (await s.request('GET', `/simple-rules/${ID}`)).headers.get('etag')
  // Someone else saves meanwhile, through the API.
  const other = await s.request('GET', `/simple-rules/${ID}`)
  const theirs = await s.request('PUT', `/simple-rules/${ID}`, {
    ...other.body,
    description: 'changed by someone else',
  })
  if (theirs.status !== 200) throw new Error(theirs.text)
  await page.getByRole('button', { name: 'Save' }).click()
  await page.getByText('Not saved: this rule was changed by someone else since you opened it.').waitFor()
  const put = seen.filter((r) => r.method === 'PUT').at(-1)!
  t.equal(put.headers['if-match'], shown, 'If-Match: the ETag of the version shown')
  t.equal(put.headers['x-change-reason'], 'lower it')
  t.match(await yaml.inputValue(), /severity: LOW/, 'the edits stay')
  t.equal((await s.request('GET', `/simple-rules/${ID}`)).body.severity, 'HIGH', 'nothing written')
  t.same(await seriousViolations(page), [], 'axe: the conflict message')
  await page.screenshot({ path: path.join(SHOTS, 'console-conflict.png') })
  // Opened again: the current ETag, and the save goes through.
  await page.reload()
  await yaml.waitFor()
  await yaml.fill((await yaml.inputValue()).replace('severity: HIGH', 'severity: LOW'))
  await page.getByLabel('Change reason').fill('lower it, on the current version')
  await page.getByRole('button', { name: 'Save' }).click()
  await page.getByText(/^Saved at/).waitFor()
  t.equal(seen.filter((r) => r.method === 'PUT').at(-1)!.headers['if-match'], theirs.headers.get('etag'))
  t.equal((await s.request('GET', `/simple-rules/${ID}`)).body.severity, 'LOW', 'saved on the current version')
})

t.test('History: the commits with actor, time, reason; a diff; a version; Restore', async (t) => {
  await page.goto(`${s.url}/#/rules/simple-rules/${ID}`)
  await page.getByRole('link', { name: 'History' }).click()
  const rows = page.locator('main table.list tbody tr')
  await rows.first().waitFor()
  t.equal(await rows.count(), 2)
  const first = (await rows.first().textContent()) ?? ''
  t.match(first, /2026-11-22 10:00:00Z/)
  t.match(first, /tok_reviewer \(api-token\)/)
  t.match(first, /Raise the severity after incident 42/)
  t.match(first, /updated/)
  t.same(await seriousViolations(page), [], 'axe: history')
  await page.screenshot({ path: path.join(SHOTS, 'console-history.png') })

  await rows.first().getByRole('button', { name: /^Diff/ }).click()
  await page.locator('main pre.diff').waitFor()
  const diffReq = seen.filter((r) => r.path.endsWith('/diff')).at(-1)!
  t.same(
    Object.fromEntries(new URLSearchParams(diffReq.query)),
    { from: REV1, to: REV2 },
    'the diff against its parent',
  )
  t.equal(await page.locator('main .t-diff-add').textContent(), '+Severity: High')
  t.equal(await page.locator('main .t-diff-del').textContent(), '-Severity: Medium')
  t.same(await seriousViolations(page), [], 'axe: diff')
  await page.screenshot({ path: path.join(SHOTS, 'console-diff.png'), fullPage: true })

  await rows.nth(1).getByRole('button', { name: /^View/ }).click()
  await page.getByRole('heading', { name: `The rule at ${REV1.slice(0, 10)}` }).waitFor()
  t.match(await page.locator('main pre.code-view').first().textContent(), /severity: MEDIUM/)

  await rows
    .nth(1)
    .getByRole('button', { name: /^Restore/ })
    .click()
  await page.getByLabel('Change reason').fill('Back to the first version')
  await page.getByRole('button', { name: 'Restore', exact: true }).click()
  await page.getByText(/^Restored to/).waitFor()
  const restore = seen.filter((r) => r.path.endsWith('/restore')).at(-1)!
  t.equal(restore.method, 'POST')
  t.equal(new URLSearchParams(restore.query).get('revision'), REV1)
  t.equal(restore.headers['x-change-reason'], 'Back to the first version')
  t.equal(
    restore.headers['if-match'],
    (await s.request('GET', `/simple-rules/${ID}`)).headers.get('etag'),
    'If-Match: the ETag of the current version',
  )
})

t.test('no script error, console error or CSP violation', async (t) => {
  t.same(problems, [])
})
