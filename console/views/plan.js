// A stored plan (`GET /plans/{id}`, View Rules; docs/plans.md) at `#/plans/<id>`, the page a
// pull request's commit status links to: its status and summary, the files and rules it adds,
// changes and removes, the invalid files with line and message, the tests run and their failures,
// the references it breaks, and the backtest (counts per rule at each revision, with samples when
// the token has View Alerts). `#/plans` asks for a plan id.
import { api } from '../api.js'
import { field, fmtTime, h, message, onSubmit, replace } from '../dom.js'
import { ruleHrefOfKind } from '../kinds.js'

export const planHref = (id) => `#/plans/${encodeURIComponent(id)}`
const short = (rev) => (typeof rev === 'string' && /^[0-9a-f]{40}$/.test(rev) ? rev.slice(0, 12) : rev)
const count = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

export async function planView(main, params) {
  const idInput = h('input', { type: 'text', autocomplete: 'off', value: params.id ?? '' })
  const lookup = h(
    'form',
    {
      class: 'filters',
      role: 'search',
      'aria-label': 'Find a plan',
      onsubmit: onSubmit(() => {
        if (idInput.value.trim()) location.hash = planHref(idInput.value.trim())
      }),
    },
    field('Plan id', idInput),
    h('button', { type: 'submit' }, 'Show plan'),
  )
  if (!params.id) {
    document.title = 'Plans · rulekeeper'
    return replace(main, h('h1', { tabindex: '-1' }, 'Plans'), lookup)
  }
  document.title = `Plan ${params.id} · rulekeeper`
  const head = h('h1', { tabindex: '-1' }, `Plan ${params.id}`)
  const r = await api('GET', `/plans/${encodeURIComponent(params.id)}`)
  if (!r.ok)
    return replace(
      main,
      head,
      message('error', r.status === 404 ? 'No plan has this id.' : `${r.body?.message} (HTTP ${r.status})`),
      lookup,
    )
  const plan = r.body
  replace(
    main,
    head,
    h(
      'dl',
      { class: 'facts' },
      h('dt', null, 'Status'),
      h('dd', null, h('span', { class: `plan-status plan-${plan.status}` }, plan.status === 'pass' ? 'PASS' : 'FAIL')),
      h('dt', null, 'Summary'),
      h('dd', null, plan.summary),
      h('dt', null, 'Change'),
      h('dd', null, h('code', null, short(plan.base)), ' → ', h('code', null, short(plan.head))),
      ...(plan.mergeBase && plan.mergeBase !== plan.base
        ? [h('dt', null, 'Compared with'), h('dd', null, h('code', null, short(plan.mergeBase)), ' (their merge base)')]
        : []),
      h('dt', null, 'Made'),
      h('dd', null, fmtTime(plan.createdAt)),
    ),
    filesPart(plan.files),
    rulesPart(plan.rules),
    testsPart(plan.tests),
    h('h2', null, 'Broken references'),
    plan.brokenReferences.length
      ? h(
          'ul',
          { class: 'plan-refs' },
          plan.brokenReferences.map((b) => h('li', null, h('strong', null, b.ruleId), ': ', b.message)),
        )
      : h('p', { class: 'empty' }, 'None.'),
    backtestPart(plan.backtest),
  )
}

function pathList(title, paths) {
  return h(
    'div',
    { class: 'plan-files' },
    h('h3', null, `${title} (${paths.length})`),
    paths.length
      ? h(
          'ul',
          null,
          paths.map((p) => h('li', null, h('code', null, p))),
        )
      : h('p', { class: 'empty' }, 'None.'),
  )
}

function filesPart(files) {
  return [
    h('h2', null, 'Files'),
    pathList('Added', files.added),
    pathList('Changed', files.changed),
    pathList('Removed', files.removed),
    h('h3', null, `Invalid (${files.invalid.length})`),
    files.invalid.length
      ? h(
          'div',
          // A table wider than a narrow window scrolls in its box, which the keyboard can reach.
          { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Invalid files' },
          h(
            'table',
            { class: 'list plan-invalid' },
            h('caption', { class: 'sr-only' }, 'Invalid files'),
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                ['File', 'Rule', 'Line', 'Message'].map((c) => h('th', { scope: 'col' }, c)),
              ),
            ),
            h(
              'tbody',
              null,
              files.invalid.flatMap((f) =>
                (f.errors.length ? f.errors : [{ message: '' }]).map((e) =>
                  h(
                    'tr',
                    null,
                    h('td', null, h('code', null, f.path)),
                    h('td', null, f.ruleId ?? ''),
                    h(
                      'td',
                      null,
                      e.line === undefined ? '' : `${e.line}${e.column === undefined ? '' : `:${e.column}`}`,
                    ),
                    h('td', null, e.message),
                  ),
                ),
              ),
            ),
          ),
        )
      : h('p', { class: 'empty' }, 'None.'),
  ]
}

