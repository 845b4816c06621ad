// A rule's Alerts, Rule errors and Runs tabs (`#/rules/<kind>/<id>/alerts|errors|runs`): its alerts
// newest first (the alert API's rule filter, each linking to its page), its rule errors (the
// rule-errors groups filtered to it), and, for rules that run on a schedule (a correlation rule, a
// scheduled rule's queries), their last and next runs from GET /status; a streaming rule has none.
import { api, permissions, rulePath } from '../api.js'
import { fmtTime, h, message, replace } from '../dom.js'
import { entry } from './rule-errors.js'
import { ruleHeader, tabs } from './rule-header.js'

const TITLES = { alerts: 'Alerts', errors: 'Rule errors', runs: 'Runs' }
const failed = (r) => message('error', `${r.body?.message ?? 'failed'} (HTTP ${r.status})`)

export async function ruleTabView(main, kind, id, tab, query) {
  document.title = `${TITLES[tab]} of ${id} · rulekeeper`
  const body = h('div', { class: 'tab-body' }, h('p', { class: 'hint' }, 'Loading…'))
  replace(main, ruleHeader(kind, id), tabs(kind.path, id, TITLES[tab]), body)
  const [rule, perms] = await Promise.all([api('GET', rulePath(kind.path, id)), permissions()])
  if (rule.ok) main.querySelector('.rule-head')?.replaceWith(ruleHeader(kind, id, rule.body))
  if (tab === 'alerts') return replace(body, await alertsPart(id, perms, query))
  if (tab === 'errors') return replace(body, await errorsPart(id, query))
  replace(body, rule.ok ? await runsPart(rule.body) : failed(rule))
}

async function alertsPart(id, perms, query) {
  if (!perms.viewAlerts) return message('info', 'Your token lacks the View Alerts permission: alerts are not shown.')
  const q = { 'rule-id': id, limit: '25' }
  if (query?.get('cursor')) q.cursor = query.get('cursor')
  const r = await api('GET', '/alerts', { query: q })
  if (!r.ok) return failed(r)
  const list = r.body.results
  const all = h(
    'a',
    { href: `#/alerts?${new URLSearchParams({ 'rule-id': id })}` },
    'All alerts of this rule, with filters',
  )
  if (!list.length) return [h('p', { class: 'empty' }, 'This rule has raised no alert.'), h('p', null, all)]
  const next = new URLSearchParams({ cursor: r.body.next ?? '' })
  return [
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'list rule-alerts' },
        h('caption', null, `Alerts of ${id}, newest first`),
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            ['Created', 'Severity', 'Title', 'Status', 'Events'].map((c) => h('th', { scope: 'col' }, c)),
          ),
        ),
        h(
          'tbody',
          null,
          list.map((a) =>
            h(
              'tr',
              null,
              h('td', { class: 'nowrap' }, fmtTime(a.createdAt)),
              h('td', null, h('span', { class: `sev sev-${a.severity}` }, a.severity)),
              h('td', null, h('a', { href: `#/alerts/${encodeURIComponent(a.id)}` }, a.title || a.id)),
              h('td', null, a.status),
              h('td', { class: 'num' }, String(a.eventCount)),
            ),
          ),
        ),
      ),
    ),
    h(
      'nav',
      { class: 'pager', 'aria-label': 'Pages' },
      r.body.next ? h('a', { href: `${location.hash.split('?')[0]}?${next}` }, 'Older alerts') : null,
      all,
    ),
  ]
}

async function errorsPart(id, query) {
  const q = { 'rule-id': id, limit: '20' }
  if (query?.get('cursor')) q.cursor = query.get('cursor')
  const r = await api('GET', '/rule-errors/groups', { query: q })
  if (!r.ok) return failed(r)
  const all = h('a', { href: `#/rule-errors?${new URLSearchParams({ 'rule-id': id })}` }, 'On the Rule errors page')
  if (!r.body.results.length) return [h('p', { class: 'empty' }, 'No rule error of this rule.'), h('p', null, all)]
  const next = new URLSearchParams({ cursor: r.body.next ?? '' })
  return [
    h(
      'ol',
      { class: 'rule-errors' },
      r.body.results.map((e, i) => entry(e, i + 1)),
    ),
    h(
      'nav',
      { class: 'pager', 'aria-label': 'Pages' },
      r.body.next ? h('a', { href: `${location.hash.split('?')[0]}?${next}` }, 'Older errors') : null,
      all,
    ),
  ]
}

const scheduleText = (s) =>
  !s ? '' : s.rateMinutes ? `every ${s.rateMinutes} min` : s.cronExpression ? `cron ${s.cronExpression}` : ''

/** A rule's runs: read from the rule's own fields which scheduler runs it (no kind is named here). */
async function runsPart(rule) {
  const queries = Array.isArray(rule.scheduledQueries) ? rule.scheduledQueries : null
  const signals = 'correlationRuleReferenceIds' in rule
  if (!queries && !signals)
    return h(
      'p',
      { class: 'empty' },
      'This rule runs on each record as it is stored: it has no runs. Its alerts and rule errors are in the other tabs.',
    )
  const r = await api('GET', '/status')
  if (!r.ok) return failed(r)
  const row = (name, schedule, last, lastAt, next, counts, error) =>
    h(
      'tr',
      null,
      h('th', { scope: 'row' }, name),
      h('td', null, scheduleText(schedule)),
      h('td', null, lastAt ? fmtTime(lastAt) : 'never'),
      h(
        'td',
        null,
        last ? `${last.outcome}${last.alertsCreated !== undefined ? `, ${last.alertsCreated} alerts` : ''}` : '',
      ),
      h('td', null, next ? fmtTime(next) : 'not planned'),
      h('td', null, counts),
      h('td', { class: 'reason' }, error ? `${fmtTime(error.time)}: ${error.error}` : ''),
    )
  let rows
  if (signals) {
    const s = (r.body.detection?.correlation?.rules ?? []).find((x) => x.ruleId === rule.id)
    rows = s
      ? [
          row(
            rule.id,
            s.schedule,
            s.lastRun,
            s.lastRun?.evaluatedAt,
            s.nextRunAt,
            `${s.runs} runs, ${s.errors} errors`,
            s.lastError,
          ),
        ]
      : []
  } else {
    const all = r.body.scheduledQueries?.queries ?? []
    rows = queries
      .map((name) => all.find((x) => x.name === name))
      .filter(Boolean)
      .map((s) =>
        row(
          s.name,
          s.schedule,
          s.lastRun,
          s.lastRun?.startedAt,
          s.nextSlotAt,
          `${s.runs} runs, ${s.errors} errors`,
          s.lastError,
        ),
      )
  }
  if (!rows.length)
    return h(
      'p',
      { class: 'empty' },
      signals
        ? 'This rule runs on its schedule over other rules’ signals; it is not scheduled now (disabled, or not valid).'
        : `This rule runs on the rows of its scheduled queries (${queries.join(', ')}); none is scheduled now (disabled, or without a schedule).`,
    )
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'list runs' },
      h('caption', null, signals ? 'Its runs (last and next)' : 'The runs of its scheduled queries (last and next)'),
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          [signals ? 'Rule' : 'Query', 'Schedule', 'Last run', 'Outcome', 'Next run', 'Runs', 'Last error'].map((c) =>
            h('th', { scope: 'col' }, c),
          ),
        ),
      ),
      h('tbody', null, rows),
    ),
  )
}
