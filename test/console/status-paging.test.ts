// The console's status page with more invalid files than /status lists (issue 27): it shows the
// count, the first 100 rows and how many of them are shown, and `Show more invalid files` appends
// the next pages from GET /status/invalid-files until the list is whole.
// Real port: a real client (a browser).
import { spawnSync } from 'node:child_process'
import t from 'tap'
import { startTestServer } from '../helpers/rulekeeper.js'
import { hasChromium, launch, newPage, seriousViolations, show, signIn } from './browser.js'

if (!hasChromium) {
  t.plan(0, 'no chromium at /usr/bin/chromium (.ci/run installs it)')
  process.exit(0)
}

t.test('150 invalid files: 100 rows, the count, and the rest on demand', async (t) => {
  t.setTimeout(180_000)
  const s = await startTestServer()
  t.teardown(() => s.close())
  // 150 invalid files in one commit, from one blob (git fast-import).
  const head = s.git('rev-parse', 'main').trim()
  const invalid = 'AnalysisType: rule\nSeverity: Nope\nDetection: []\n'
  const input = [
    `blob\nmark :1\ndata ${invalid.length}\n${invalid}\n`,
    `commit refs/heads/main\ncommitter Pat <pat@example.com> 1700000000 +0000\ndata 5\nbulk\nfrom ${head}\n`,
    ...Array.from({ length: 150 }, (_, i) => `M 100644 :1 simple_rules/bulk/f${String(i).padStart(3, '0')}.yml\n`),
  ].join('')
  const r = spawnSync('git', ['--git-dir', s.gitdir, 'fast-import', '--quiet'], { input })
  t.equal(r.status, 0, String(r.stderr))
  t.equal((await s.request('POST', '/reconcile')).body.invalidFileCount, 150)

  const browser = await launch()
  t.teardown(() => browser.close())
  const problems: string[] = []
  const page = await newPage(browser, problems)
  await signIn(page, s.url, s.token)
  await show(page, `${s.url}/#/status`)
  await page.getByRole('heading', { name: 'Invalid files (150)' }).waitFor()
  const rows = page.locator('main table.list', { hasText: 'simple_rules/bulk/f000.yml' }).locator('tbody tr')
  t.equal(await rows.count(), 100, 'the first 100 rows, as /status lists them')
  t.match(await page.locator('main').textContent(), /Showing the first 100 of 150 invalid files/)
  t.match(await rows.nth(99).textContent(), /simple_rules\/bulk\/f099\.yml/, 'by path')
  t.same(await seriousViolations(page), [], 'axe: status with a cut list')

  await page.getByRole('button', { name: 'Show more invalid files' }).click()
  await page.locator('main tbody tr', { hasText: 'simple_rules/bulk/f149.yml' }).waitFor()
  t.equal(await rows.count(), 150, 'the rest appended')
  t.match(await rows.nth(100).textContent(), /simple_rules\/bulk\/f100\.yml/, 'after the first 100, in order')
  t.equal(await page.getByRole('button', { name: 'Show more invalid files' }).count(), 0, 'the list is whole')
  t.notMatch(await page.locator('main').textContent(), /Showing the first/)
  t.same(problems, [], 'no script error or CSP violation')
})
