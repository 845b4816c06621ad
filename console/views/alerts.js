// Alerts (alerts.md §3): the list newest first with filters (severity, status, rule id) and cursor
// paging, and an alert's page with its fields, summary, delivery state, events, a status change and
// a link to the query page with the events around it.
import { api, catalog, permissions } from '../api.js'
import { field, fmtTime, h, message, onSubmit, replace, select, submitButton } from '../dom.js'
import { ruleHrefOfKind, SEVERITIES } from '../kinds.js'
import { eventsAroundSql } from './query.js'

const STATUSES = ['OPEN', 'TRIAGED', 'CLOSED', 'RESOLVED']
const alertHref = (id) => `#/alerts/${encodeURIComponent(id)}`

export async function alertsView(main, _params, query) {
  document.title = 'Alerts · rulekeeper'
  const q = (k) => query.get(k) ?? ''
  const severity = select([['', 'Any severity'], ...SEVERITIES.map((s) => [s, s])], q('severity'))
  const status = select([['', 'Any status'], ...STATUSES.map((s) => [s, s])], q('status'))
  const rule = h('input', { type: 'text', value: q('rule-id'), autocomplete: 'off' })
  const apply = () => {
    const p = new URLSearchParams()
    if (severity.value) p.set('severity', severity.value)
    if (status.value) p.set('status', status.value)
    if (rule.value.trim()) p.set('rule-id', rule.value.trim())
    location.hash = `#/alerts${p.size ? `?${p}` : ''}`
  }
  const form = h(
    'form',
    { class: 'filters', role: 'search', onsubmit: onSubmit(apply) },
    field('Severity', severity),
    field('Status', status),
    field('Rule id', rule),
    h('button', { type: 'submit' }, 'Filter'),
  )
  const apiQuery = { limit: '50' }
  for (const k of ['severity', 'status', 'rule-id', 'cursor']) if (q(k)) apiQuery[k] = q(k)
  const r = await api('GET', '/alerts', { query: apiQuery })
  const head = h('h1', { tabindex: '-1' }, 'Alerts')
  if (!r.ok) return replace(main, head, form, message('error', `${r.body?.message} (HTTP ${r.status})`))
  const nextQuery = new URLSearchParams(query)
  if (r.body.next) nextQuery.set('cursor', r.body.next)
  replace(
    main,
    head,
    form,
    r.body.results.length
      ? h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { class: 'list' },
            h('caption', { class: 'sr-only' }, 'Alerts, newest first'),
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                ['Created', 'Severity', 'Title', 'Rule', 'Status', 'Events'].map((c) => h('th', { scope: 'col' }, c)),
              ),
            ),
            h(
              'tbody',
              null,
              r.body.results.map((a) =>
                h(
                  'tr',
                  null,
                  h('td', null, fmtTime(a.createdAt)),
                  h('td', null, h('span', { class: `sev sev-${a.severity}` }, a.severity)),
                  h('td', null, h('a', { href: alertHref(a.id) }, a.title || a.id)),
                  h('td', null, a.ruleId),
                  h('td', null, a.status),
                  h('td', null, String(a.eventCount)),
                ),
              ),
            ),
          ),
        )
      : h('p', { class: 'empty' }, 'No alert matches.'),
    h(
      'nav',
      { class: 'pager', 'aria-label': 'Pages' },
      q('cursor') ? h('a', { href: '#/alerts' }, 'Newest') : null,
      r.body.next ? h('a', { href: `#/alerts?${nextQuery}` }, 'Older alerts') : null,
    ),
  )
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
          ['Severity', a.severity],
          [
            'Rule',
            h(
              'a',
              {
                href: ruleHrefOfKind(a.ruleKind, a.ruleId),
              },
              a.ruleId,
            ),
          ],
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
          replace(out, message('ok', `Status is now ${a.status}.`))
        } else replace(out, message('error', `${res.body?.message} (HTTP ${res.status})`))
      },
    },
    field('Alert status', statusSel),
    submitButton('Change status', perms.manageAlerts, 'status-why', 'Your token lacks the Manage Alerts permission.'),
  )
  const summary = Object.entries(a.summary ?? {})
  const events = await api('GET', `/alerts/${encodeURIComponent(a.id)}/events`, { query: { limit: '20' } })
  replace(
    main,
    crumbs,
    h('h1', { tabindex: '-1' }, a.title || a.id),
    change,
    out,
    factsEl,
    eventsAroundLink(a),
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
    h('h2', null, 'Events'),
    events.ok
      ? events.body.results.map((ev, i) =>
          h('pre', { class: 'code-view', tabindex: '0', 'aria-label': `Event ${i + 1}` }, JSON.stringify(ev, null, 2)),
        )
      : message('error', `${events.body?.message} (HTTP ${events.status})`),
  )
}

/** "Events around this alert": the query page with the SQL of its log type ±15 minutes around its first event. */
function eventsAroundLink(a) {
  const table = catalog().logTypes.find((l) => l.name === (a.logTypes ?? [])[0])?.table
  if (!table || !a.firstEventTime) return null
  const sql = eventsAroundSql(table, a.firstEventTime)
  return h('p', null, h('a', { href: `#/query?${new URLSearchParams({ sql })}` }, 'Events around this alert'))
}
