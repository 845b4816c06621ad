// Unsaved edits are not lost by accident, in a real browser against a real server: leaving an edited
// rule within the console asks first (staying keeps the page, the address and the edits; leaving
// goes), closing or reloading the tab gets the browser's beforeunload prompt, the new-rule page's
// kind picker asks before replacing an edited template, and nothing asks once the edits are saved
// or when there were none.
// Real port: a real client (a browser).
import t from 'tap'
import type { Browser, Dialog, Page } from 'playwright-core'
import { SAMPLE_BODIES, startTestServer, type TestServer } from '../helpers/rulekeeper.js'
import { hasChromium, launch, newPage, show, signIn } from './browser.js'

if (!hasChromium) {
  t.plan(0, 'no chromium at /usr/bin/chromium (.ci/run installs it)')
  process.exit(0)
}

const ID = 'Console.Unsaved.Rule'
let s: TestServer
let browser: Browser
const problems: string[] = []

t.before(async () => {
  s = await startTestServer()
  const r = await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple(ID))
  if (r.status !== 200) throw new Error(r.text)
  browser = await launch()
})
t.teardown(async () => {
  await browser?.close()
  await s?.close()
})

/** A signed-in page whose dialogs are answered by `answer` (true: accept) and recorded. */
async function pageAnswering(answer: () => boolean): Promise<{ page: Page; dialogs: Dialog[] }> {
  const page = await newPage(browser, problems)
  const dialogs: Dialog[] = []
  page.on('dialog', (d) => {
    dialogs.push(d)
    void (answer() ? d.accept() : d.dismiss())
  })
  await signIn(page, s.url, s.token)
  return { page, dialogs }
}

async function openAndEdit(page: Page): Promise<void> {
  await show(page, `${s.url}/#/rules/simple-rules/${ID}`)
  const yaml = page.getByLabel('Rule (YAML)')
  await yaml.waitFor()
  await yaml.fill((await yaml.inputValue()).replace('severity: HIGH', 'severity: LOW'))
}

t.test('leaving an edited rule within the console asks; staying keeps the edits', async (t) => {
  let accept = false
  const { page, dialogs } = await pageAnswering(() => accept)
  t.teardown(() => page.close())
  await openAndEdit(page)
  const url = page.url()
  await page.getByRole('link', { name: 'Status', exact: true }).click()
  await page.waitForTimeout(200)
  t.equal(dialogs.length, 1, 'asked once')
  t.equal(dialogs[0]!.type(), 'confirm')
  t.match(dialogs[0]!.message(), /unsaved changes/)
  await page.waitForTimeout(200)
  t.equal(page.url(), url, 'stayed: the address is the rule’s again')
  t.ok(await page.getByRole('heading', { name: ID, level: 1 }).isVisible(), 'the rule’s page is still shown')
  t.match(await page.getByLabel('Rule (YAML)').inputValue(), /severity: LOW/, 'the edits are still there')
  // The browser's Back button asks too.
  await page.goBack()
  await page.waitForTimeout(200)
  t.equal(dialogs.length, 2, 'Back asks')
  t.match(await page.getByLabel('Rule (YAML)').inputValue(), /severity: LOW/)

  accept = true
  await page.getByRole('link', { name: 'Status', exact: true }).click()
  await page.getByRole('heading', { name: 'Status', level: 1 }).waitFor()
  t.equal(dialogs.length, 3, 'asked, and left when confirmed')
  // Sign out asks as well, but only with unsaved edits: the Status page has none.
  await page.getByRole('link', { name: 'Rules', exact: true }).click()
  await page.getByRole('heading', { name: 'Rules', level: 1 }).waitFor()
  t.equal(dialogs.length, 3, 'no question from a page without edits')
})

t.test('Sign out with unsaved edits asks; cancelling keeps the session', async (t) => {
  const { page, dialogs } = await pageAnswering(() => false)
  t.teardown(() => page.close())
  await openAndEdit(page)
  await page.getByRole('button', { name: 'Sign out' }).click()
  await page.waitForTimeout(200)
  t.equal(dialogs.length, 1)
  t.equal(await page.evaluate(() => sessionStorage.getItem('rulekeeper.token')), s.token, 'still signed in')
  t.match(await page.getByLabel('Rule (YAML)').inputValue(), /severity: LOW/)
})

t.test('closing the tab with unsaved edits gets the beforeunload prompt (a reload gets the same)', async (t) => {
  let accept = false
  const { page, dialogs } = await pageAnswering(() => accept)
  await openAndEdit(page)
  await page.close({ runBeforeUnload: true })
  await page.waitForTimeout(300)
  t.equal(dialogs.length, 1)
  t.equal(dialogs[0]!.type(), 'beforeunload')
  t.notOk(page.isClosed(), 'dismissed: the tab stays')
  t.match(await page.getByLabel('Rule (YAML)').inputValue(), /severity: LOW/)
  accept = true
  const closed = page.waitForEvent('close')
  await page.close({ runBeforeUnload: true })
  await closed
  t.equal(dialogs.length, 2)
  t.ok(page.isClosed(), 'confirmed: the tab closes')
})

t.test('after a save nothing asks: not a link, not a reload', async (t) => {
  const { page, dialogs } = await pageAnswering(() => false)
  t.teardown(() => page.close())
  await openAndEdit(page)
  await page.getByLabel('Change reason').fill('lower it')
  await page.getByRole('button', { name: 'Save' }).click()
  await page.getByText(/^Saved at/).waitFor()
  t.equal((await s.request('GET', `/simple-rules/${ID}`)).body.severity, 'LOW')
  await page.reload()
  await page.getByLabel('Rule (YAML)').waitFor()
  await page.getByRole('link', { name: 'Status', exact: true }).click()
  await page.getByRole('heading', { name: 'Status', level: 1 }).waitFor()
  t.equal(dialogs.length, 0)
})

t.test('the new-rule page: another kind’s template replaces an edited one only when confirmed', async (t) => {
  let accept = false
  const { page, dialogs } = await pageAnswering(() => accept)
  t.teardown(() => page.close())
  await show(page, `${s.url}/#/new?kind=simple-rules`)
  const yaml = page.getByLabel('Rule (YAML)')
  await yaml.waitFor()
  // The untouched template is left without a question.
  await page.getByLabel('Kind').selectOption('rules')
  await page.waitForFunction(() =>
    /Custom\.NewPythonRule/.test((document.querySelector('main textarea') as HTMLTextAreaElement | null)?.value ?? ''),
  )
  t.equal(dialogs.length, 0, 'no question for an untouched template')
  await yaml.fill((await yaml.inputValue()).replace('Custom.NewPythonRule', 'Mine.Edited'))
  await page.getByLabel('Kind').selectOption('scheduled-rules')
  await page.waitForTimeout(200)
  t.equal(dialogs.length, 1, 'asked')
  t.equal(await page.getByLabel('Kind').inputValue(), 'rules', 'the picker is back on the kind shown')
  t.match(await yaml.inputValue(), /Mine\.Edited/, 'the edits stay')
  accept = true
  await page.getByLabel('Kind').selectOption('scheduled-rules')
  await page.waitForFunction(() =>
    /Custom\.NewScheduledRule/.test(
      (document.querySelector('main textarea') as HTMLTextAreaElement | null)?.value ?? '',
    ),
  )
  t.equal(dialogs.length, 2, 'confirmed: the scheduled template')
})

t.test('no script error, console error or CSP violation', async (t) => {
  t.same(problems, [])
})
