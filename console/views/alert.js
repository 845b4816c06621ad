// An alert's page (alerts.md §3): its fields, a status change, its triage (assignee, comments,
// history: alert-triage.js), summary, deliveries, alert context, its events as a table with chosen
// columns (alert-events.js), and a link to the query page with the events around it.
import { api, catalog, permissions } from '../api.js'
import { field, fmtTime, h, message, replace, select, submitButton } from '../dom.js'
import { ruleHrefOfKind } from '../kinds.js'
import { eventsTable, groupByKeys } from './alert-events.js'
import { STATUSES } from './alerts.js'
import { triagePart } from './alert-triage.js'
import { eventsAroundSql } from './query.js'

/** The fields the rule's dedup string is built from (its GroupBy keys), when the token may read the rule. */
async function dedupFields(a, perms) {
  const kind = catalog().kinds.find((k) => k.name === a.ruleKind)
  if (!kind || !perms.viewRules) return []
  const r = await api('GET', `/${kind.path}/${encodeURIComponent(a.ruleId)}`)
  return r.ok ? groupByKeys(r.body?.groupBy) : []
}

export async function alertView(main, params) {
  const [r, perms] = await Promise.all([api('GET', `/alerts/${encodeURIComponent(params.id)}`), permissions()])
  const crumbs = h('p', { class: 'crumbs' }, h('a', { href: '#/alerts' }, 'Alerts'))
  if (!r.ok)
    return replace(
      main,
      crumbs,
      h('h1', { tabindex: '-1' }, 'Alert'),
      message('error', `${r.body?.message} (HTTP ${r.status})`),
    )
  let a = r.body
  document.title = `${a.title || a.id} · rulekeeper`
  const factsEl = h('div')
  const renderFacts = () =>
    replace(
      factsEl,
      h(
        'dl',
        { class: 'facts' },
        [
          ['Status', a.status],
          ['Assignee', a.assignee ?? 'nobody'],
          ['Severity', h('span', { class: `sev sev-${a.severity}` }, a.severity)],
          ['Rule', h('a', { href: ruleHrefOfKind(a.ruleKind, a.ruleId) }, a.ruleId)],
          ['Events', String(a.eventCount)],
          ['First event', fmtTime(a.firstEventTime)],
          ['Last event', fmtTime(a.lastEventTime)],
          ['Created', fmtTime(a.createdAt)],
          ['Updated', fmtTime(a.updatedAt)],
          ['Dedup', a.dedup],
          ['Log types', (a.logTypes ?? []).join(', ')],
          ['Description', a.description],
          ['Runbook', a.runbook],
          ['Reference', a.reference],
        ]
          .filter(([, v]) => v)
          .map(([k, v]) => [h('dt', null, k), h('dd', null, v)]),
      ),
    )
  renderFacts()
  const triage = triagePart({
    alert: a,
    perms,
    changed(next) {
      a = next
      renderFacts()
    },
  })
  const statusSel = select(
    STATUSES.map((s) => [s, s]),
    a.status,
  )
  const out = h('div', { 'aria-live': 'polite' })
  const change = h(
    'form',
    {
      class: 'inline',
      async onsubmit(e) {
        e.preventDefault()
        const res = await api('PATCH', `/alerts/${encodeURIComponent(a.id)}`, { body: { status: statusSel.value } })
        if (res.ok) {
          a = res.body
          renderFacts()
          triage.update(a)
          replace(out, message('ok', `Status is now ${a.status}.`))
        } else replace(out, message('error', `${res.body?.message} (HTTP ${res.status})`))
      },
    },
    field('Alert status', statusSel),
    submitButton('Change status', perms.manageAlerts, 'status-why', 'Your token lacks the Manage Alerts permission.'),
  )
  const summary = Object.entries(a.summary ?? {})
  const [events, dedup] = await Promise.all([
    api('GET', `/alerts/${encodeURIComponent(a.id)}/events`, { query: { limit: '50' } }),
    dedupFields(a, perms),
  ])
  replace(
    main,
    crumbs,
    h('h1', { tabindex: '-1' }, a.title || a.id),
    change,
    out,
    factsEl,
    eventsAroundLink(a),
    triage,
    h('h2', null, 'Events'),
    events.ok
      ? events.body.results.length
        ? eventsTable({ events: events.body.results, user: perms.user, logType: a.logTypes?.[0], dedupFields: dedup })
        : h('p', { class: 'empty' }, 'No event is stored for this alert.')
      : message('error', `${events.body?.message} (HTTP ${events.status})`),
    events.ok && events.body.next ? h('p', { class: 'hint' }, 'The first 50 events are shown.') : null,
    summary.length
      ? [
          h('h2', null, 'Summary'),
          h(
            'dl',
            { class: 'facts' },
            summary.map(([k, vals]) => [
              h('dt', null, k),
              h('dd', null, vals.map((v) => `${v.value} (${v.count})`).join(', ')),
            ]),
          ),
        ]
      : null,
    h('h2', null, 'Deliveries'),
    (a.destinations ?? []).length
      ? h(
          'ul',
          null,
          a.destinations.map((d) =>
            h(
              'li',
              null,
              `${d.id}: ${d.state}, ${d.attempts} attempts${d.lastError ? `, last error: ${d.lastError}` : ''}`,
            ),
          ),
        )
      : h('p', null, 'No destination.'),
    h('h2', null, 'Alert context'),
    h('pre', { class: 'code-view', tabindex: '0' }, JSON.stringify(a.alertContext ?? {}, null, 2)),
  )
}

/** "Events around this alert": the query page with the SQL of its log type ±15 minutes around its first event. */
function eventsAroundLink(a) {
  const table = catalog().logTypes.find((l) => l.name === (a.logTypes ?? [])[0])?.table
  if (!table || !a.firstEventTime) return null
  const sql = eventsAroundSql(table, a.firstEventTime)
  return h('p', null, h('a', { href: `#/query?${new URLSearchParams({ sql })}` }, 'Events around this alert'))
}
