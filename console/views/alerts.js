// The alert list (alerts.md §3): newest first, the API's filters (severity, status, rule id,
// created after/before) kept in the address, cursor pages, and the bulk status change: a checkbox
// per alert, "Select all on this page" and a status menu (`POST /alerts/status`, Manage Alerts).
// An alert's own page is views/alert.js.
import { api, permissions } from '../api.js'
import { field, fmtTime, h, message, onSubmit, replace, select, submitButton } from '../dom.js'
import { SEVERITIES } from '../kinds.js'

export const STATUSES = ['OPEN', 'TRIAGED', 'CLOSED', 'RESOLVED']
const alertHref = (id) => `#/alerts/${encodeURIComponent(id)}`
/** The list's filters: the API's query parameters, as they are in the address. */
const FILTERS = ['severity', 'status', 'rule-id', 'created-after', 'created-before']
const TIME_HINT = 'RFC 3339 (2026-11-20T10:00:00Z)'

export async function alertsView(main, _params, query) {
  document.title = 'Alerts · rulekeeper'
  const q = (k) => query.get(k) ?? ''
  const severity = select([['', 'Any severity'], ...SEVERITIES.map((s) => [s, s])], q('severity'))
  const status = select([['', 'Any status'], ...STATUSES.map((s) => [s, s])], q('status'))
  const rule = h('input', { type: 'text', value: q('rule-id'), autocomplete: 'off' })
  const after = h('input', { type: 'text', value: q('created-after'), autocomplete: 'off', inputmode: 'text' })
  const before = h('input', { type: 'text', value: q('created-before'), autocomplete: 'off' })
  const apply = () => {
    const p = new URLSearchParams()
    const values = {
      severity: severity.value,
      status: status.value,
      'rule-id': rule.value,
      'created-after': after.value,
      'created-before': before.value,
    }
    for (const k of FILTERS) if (values[k].trim()) p.set(k, values[k].trim())
    location.hash = `#/alerts${p.size ? `?${p}` : ''}`
  }
  const form = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Alert filters', onsubmit: onSubmit(apply) },
    field('Severity', severity),
    field('Status', status),
    field('Rule id', rule),
    field('Created after', after, TIME_HINT),
    field('Created before', before),
    h('button', { type: 'submit' }, 'Filter'),
  )
  const apiQuery = { limit: '50' }
  for (const k of [...FILTERS, 'cursor']) if (q(k)) apiQuery[k] = q(k)
  const [r, perms] = await Promise.all([api('GET', '/alerts', { query: apiQuery }), permissions()])
  const head = h('h1', { tabindex: '-1' }, 'Alerts')
  if (!r.ok) return replace(main, head, form, message('error', `${r.body?.message} (HTTP ${r.status})`))
  const nextQuery = new URLSearchParams(query)
  if (r.body.next) nextQuery.set('cursor', r.body.next)
  const alerts = r.body.results
  const boxes = alerts.map((a) =>
    h('input', { type: 'checkbox', value: a.id, 'aria-label': `Select alert ${a.title || a.id}`, onchange: sync }),
  )
  const all = h('input', {
    type: 'checkbox',
    id: 'select-all',
    onchange() {
      for (const b of boxes) b.checked = all.checked
      sync()
    },
  })
  const count = h('span', { class: 'hint', 'aria-live': 'polite' }, 'No alert selected.')
  const out = h('div', { 'aria-live': 'polite' })
  const bulkStatus = select(
    STATUSES.map((s) => [s, s]),
    'RESOLVED',
  )
  const [setButton, why] = submitButton(
    'Set status',
    perms.manageAlerts,
    'bulk-why',
    'Your token lacks the Manage Alerts permission.',
  )
  function sync() {
    const n = boxes.filter((b) => b.checked).length
    all.checked = n > 0 && n === boxes.length
    all.indeterminate = n > 0 && n < boxes.length
    count.textContent = n === 0 ? 'No alert selected.' : `${n} ${n === 1 ? 'alert' : 'alerts'} selected.`
    setButton.disabled = !perms.manageAlerts || n === 0
  }
  sync()
  const bulk = h(
    'form',
    {
      class: 'inline bulk',
      'aria-label': 'Bulk status change',
      async onsubmit(e) {
        e.preventDefault()
        const ids = boxes.filter((b) => b.checked).map((b) => b.value)
        if (!ids.length) return
        setButton.disabled = true
        const res = await api('POST', '/alerts/status', { body: { ids, status: bulkStatus.value } })
        if (!res.ok) {
          sync()
          return replace(out, message('error', `${res.body?.message} (HTTP ${res.status})`))
        }
        const updated = res.body.results.filter((x) => x.outcome === 'updated').length
        const gone = res.body.results.length - updated
        // The rows show the new status (a filter by status may no longer hold them: the list is not reloaded under the user).
        for (const x of res.body.results) {
          const cell = main.querySelector(`td[data-status-of="${CSS.escape(x.id)}"]`)
          if (cell && x.outcome === 'updated') cell.textContent = bulkStatus.value
        }
        for (const b of boxes) b.checked = false
        sync()
        replace(
          out,
          message(
            'ok',
            `${updated} ${updated === 1 ? 'alert' : 'alerts'} set to ${bulkStatus.value}.${gone ? ` ${gone} not found.` : ''}`,
          ),
        )
      },
    },
    h('span', { class: 'field' }, h('label', { for: 'select-all' }, all, ' Select all on this page')),
    field('Status of the selected alerts', bulkStatus),
    setButton,
    why,
    count,
  )
  replace(
    main,
    head,
    form,
    alerts.length ? [bulk, out] : null,
    alerts.length
      ? h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { class: 'list alert-list' },
            h('caption', { class: 'sr-only' }, 'Alerts, newest first'),
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Selected')),
                ['Created', 'Severity', 'Title', 'Rule', 'Status', 'Assignee', 'Events'].map((c) =>
                  h('th', { scope: 'col' }, c),
                ),
              ),
            ),
            h(
              'tbody',
              null,
              alerts.map((a, i) =>
                h(
                  'tr',
                  null,
                  h('td', null, boxes[i]),
                  h('td', { class: 'nowrap' }, fmtTime(a.createdAt)),
                  h('td', null, h('span', { class: `sev sev-${a.severity}` }, a.severity)),
                  h('td', null, h('a', { href: alertHref(a.id) }, a.title || a.id)),
                  h('td', null, a.ruleId),
                  h('td', { 'data-status-of': a.id }, a.status),
                  h('td', null, a.assignee ?? ''),
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
      q('cursor') ? h('a', { href: newestHref(query) }, 'Newest') : null,
      r.body.next ? h('a', { href: `#/alerts?${nextQuery}` }, 'Older alerts') : null,
    ),
  )
}

/** The first page with the same filters. */
function newestHref(query) {
  const p = new URLSearchParams(query)
  p.delete('cursor')
  return `#/alerts${p.size ? `?${p}` : ''}`
}
