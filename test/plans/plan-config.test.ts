// The `plans:` config section: defaults, every problem named by its key path, credentials refused in
// the forge's URL (the token is RULEKEEPER_FORGE_TOKEN).
import t from 'tap'
import { checkPlanConfig, DEFAULT_PLAN_SETTINGS, planSettings } from '../../src/plans/config.js'

t.test('defaults, and checks settings read', async (t) => {
  t.same(planSettings({}), DEFAULT_PLAN_SETTINGS)
  t.same(checkPlanConfig({}), [])
  const checks = { forge: 'gitlab', apiUrl: 'https://gl.example/api/v4', repository: '42' }
  t.same(checkPlanConfig({ plans: { backtestDays: 2, checks } }), [])
  t.same(planSettings({ plans: { backtestDays: 2, checks } }), {
    backtestDays: 2,
    maxBacktestDays: 7,
    checks: { ...checks, linkUrl: null, forks: false },
  })
})

t.test('every problem by its path', async (t) => {
  const paths = (plans: unknown) => checkPlanConfig({ plans }).map((p) => `${p.path.join('.')}: ${p.message}`)
  t.match(paths('x'), [/^plans: must be a map/])
  t.match(paths({ backtestDays: -1 }), [/^plans\.backtestDays: /])
  t.match(paths({ backtestDays: 9 }), [/^plans\.backtestDays: must not exceed maxBacktestDays/])
  t.match(paths({ maxBacktestDays: 400 }), [/^plans\.maxBacktestDays: /])
  t.match(paths({ nope: 1 }), [/^plans\.nope: /])
  t.match(
    paths({ checks: { forge: 'bitbucket', apiUrl: 'ftp://x', repository: '', linkUrl: 'x', token: 'secret' } }).sort(),
    [
      /^plans\.checks\.apiUrl: /,
      /^plans\.checks\.forge: must be one of github, gitea, gitlab/,
      /^plans\.checks\.linkUrl: /,
      /^plans\.checks\.repository: /,
      /^plans\.checks\.token: /,
    ],
  )
  t.match(paths({ checks: { forge: 'github', apiUrl: 'https://user:pw@api.example', repository: 'o/r' } }), [
    /^plans\.checks\.apiUrl: must not hold credentials/,
  ])
  t.match(paths({ checks: { forge: 'github', apiUrl: 'https://api.github.com', repository: 'just-a-name' } }), [
    /^plans\.checks\.repository: must be owner\/name/,
  ])
})