function ruleItem(rule, served) {
  const label = `${rule.id} (${rule.kind})`
  return served ? h('a', { href: ruleHrefOfKind(rule.kind, rule.id) }, label) : label
}

function rulesPart(rules) {
  const part = (title, list, served, extra = () => null) =>
    h(
      'div',
      { class: 'plan-rules' },
      h('h3', null, `${title} (${list.length})`),
      list.length
        ? h(
            'ul',
            null,
            list.map((r) => h('li', null, ruleItem(r, served), extra(r))),
          )
        : h('p', { class: 'empty' }, 'None.'),
    )
  return [
    h('h2', null, 'Rules'),
    // Added rules are not served yet: no page to link to.
    part('Added', rules.added, false),
    part('Changed', rules.changed, true),
    part('Removed', rules.removed, true),
    part('Affected', rules.affected, true, (r) => h('span', { class: 'hint' }, ` — ${r.because}`)),
  ]
}

function testsPart(tests) {
  const failed = tests.filter((t) => t.passed === false).length
  const notRun = tests.filter((t) => t.passed === null).length
  return [
    h('h2', null, 'Tests'),
    h(
      'p',
      null,
      `${count(tests.length, 'rule')} tested: ${tests.length - failed - notRun} passed, ${failed} failed, ${notRun} not run.`,
    ),
    tests.length
      ? h(
          'ul',
          { class: 'plan-tests' },
          tests.map((t) =>
            h(
              'li',
              null,
              h('strong', null, t.ruleId),
              ' ',
              h(
                'span',
                { class: `test-${t.passed === null ? 'none' : t.passed ? 'pass' : 'fail'}` },
                outcome(t.passed),
              ),
              t.results.some((x) => x.passed !== true)
                ? h(
                    'ul',
                    null,
                    t.results
                      .filter((x) => x.passed !== true)
                      .map((x) => h('li', null, `${x.name}: ${outcome(x.passed)}${x.error ? ` — ${x.error}` : ''}`)),
                  )
                : null,
            ),
          ),
        )
      : null,
  ]
}

const outcome = (p) => (p === null ? 'not run' : p ? 'passed' : 'failed')
const countsText = (c) =>
  c === null ? '—' : `${count(c.matches, 'match', 'matches')}, ${count(c.alerts, 'alert')}, ${count(c.errors, 'error')}`

function sampleList(label, samples) {
  if (!samples.length) return null
  return h(
    'div',
    null,
    h('h4', null, label),
    h(
      'ul',
      { class: 'plan-samples' },
      samples.map((s) =>
        h(
          'li',
          null,
          s.severity ? h('span', { class: `sev sev-${s.severity}` }, s.severity) : null,
          ' ',
          String(s.title ?? s.dedup ?? ''),
          s.eventCount === undefined ? '' : ` (${count(s.eventCount, 'event')}`,
          s.firstEventTime ? `, first ${fmtTime(s.firstEventTime)})` : s.eventCount === undefined ? '' : ')',
        ),
      ),
    ),
  )
}

function backtestPart(b) {
  return [
    h('h2', null, 'Backtest'),
    h(
      'p',
      null,
      `The changed rules over the stored events from ${fmtTime(b.from)} to ${fmtTime(b.to)} (${count(b.records, 'record')} read by each side).`,
    ),
    b.skipped ? message('info', `Not run: ${b.skipped}`) : null,
    b.rules.length
      ? h(
          'div',
          { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Backtest counts per rule' },
          h(
            'table',
            { class: 'list plan-backtest' },
            h('caption', { class: 'sr-only' }, 'Backtest counts per rule'),
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                ['Rule', 'Before (base)', 'After (head)', 'Samples'].map((c) => h('th', { scope: 'col' }, c)),
              ),
            ),
            h(
              'tbody',
              null,
              b.rules.map((r) =>
                h(
                  'tr',
                  null,
                  h('td', null, r.ruleId),
                  h('td', null, countsText(r.base)),
                  h('td', null, countsText(r.head)),
                  h(
                    'td',
                    null,
                    r.samples.base.length || r.samples.head.length
                      ? h(
                          'details',
                          null,
                          h('summary', null, `Samples of ${r.ruleId}`),
                          sampleList('Before', r.samples.base),
                          sampleList('After', r.samples.head),
                        )
                      : '—',
                  ),
                ),
              ),
            ),
          ),
        )
      : h('p', { class: 'empty' }, 'No rule to backtest.'),
  ]
}
