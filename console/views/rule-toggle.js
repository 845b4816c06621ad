// Enabling and disabling rules from the list (views/rules.js), one rule or the selected ones: each is
// a write like any other. The rule is read (its ETag and representation), checked against the
// version the list showed, and written back with only `enabled` changed: `PUT` with `If-Match`,
// the typed change reason in `X-Change-Reason` and `run-tests-first=false` (its tests did not
// change), one commit per rule. There is no bulk rule route: the selected rules are one request
// each, in turn. A 412, or a change since the list was shown, is reported and nothing is written.
import { api, problemText, reasonHeaders, reasonProblem, rulePath } from '../api.js'
import { actorText, field, fmtTime, h, message, replace } from '../dom.js'
import { writableFields } from '../kinds.js'

/**
 * Sets one rule's `enabled`: `{ ok: true, rule }` (the rule as saved), or `{ ok: false, conflict, text }`
 * (`conflict`: it changed since the list was shown, or the server answered 412).
 */
export async function setEnabled(row, enabled, reason) {
  const { kind, rule } = row
  const r = await api('GET', rulePath(kind.path, rule.id))
  if (!r.ok) return { ok: false, conflict: r.status === 404, text: `${rule.id}: ${problemText(r)}` }
  // The version the list showed: every field of its row as the rule has it now (an edit in the
  // same second as the row's lastModified still differs in a field).
  const same = (k) => !(k in r.body) || JSON.stringify(r.body[k]) === JSON.stringify(rule[k])
  if (!Object.keys(rule).every(same))
    return {
      ok: false,
      conflict: true,
      text: `${rule.id} was changed since the list was shown (by ${actorText(r.body.lastModifiedBy)} at ${fmtTime(r.body.lastModified)}): nothing was written. Filter again to see it as it is.`,
    }
  const headers = reasonHeaders(reason)
  const etag = r.headers.get('ETag')
  if (etag) headers['If-Match'] = etag
  const body = { ...writableFields(kind, r.body), enabled }
  const res = await api('PUT', rulePath(kind.path, rule.id), {
    body,
    headers,
    query: { 'run-tests-first': 'false' },
  })
  if (res.ok) return { ok: true, rule: res.body }
  if (res.status === 412)
    return {
      ok: false,
      conflict: true,
      text: `${rule.id} was changed by someone else meanwhile (HTTP 412): nothing was written. Filter again to see it as it is.`,
    }
  return { ok: false, conflict: false, text: `${rule.id}: ${problemText(res)}` }
}

/**
 * The bar above the list: `Change reason`, `Select all on this page`, `Enable selected`, `Disable
 * selected`, the count, and the outcome. `rows()`: the rows shown; `selected`: a Map key → row kept
 * across pages; `changed(row, rule)`: a rule was written (the row shows it).
 */
export function toggleBar({ canManage, rows, selected, changed }) {
  const why = canManage
    ? null
    : h('small', { id: 'toggle-why', class: 'hint' }, 'Your token lacks the Manage Rules permission.')
  const reason = h('input', { type: 'text', autocomplete: 'off', maxlength: '2000', disabled: !canManage })
  const out = h('div', { 'aria-live': 'polite', class: 'toggle-out' })
  const count = h('span', { class: 'hint', 'aria-live': 'polite' })
  const all = h('input', { type: 'checkbox', id: 'select-all-rules', disabled: !canManage })
  const button = (label, enabled) =>
    h(
      'button',
      {
        type: 'button',
        disabled: !canManage,
        'aria-describedby': canManage ? undefined : 'toggle-why',
        onclick: () => run([...selected.values()], enabled),
      },
      label,
    )
  const enable = button('Enable selected', true)
  const disable = button('Disable selected', false)
  let busy = false

  function sync() {
    const n = selected.size
    const shown = rows()
    const onPage = shown.filter((r) => selected.has(keyOf(r))).length
    all.checked = onPage > 0 && onPage === shown.length
    all.indeterminate = onPage > 0 && onPage < shown.length
    count.textContent = n === 0 ? 'No rule selected.' : `${ruleCount(n)} selected.`
    enable.disabled = disable.disabled = !canManage || busy || n === 0
  }
  all.addEventListener('change', () => {
    for (const r of rows()) {
      if (all.checked) selected.set(keyOf(r), r)
      else selected.delete(keyOf(r))
    }
    for (const box of document.querySelectorAll('main input.select-rule')) box.checked = all.checked
    sync()
  })

  /** Writes `enabled` to each row in turn; the outcome of each is listed. */
  async function run(targets, enabled) {
    const text = reason.value.trim()
    const problem = !text
      ? 'Type a change reason first: every change is a commit with its reason.'
      : reasonProblem(text)
    if (problem) {
      replace(out, message('error', problem))
      reason.focus()
      return
    }
    if (!targets.length || busy) return
    busy = true
    sync()
    const failures = []
    let done = 0
    const verb = enabled ? 'enabled' : 'disabled'
    try {
      for (const row of targets) {
        replace(out, message('info', `Writing ${done + failures.length + 1} of ${targets.length}: ${row.rule.id}…`))
        const res = await setEnabled(row, enabled, text)
        if (res.ok) {
          done++
          selected.delete(keyOf(row))
          changed(row, res.rule)
        } else failures.push(res.text)
      }
    } finally {
      busy = false
    }
    sync()
    const summary = `${ruleCount(done)} ${verb}, one commit each with the reason “${text}”.`
    replace(
      out,
      failures.length
        ? message(
            'error',
            `${summary} Not written:`,
            h(
              'ul',
              null,
              failures.map((f) => h('li', null, f)),
            ),
          )
        : message('ok', summary),
    )
  }

  const el = h(
    'div',
    { class: 'filters toggle-bar', role: 'group', 'aria-label': 'Enable or disable rules' },
    field('Change reason', reason, 'Every toggle is a commit with this reason'),
    h('span', { class: 'field' }, h('label', { for: 'select-all-rules' }, all, ' Select all on this page')),
    enable,
    disable,
    why,
    count,
  )
  sync()
  return { el, out, sync, toggleOne: (row, enabled) => run([row], enabled) }
}

/** `1 rule`, `2 rules`. */
const ruleCount = (n) => `${n} rule${n === 1 ? '' : 's'}`

/** A row's key in the selection: kind path and id (ids are unique, kinds keep it readable). */
export const keyOf = (row) => `${row.kind.path}\u0000${row.rule.id}`
