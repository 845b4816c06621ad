// The console's kinds and log types come from the server, in a real browser (Playwright driving
// Debian's chromium) against a real server: with `GET /kinds` answered with a kind's label renamed
// and `GET /log-types` with one more log type (page.route changes the server's real answers), the
// rules list's kind filter and Kind column, the new-rule kind picker and its log-type picker show
// them, and the template's log types follow the log type picked; the server's own answers show the
// server's own names.
// Real port: a real client (a browser).
import t from 'tap'
import type { Browser, Page, Route } from 'playwright-core'
import { SAMPLE_BODIES, startTestServer, type TestServer } from '../helpers/rulekeeper.js'
import { hasChromium, launch, newPage, seriousViolations, show, signIn } from './browser.js'

if (!hasChromium) {
  t.plan(0, 'no chromium at /usr/bin/chromium (.ci/run installs it)')
  process.exit(0)
}

let s: TestServer
let browser: Browser
const problems: string[] = []

t.before(async () => {
  s = await startTestServer()
  const r = await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('Catalog.Simple.One'))
  if (r.status !== 200) throw new Error(`seed: ${r.status} ${r.text}`)
  browser = await launch()
})
t.teardown(async () => {
  await browser?.close()
  await s?.close()
})

/** The server's real answer to the request, changed by `edit`. */
const rewrite = (edit: (body: any) => void) => async (route: Route) => {
  const res = await route.fetch()
  const body = await res.json()
  edit(body)
  await route.fulfill({ response: res, json: body })
}

async function signedInPage(rewriting: boolean): Promise<Page> {
  const page = await newPage(browser, problems)
  if (rewriting) {
    await page.route(
      /\/kinds$/,
      rewrite((b) => (b.kinds.find((k: any) => k.name === 'simple').label = 'Plain YAML')),
    )
    await page.route(
      /\/log-types$/,
      rewrite((b) =>
        b.logTypes.push({ name: 'Catalog.Extra', table: 'panther_logs.public.catalog_extra', fields: [] }),
      ),
    )
  }
  await signIn(page, s.url, s.token)
  return page
}

t.test('a label renamed and a log type added by the server show in the console', async (t) => {
  const page = await signedInPage(true)
  t.teardown(() => page.context().close())
  const main = page.locator('main')
  await main.locator('table.list tbody tr').first().waitFor()
  const kindOptions = await page.getByLabel('Kind').locator('option').allTextContents()
  t.ok(kindOptions.includes('Plain YAML'), 'the kind filter offers the server’s label')
  t.notOk(kindOptions.includes('Simple'), 'and not the old one')
  const row = main.locator('table.list tbody tr', { hasText: 'Catalog.Simple.One' })
  t.equal(await row.locator('td:nth-child(3)').textContent(), 'Plain YAML', 'the Kind column too')
  const offered = await page
    .locator('#log-type-list option')
    .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))
  t.ok(offered.includes('Catalog.Extra') && offered.includes('Editor.Audit'), 'the log-type filter offers the server’s')

  await show(page, `${s.url}/#/new?kind=simple-rules`)
  const yaml = page.getByLabel('Rule (YAML)')
  await yaml.waitFor()
  t.equal(await page.getByLabel('Kind').locator('option:checked').textContent(), 'Plain YAML', 'the kind picker too')
  const logType = page.getByLabel('Log type')
  t.same(await logType.locator('option').allTextContents(), ['Editor.Audit', 'Catalog.Extra'], 'the log types offered')
  t.match(await yaml.inputValue(), /logTypes:\n\s+- Editor\.Audit\n/, 'the template names the first')
  await logType.selectOption('Catalog.Extra')
  await page.waitForFunction(() =>
    /- Catalog\.Extra/.test((document.querySelector('main textarea') as HTMLTextAreaElement | null)?.value ?? ''),
  )
  t.match(page.url(), /log-type=Catalog\.Extra/, 'the pick is in the address')
  t.same(await seriousViolations(page), [], 'axe: the new-rule page with its log-type picker')
  await page.getByRole('button', { name: 'Run tests' }).click()
  await page.getByText('All 2 tests passed').waitFor()
})

t.test('without the rewrite, the server’s own names', async (t) => {
  const page = await signedInPage(false)
  t.teardown(() => page.context().close())
  await page.locator('main table.list tbody tr').first().waitFor()
  const kindOptions = await page.getByLabel('Kind').locator('option').allTextContents()
  t.ok(kindOptions.includes('Simple'), 'the registry’s label')
  t.notOk(kindOptions.includes('Plain YAML'))
  await show(page, `${s.url}/#/new?kind=policies`)
  await page.getByLabel('Rule (YAML)').waitFor()
  t.equal(await page.getByLabel('Log type').count(), 0, 'no log-type picker for a kind without log types')
})

t.test('no script error, console error or CSP violation', async (t) => {
  t.same(problems, [])
})
