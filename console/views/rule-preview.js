// A rule's Preview: the rule in the editors, saved or not, run over the stored events of a chosen
// window (`POST /replay/preview`: the replay path, within its caps and fair places), showing what it
// would have alerted — the counts, each alert with its events' count and its first events. `Cancel
// preview` aborts the request: the connection closes and the server stops the replay.
import { api, permissions } from '../api.js'
import { field, fmtTime, h, message, replace } from '../dom.js'

const hourAgo = (hours) =>
  new Date(Math.floor(Date.now() / 60_000) * 60_000 - hours * 3_600_000).toISOString().replace('.000Z', 'Z')

/** `previewPart({ kind, form })`: `form.body()` is the editors' rule or null (its problem shown), `form.report(r, sent)` shows a 400. */
export async function previewPart({ kind, form }) {
  const perms = await permissions()
  const allowed = perms.viewRules && perms.manageRules
  const from = h('input', { type: 'text', value: hourAgo(24), autocomplete: 'off', spellcheck: 'false' })
  const to = h('input', { type: 'text', value: hourAgo(0), autocomplete: 'off', spellcheck: 'false' })
  const out = h('div', { class: 'preview-out', 'aria-live': 'polite' })
  let running = null
  const run = h(
    'button',
    {
      type: 'submit',
      disabled: !allowed,
      'aria-describedby': allowed ? undefined : 'preview-why',
    },
    'Preview',
  )
  const cancel = h('button', { type: 'button', disabled: true, onclick: () => running?.abort() }, 'Cancel preview')
  async function preview(e) {
    e.preventDefault()
    const rule = form.body()
    if (!rule) return replace(out, message('error', 'The rule in the editors is not valid; see above.'))
    running = new AbortController()
    run.disabled = true
    cancel.disabled = false
    replace(out, message('info', 'Running the rule over the stored events…'))
    try {
      const body = { kind: kind.path, rule, from: from.value.trim(), to: to.value.trim() }
      const r = await api('POST', '/replay/preview', { body, signal: running.signal })
      if (r.ok) return replace(out, results(r.body))
      if (r.status === 400 && Array.isArray(r.body?.errors) && r.body.errors.some((p) => p.path.startsWith('/rule'))) {
        // The rule's problems, at their line in the editors (their pointers are under /rule).
        const errors = r.body.errors.map((p) => ({ ...p, path: p.path.replace(/^\/rule/, '') }))
        form.report({ ...r, body: { ...r.body, errors } }, rule)
        return replace(out, message('error', 'The rule is not valid: nothing was run (its problems are listed above).'))
      }
      const where = (r.body?.errors ?? []).map((p) => `${p.path}: ${p.message}`).join('; ')
      replace(out, message('error', `${r.body?.message ?? 'failed'}${where ? `: ${where}` : ''} (HTTP ${r.status})`))
    } catch (err) {
      if (err?.name !== 'AbortError') throw err
      replace(out, message('info', 'Preview cancelled: the server stopped it.'))
    } finally {
      running = null
      run.disabled = !allowed
      cancel.disabled = true
    }
  }
  return h(
    'section',
    { class: 'preview', 'aria-labelledby': 'preview-head' },
    h('h2', { id: 'preview-head' }, 'Preview over stored events'),
    h(
      'p',
      { class: 'hint' },
      'Runs the rule as it is in the editors (saved or not) over the stored events of [From, To) and shows what it would have alerted. Nothing is stored or sent.',
    ),
    h(
      'form',
      { class: 'filters', 'aria-label': 'Preview', onsubmit: preview },
      field('From', from, 'RFC 3339 time'),
      field('To', to, 'RFC 3339 time'),
      h('div', { class: 'buttons' }, run, cancel),
      allowed
        ? null
        : h(
            'small',
            { id: 'preview-why', class: 'hint' },
            'A preview needs the View Rules and Manage Rules permissions.',
          ),
    ),
    out,
  )
}

function results(r) {
  const counts = r.rules[0] ?? { matches: 0, alerts: 0, errors: 0 }
  const summary = h(
    'p',
    { class: 'preview-counts' },
    `${r.records} events read, ${counts.matches} matched, ${r.alertCount} ${r.alertCount === 1 ? 'alert' : 'alerts'}`,
    counts.errors ? `, ${counts.errors} rule errors` : '',
    '.',
  )
  if (!r.alerts)
    return [summary, message('info', 'Your token lacks the View Alerts permission: only the counts are shown.')]
  if (!r.alerts.length) return [summary, h('p', { class: 'empty' }, 'It would have raised no alert.')]
  return [
    summary,
    h(
      'ol',
      { class: 'preview-alerts', 'aria-label': 'Alerts it would have raised' },
      r.alerts.map((a) =>
        h(
          'li',
          { class: 'preview-alert' },
          h('span', { class: `sev sev-${a.severity}` }, a.severity),
          ' ',
          h('strong', { class: 'alert-title' }, a.title),
          h(
            'p',
            { class: 'sub' },
            `${a.eventCount} ${a.eventCount === 1 ? 'event' : 'events'}, ${fmtTime(a.firstEventTime)} to ${fmtTime(a.lastEventTime)}`,
            a.dedup && a.dedup !== a.title ? ` · dedup ${a.dedup}` : '',
          ),
          h(
            'details',
            null,
            h('summary', null, `Its first ${a.sampleEvents?.length ?? 0} events`),
            h(
              'pre',
              { class: 'code-view', tabindex: '0', 'aria-label': `Events of ${a.title}` },
              (a.sampleEvents ?? []).map((ev) => JSON.stringify(ev)).join('\n'),
            ),
          ),
        ),
      ),
    ),
  ]
}
