// The plan page (`#/plans/<id>`, the page a pull request's commit status links to) in a real browser
// (Debian's chromium) against a real server: a plan made through POST /plans of a branch that changes
// a rule, adds one whose test fails, adds a broken file and removes a correlation member, over real
// stored events. The page shows the status and summary, the files (the invalid one with its line and
// message), the rules, the failing test, the broken reference and the backtest counts per rule with
// its samples; an unknown id says so; `#/plans` finds a plan by id; axe-core; 390 px.
// Real port: a real client (a browser).
import { spawnSync } from 'node:child_process'
import t from 'tap'
import type { Browser, Page } from 'playwright-core'
import { commandRecord, commandRule, DETECT_ENV } from '../detect/helpers.js'
import { ndjson, post, TOKEN } from '../ingest/helpers.js'
import { startTestServer, type TestServer } from '../helpers/rulekeeper.js'
import { failingRule } from '../plans/fixtures.js'
import { hasChromium, launch, newPage, seriousViolations, show, signIn } from './browser.js'

if (!hasChromium) {
  t.plan(0, 'no chromium at /usr/bin/chromium (.ci/run installs it)')
  process.exit(0)
}

let s: TestServer
let browser: Browser
let page: Page
const problems: string[] = []
const git = (...args: string[]) =>
  spawnSync('git', ['--git-dir', s.gitdir, ...args], { encoding: 'utf8' }).stdout as string

/** One commit on `branch` (from main's tip) writing `files` (path → text, null: delete). */
function branchCommit(branch: string, files: Record<string, string | null>): void {
  const from = git('rev-parse', 'main').trim()
  const input = [
    `commit refs/heads/${branch}\ncommitter Pat <pat@example.com> 1700000000 +0000\ndata 6\nchange\nfrom ${from}\n`,
    ...Object.entries(files).map(([p, text]) =>
      text === null ? `D ${p}\n` : `M 100644 inline ${p}\ndata ${Buffer.byteLength(text)}\n${text}\n`,
    ),
  ].join('')
  const r = spawnSync('git', ['--git-dir', s.gitdir, 'fast-import', '--quiet'], { input })
  if (r.status !== 0) throw new Error(`fast-import: ${r.stderr}`)
}

t.before(async () => {
  s = await startTestServer({ env: DETECT_ENV })
  await commandRule(s, 'Plan.Cmd', 'deploy')
  const at = (i: number) => new Date(Date.now() - 3_600_000 + i * 1000).toISOString()
  const res = await post(
    `${s.url}/http/editor-audit`,
    ndjson([
      ...Array.from({ length: 5 }, (_, i) => commandRecord('pc', 'deploy', at(i), { user_email: `u${i}@example.com` })),
      ...Array.from({ length: 3 }, (_, i) => commandRecord('pc', 'build', at(10 + i))),
    ]),
    { authorization: `Bearer ${TOKEN}` },
  )
  if (res.status !== 200) throw new Error(JSON.stringify(res.body))
  await s.server.detection.detector.idle()
  const path = 'simple_rules/plan/Plan.Cmd.yml'
  branchCommit('pr-1', {
    [path]: git('show', `main:${path}`).replace('Value: deploy', 'Value: build'),
    'simple_rules/plan/Plan.Failing.yml': failingRule('Plan.Failing'),
    'simple_rules/plan/Broken.yml': 'AnalysisType: rule\nRuleID: Plan.Broken\nSeverity: [oops\n',
    'simple_rules/editor/Editor.Audit.LoginFailed.yml': null,
  })
  browser = await launch()
  page = await newPage(browser, problems)
  await signIn(page, s.url, s.token)
})
t.teardown(async () => {
  await browser?.close()
  await s?.close()
})

const main = () => page.locator('main')

