// Policies in the console, in a real browser (Playwright driving Debian's chromium) against a real
// server: listed with the kind filter, read (its YAML, its resource types, its policy() body), its
// tests run (passing, then failing with the reason), edited and saved with a reason, and a new one
// created from the Policy template.
// Real port: a real client (a browser).
import t from 'tap'
import type { Browser, Page } from 'playwright-core'
import { SAMPLE_BODIES, startTestServer, type TestServer } from '../helpers/rulekeeper.js'
import { hasChromium, launch, newPage, seriousViolations, show, signIn } from './browser.js'

if (!hasChromium) {
  t.plan(0, 'no chromium at /usr/bin/chromium (.ci/run installs it)')
  process.exit(0)
}

let s: TestServer
let browser: Browser
let page: Page
const problems: string[] = []

t.before(async () => {
  s = await startTestServer()
  const r = await s.request('POST', '/policies', SAMPLE_BODIES.policy('AWS.S3.Versioned'), {
    'X-Change-Reason': 'seed of the console policy test',
  })
  if (r.status !== 200) throw new Error(`seed: ${r.status} ${r.text}`)
  browser = await launch()
  page = await newPage(browser, problems)
  page.on('dialog', (d) => void d.accept())
  await signIn(page, s.url, s.token)
})
t.teardown(async () => {
  await browser?.close()
  await s?.close()
})

const main = () => page.locator('main')

t.test('list: policies are listed, and the kind filter selects them', async (t) => {
  await show(page, `${s.url}/#/rules`)
  await page.getByLabel('Kind').selectOption('policies')
  await page.waitForFunction(() => {
    const cells = [...document.querySelectorAll('main table.list tbody tr td:nth-child(3)')]
    return cells.length === 1 && cells[0]!.textContent === 'Policy'
  })
  t.equal(await main().locator('table.list tbody tr td').first().textContent(), 'AWS.S3.Versioned')
})

t.test('read: the policy’s page shows its YAML, resource types and policy() body', async (t) => {
  await page.getByRole('link', { name: 'AWS.S3.Versioned' }).click()
  await page.getByRole('heading', { name: 'AWS.S3.Versioned', level: 1 }).waitFor()
  t.match(page.url(), /#\/rules\/policies\/AWS\.S3\.Versioned$/)
  t.match(await page.getByLabel('Rule (YAML)').inputValue(), /resourceTypes:\n {2}- AWS\.S3\.Bucket/)
  t.match(await page.getByLabel('Rule (YAML)').inputValue(), /resource:\n {6}Name: logs/)
  t.match(await page.getByLabel('Python body').inputValue(), /^def policy\(resource\):/)
  t.match(await main().locator('dl.facts').textContent(), /Resource typesAWS\.S3\.Bucket/)
  t.same(await seriousViolations(page), [], 'axe: policy page')
})

t.test('run tests: passing, then a failing test with its reason; then save with a reason', async (t) => {
  await page.getByRole('button', { name: 'Run tests' }).click()
  await page.getByText('All 2 tests passed').waitFor()
  const yaml = page.getByLabel('Rule (YAML)')
  const original = await yaml.inputValue()
  await yaml.fill(original.replace('expectedResult: false', 'expectedResult: true'))
  await page.getByRole('button', { name: 'Run tests' }).click()
  await page.getByText('1 of 2 tests failed').waitFor()
  t.match(
    await main().locator('.tests li.fail').textContent(),
    /failed not versioned.*expected true, the rule returned false/,
  )

  await yaml.fill(original.replace('severity: MEDIUM', 'severity: HIGH'))
  await page.getByLabel('Change reason').fill('SEC-7 versioning matters more')
  await page.getByRole('button', { name: 'Save' }).click()
  await page.getByText(/^Saved at/).waitFor()
  t.equal((await s.request('GET', '/policies/AWS.S3.Versioned')).body.severity, 'HIGH')
  t.match(s.git('log', '-1', '--format=%B', 'main'), /SEC-7 versioning matters more/)
  t.match(s.git('show', 'main:policies/aws/AWS.S3.Versioned.yml'), /^Severity: High$/m)
})

t.test('a new policy from the Policy template', async (t) => {
  await show(page, `${s.url}/#/new`)
  await page.getByLabel('Kind').selectOption('policies')
  await page.waitForFunction(() =>
    /Custom\.NewPolicy/.test((document.querySelector('main textarea') as HTMLTextAreaElement)?.value ?? ''),
  )
  const yaml = page.getByLabel('Rule (YAML)')
  await yaml.fill((await yaml.inputValue()).replace('Custom.NewPolicy', 'Console.Policy'))
  await page.getByRole('button', { name: 'Run tests' }).click()
  await page.getByText('All 2 tests passed').waitFor()
  await page.getByLabel('Change reason').fill('A policy made in the console')
  await page.getByRole('button', { name: 'Create' }).click()
  await page.getByRole('heading', { name: 'Console.Policy', level: 1 }).waitFor()
  t.equal((await s.request('GET', '/policies/Console.Policy')).status, 200)
  t.match(s.git('show', 'main:policies/console/Console.Policy.py'), /^def policy\(resource\):/)
  t.same(problems, [], 'no script error or CSP violation')
})
