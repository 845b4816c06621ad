// The triage part of an alert's page: its assignee (an input; empty clears it: `PATCH /alerts/{id}`),
// its comments (oldest first) with a form to add one (`POST /alerts/{id}/comments`) and the history
// of the changes made through the API. Writes need Manage Alerts; without it the buttons are
// disabled with the reason beside them.
import { api } from '../api.js'
import { field, fmtTime, h, message, replace, submitButton } from '../dom.js'

const who = (a) => a?.name || a?.id || 'someone'
const NOBODY = '(nobody)'

function historyText(e) {
  if (e.field === 'comment') return 'added a comment'
  return `${e.field}: ${e.from ?? NOBODY} → ${e.to ?? NOBODY}`
}

/**
 * `{ alert, perms, changed }` → the triage part; `changed(alert)` is told the alert after a
 * change (the page's facts show the new status and time); `part.update(alert)` shows an alert
 * changed elsewhere on the page (its status).
 */
export function triagePart({ alert, perms, changed }) {
  let a = alert
  const part = h('section', { 'aria-labelledby': 'triage-head' })
  const out = h('div', { 'aria-live': 'polite' })
  const assignee = h('input', { type: 'text', value: a.assignee ?? '', autocomplete: 'off', maxlength: '200' })
  const comment = h('textarea', { rows: '3', maxlength: '4000' })
  const commentsEl = h('div')
  const historyEl = h('div')
  const after = (res, ok) => {
    if (!res.ok) return replace(out, message('error', `${res.body?.message ?? 'refused'} (HTTP ${res.status})`))
    replace(out, message('ok', ok))
    return true
  }
  const renderLists = () => {
    const comments = a.comments ?? []
    replace(
      commentsEl,
      comments.length
        ? h(
            'ol',
            { class: 'comments' },
            comments.map((c) =>
              h(
                'li',
                null,
                h('p', { class: 'sub' }, h('strong', null, who(c.author)), ` · ${fmtTime(c.createdAt)}`),
                h('p', { class: 'comment-text' }, c.text),
              ),
            ),
          )
        : h('p', { class: 'empty' }, 'No comment yet.'),
    )
    const history = a.history ?? []
    replace(
      historyEl,
      history.length
        ? h(
            'ul',
            { class: 'history' },
            history.map((e) => h('li', null, `${fmtTime(e.at)} · ${who(e.actor)} · ${historyText(e)}`)),
          )
        : h('p', { class: 'empty' }, 'No change yet.'),
    )
  }
  const assigneeForm = h(
    'form',
    {
      class: 'inline',
      async onsubmit(e) {
        e.preventDefault()
        const value = assignee.value.trim() || null
        const res = await api('PATCH', `/alerts/${encodeURIComponent(a.id)}`, { body: { assignee: value } })
        if (after(res, value ? `Assigned to ${value}.` : 'Nobody is assigned.') === true) {
          a = res.body
          assignee.value = a.assignee ?? ''
          renderLists()
          changed(a)
        }
      },
    },
    field('Assignee', assignee, 'Empty: nobody.'),
    submitButton('Set assignee', perms.manageAlerts, 'assignee-why', 'Your token lacks the Manage Alerts permission.'),
  )
  const commentForm = h(
    'form',
    {
      class: 'comment-form',
      async onsubmit(e) {
        e.preventDefault()
        if (!comment.value.trim()) return replace(out, message('error', 'Write a comment first.'))
        const res = await api('POST', `/alerts/${encodeURIComponent(a.id)}/comments`, { body: { text: comment.value } })
        if (after(res, 'Comment added.') === true) {
          comment.value = ''
          const fresh = await api('GET', `/alerts/${encodeURIComponent(a.id)}`)
          if (fresh.ok) a = fresh.body
          else a = { ...a, comments: [...(a.comments ?? []), res.body] }
          renderLists()
          changed(a)
        }
      },
    },
    field('Comment', comment, 'Up to 4,000 characters.'),
    submitButton('Add comment', perms.manageAlerts, 'comment-why', 'Your token lacks the Manage Alerts permission.'),
  )
  renderLists()
  part.update = (next) => {
    a = next
    renderLists()
  }
  replace(
    part,
    h('h2', { id: 'triage-head' }, 'Triage'),
    assigneeForm,
    out,
    h('h3', null, 'Comments'),
    commentsEl,
    commentForm,
    h('h3', null, 'History'),
    historyEl,
  )
  return part
}