t.test('a plan made through POST /plans, on its page', async (t) => {
  const made = await s.request('POST', '/plans', { base: 'main', head: 'pr-1' })
  t.equal(made.status, 201, made.text.slice(0, 300))
  const plan = made.body
  await show(page, `${s.url}/#/plans/${plan.id}`)
  await page.getByRole('heading', { name: `Plan ${plan.id}`, level: 1 }).waitFor()
  t.equal(await main().locator('.plan-status').textContent(), 'FAIL')
  await main().getByText(plan.summary).waitFor()
  t.match(await main().textContent(), `${plan.base.slice(0, 12)} → ${plan.head.slice(0, 12)}`)

  // Files: added, changed, removed, and the invalid one with its line and message.
  const files = await main().locator('.plan-files').allTextContents()
  t.match(files[0], /Added \(2\).*simple_rules\/plan\/Broken\.yml.*simple_rules\/plan\/Plan\.Failing\.yml/)
  t.match(files[1], /Changed \(1\).*simple_rules\/plan\/Plan\.Cmd\.yml/)
  t.match(files[2], /Removed \(1\).*Editor\.Audit\.LoginFailed\.yml/)
  const invalid = main().locator('table.plan-invalid tbody tr')
  t.equal(await invalid.count(), 1)
  t.equal(await invalid.locator('td').nth(0).textContent(), 'simple_rules/plan/Broken.yml')
  t.match(await invalid.locator('td').nth(2).textContent(), /^4(:\d+)?$/, 'the line')
  t.match(await invalid.locator('td').nth(3).textContent(), /Flow sequence/, 'the message')

  // Rules: a changed one links to its page; the correlation rule affected, with why.
  const rules = await main().locator('.plan-rules').allTextContents()
  t.match(rules[0], /Added \(1\).*Plan\.Failing/)
  t.equal(
    await main()
      .locator('.plan-rules')
      .nth(1)
      .getByRole('link', { name: /Plan\.Cmd/ })
      .getAttribute('href'),
    '#/rules/simple-rules/Plan.Cmd',
  )
  t.match(rules[3], /Affected \(1\).*Editor\.Audit\.BruteForceThenSuccess.*Editor\.Audit\.LoginFailed/)

  // Tests run and the failure with its test's name.
  const failing = main().locator('ul.plan-tests > li').filter({ hasText: 'Plan.Failing' })
  t.match(await failing.textContent(), /Plan\.Failing failed.*expects a match it will not get: failed/)
  t.match(await main().textContent(), /\d+ rules tested: \d+ passed, 1 failed/)

  // The broken reference.
  t.match(
    await main().locator('ul.plan-refs').textContent(),
    /Editor\.Audit\.BruteForceThenSuccess: .*Editor\.Audit\.LoginFailed/,
  )

  // The backtest: counts per rule at each revision, and samples.
  const cmd = main().locator('table.plan-backtest tbody tr').filter({ hasText: 'Plan.Cmd' })
  const bt = plan.backtest.rules.find((r: { ruleId: string }) => r.ruleId === 'Plan.Cmd')
  t.same([bt.base.matches, bt.head.matches], [5, 3], 'the API’s counts')
  t.match(await cmd.locator('td').nth(1).textContent(), /^5 matches, \d+ alerts?, 0 errors$/)
  t.match(await cmd.locator('td').nth(2).textContent(), /^3 matches, \d+ alerts?, 0 errors$/)
  await cmd.getByText('Samples of Plan.Cmd').click()
  const samples = cmd.locator('ul.plan-samples li')
  await samples.first().waitFor()
  t.equal(await samples.count(), bt.samples.base.length + bt.samples.head.length, 'every sample')
  t.match(await samples.first().textContent(), /HIGH/)
  t.same(await seriousViolations(page), [], 'axe: the plan page')

  await page.setViewportSize({ width: 390, height: 800 })
  t.teardown(() => page.setViewportSize({ width: 1280, height: 800 }))
  const [scroll, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth])
  t.ok(scroll <= inner + 1, `390 px: ${scroll} ≤ ${inner} px wide`)
  t.same(await seriousViolations(page), [], 'axe at 390 px')
})

t.test('an unknown plan says so; #/plans finds one by id', async (t) => {
  await show(page, `${s.url}/#/plans/plan_0000`)
  await main().getByText('No plan has this id.').waitFor()
  const plan = (await s.request('POST', '/plans', { base: 'main', head: 'pr-1', backtestDays: 0 })).body
  await show(page, `${s.url}/#/plans`)
  await page.getByLabel('Plan id').fill(plan.id)
  await page.getByRole('button', { name: 'Show plan' }).click()
  await page.getByRole('heading', { name: `Plan ${plan.id}`, level: 1 }).waitFor()
  t.match(page.url(), `#/plans/${plan.id}`)
  await main()
    .getByText(/Not run: /)
    .waitFor()
})

t.test('no script error, console error or CSP violation', async (t) => {
  t.same(problems, [])
})
