// quality.md's console target, measured in chromium: at 20k rules (pushed with plain git), a first
// load of `/#/rules` (a new browser context, nothing cached, the token already in the tab) shows the
// first rows of the list within 1.5 s of the navigation's start. Up to three first loads are
// measured, each in a new context; the first within 1.5 s ends it, and it fails only if none is.
// Real port: a real client (a browser).
import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { startTestServer, tempDir, type TestServer } from '../helpers/rulekeeper.js'
import { gitAs, PAT } from '../helpers/git-as.js'
import { firstLoadWithin, hasChromium, launch } from './browser.js'

if (!hasChromium) {
  t.plan(0, 'no chromium at /usr/bin/chromium (.ci/run installs it)')
  process.exit(0)
}

const RULES = 20_000
const LIMIT_MS = 1500
/** First loads measured at most (a busy shared machine slows one now and then). */
const LOADS = 3

t.test(`rules list visible ≤ ${LIMIT_MS} ms at ${RULES} rules`, async (t) => {
  const s: TestServer = await startTestServer()
  t.teardown(() => s.close())
  const dir = tempDir('rk-console-speed-')
  execFileSync('git', ['clone', '-q', s.gitdir, dir])
  const built = Date.now()
  for (let g = 0; g < RULES / 1000; g++) {
    const folder = path.join(dir, 'simple_rules', `g${String(g).padStart(2, '0')}`)
    fs.mkdirSync(folder, { recursive: true })
    for (let i = 0; i < 1000; i++) {
      const id = `Speed.G${String(g).padStart(2, '0')}.R${String(i).padStart(4, '0')}`
      fs.writeFileSync(
        path.join(folder, `${id}.yml`),
        `AnalysisType: rule\nRuleID: ${id}\nDisplayName: Speed rule ${g}-${i}\nEnabled: true\nLogTypes:\n  - AWS.CloudTrail\nSeverity: Low\nDetection:\n  - KeyPath: eventName\n    Condition: Equals\n    Value: E${i}\n`,
      )
    }
  }
  gitAs(PAT, dir, 'add', '-A')
  gitAs(PAT, dir, 'commit', '-q', '-m', `${RULES} rules`)
  gitAs(PAT, dir, 'push', '-q', 'origin', 'HEAD:main')
  const st = await s.request('POST', '/reconcile')
  t.equal(st.status, 200)
  t.ok(st.body.files.valid >= RULES, `${st.body.files.valid} valid files`)
  t.comment(`repository of ${RULES} rules built, pushed and reconciled in ${Date.now() - built} ms`)

  const browser = await launch()
  t.teardown(() => browser.close())
  await firstLoadWithin(t, browser, {
    url: `${s.url}/#/rules`,
    token: s.token,
    visible: 'main table.list tbody tr',
    limitMs: LIMIT_MS,
    loads: LOADS,
    check: async (page) => t.equal(await page.locator('main table.list tbody tr').count(), 50, 'one page of rows'),
  })
})
