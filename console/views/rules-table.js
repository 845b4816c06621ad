// The rule list's table (views/rules.js): a row per rule with a select box, its facts, its enabled
// state as a toggle, and its health (`GET /rule-health`: last alert, alerts in the last 24 hours,
// latest rule error, last and next run); every column header is a sort button (`aria-sort` on the
// sorted one). The columns and the order the sort follows are defined here once.
import { actorText, fmtTime, h } from '../dom.js'
import { kindOf, SEVERITIES } from '../kinds.js'

export const ruleHref = (kindPath, id) => `#/rules/${encodeURIComponent(kindPath)}/${encodeURIComponent(id)}`

const byText = (a, b) => (a < b ? -1 : a > b ? 1 : 0)
/**
 * The columns in order: `key` (the address's `sort`), header, the value a sort compares (null: none;
 * always last) and the cell. `narrow`: kept in a 390 px window.
 */
export const COLUMNS = [
  { key: 'id', label: 'Id', value: (r) => r.rule.id, narrow: true },
  { key: 'name', label: 'Display name', value: (r) => r.rule.displayName || null, narrow: false },
  { key: 'kind', label: 'Kind', value: (r) => kindOf(r.kind.path)?.label ?? r.kind.path, narrow: false },
  {
    key: 'severity',
    label: 'Severity',
    value: (r) => (r.rule.severity ? SEVERITIES.indexOf(r.rule.severity) : null),
    narrow: true,
  },
  { key: 'enabled', label: 'Enabled', value: (r) => (r.rule.enabled === false ? 0 : 1), narrow: true },
  { key: 'last-alert', label: 'Last alert', value: (r) => r.health?.lastAlertAt ?? null, narrow: false },
  { key: 'alerts-24h', label: 'Alerts 24 h', value: (r) => r.health?.alertsLast24h ?? null, narrow: true },
  { key: 'last-error', label: 'Last rule error', value: (r) => r.health?.lastError?.time ?? null, narrow: true },
  { key: 'last-run', label: 'Last run', value: (r) => r.health?.lastRunAt ?? null, narrow: false },
  { key: 'next-run', label: 'Next run', value: (r) => r.health?.nextRunAt ?? null, narrow: false },
  { key: 'log-types', label: 'Log types', value: (r) => (r.rule.logTypes ?? []).join(', ') || null, narrow: false },
  {
    key: 'modified-by',
    label: 'Last modified by',
    value: (r) => actorText(r.rule.lastModifiedBy) || null,
    narrow: false,
  },
  { key: 'modified', label: 'Last modified', value: (r) => r.rule.lastModified ?? null, narrow: false },
]
export const SORT_KEYS = COLUMNS.map((c) => c.key)

/** Rows sorted by a column (`dir` asc or desc); rules without a value last either way, ties by id. */
export function sortRows(rows, key, dir) {
  const col = COLUMNS.find((c) => c.key === key) ?? COLUMNS[0]
  const sign = dir === 'desc' ? -1 : 1
  const keyed = rows.map((r) => [col.value(r), r])
  keyed.sort(([a, ra], [b, rb]) => {
    if (a === null || b === null) return a === b ? byText(ra.rule.id, rb.rule.id) : a === null ? 1 : -1
    const c = typeof a === 'number' && typeof b === 'number' ? a - b : byText(String(a), String(b))
    return c !== 0 ? sign * c : byText(ra.rule.id, rb.rule.id)
  })
  return keyed.map(([, r]) => r)
}

const healthCells = (health) => {
  if (!health) return ['', '', '', '', ''].map(() => h('td', { class: 'muted' }, '…'))
  const err = health.lastError
  return [
    h('td', { class: 'nowrap' }, fmtTime(health.lastAlertAt) || '—'),
    h('td', { class: 'num' }, String(health.alertsLast24h)),
    h(
      'td',
      { class: 'rule-error-cell' },
      err
        ? [
            h('span', { class: 'nowrap' }, fmtTime(err.time)),
            ' ',
            h('a', { href: `#/rule-errors?rule-id=${encodeURIComponent(health.ruleId)}` }, err.message),
          ]
        : '—',
    ),
    h('td', { class: 'nowrap' }, fmtTime(health.lastRunAt) || '—'),
    h('td', { class: 'nowrap' }, fmtTime(health.nextRunAt) || '—'),
  ]
}

/**
 * The table. `sort`: `{ key, dir }`; `onSort(key)`: a header pressed; `toggle(row)`: an Enabled
 * switch pressed; `selected`: the set of selected rule ids (kept across pages); `canManage`:
 * whether the toggles may be used (else disabled, described by `whyId`).
 */
export function rulesTable(rows, { sort, onSort, toggle, selected, onSelect, canManage, whyId }) {
  const header = COLUMNS.map((c) => {
    const sorted = sort.key === c.key
    return h(
      'th',
      {
        scope: 'col',
        class: c.narrow ? null : 'wide-only',
        'aria-sort': sorted ? (sort.dir === 'desc' ? 'descending' : 'ascending') : undefined,
      },
      h(
        'button',
        { type: 'button', class: 'sort', 'data-sort': c.key, onclick: () => onSort(c.key) },
        c.label,
        h('span', { 'aria-hidden': 'true', class: 'sort-mark' }, sorted ? (sort.dir === 'desc' ? ' ▼' : ' ▲') : ''),
      ),
    )
  })
  const body = rows.map((row) => {
    const { kind, rule } = row
    const box = h('input', {
      type: 'checkbox',
      class: 'select-rule',
      'aria-label': `Select ${rule.id}`,
      value: rule.id,
      checked: selected.has(`${kind.path}\u0000${rule.id}`),
      onchange: (e) => onSelect(row, e.target.checked),
    })
    const enabled = rule.enabled !== false
    // A switch (its name stays `Enabled: <id>`, its state is checked or not); the word beside it is
    // for the eye. The box shows the rule as written until a write succeeds (rule-toggle.js).
    const toggleSwitch = h('input', {
      type: 'checkbox',
      role: 'switch',
      class: 'toggle',
      checked: enabled,
      'aria-label': `Enabled: ${rule.id}`,
      disabled: !canManage,
      'aria-describedby': canManage ? undefined : whyId,
      onchange: (e) => {
        e.currentTarget.checked = enabled
        toggle(row)
      },
    })
    const toggleCell = h(
      'span',
      { class: 'toggle-cell' },
      toggleSwitch,
      h('span', { 'aria-hidden': 'true' }, enabled ? 'yes' : 'no'),
    )
    const cells = [
      h(
        'td',
        { class: 'id-cell' },
        // The link first: the cell's text is the id, and Tab reaches the rule before its box.
        h('a', { href: ruleHref(kind.path, rule.id) }, rule.id),
        box,
      ),
      h('td', null, rule.displayName ?? ''),
      h('td', null, kindOf(kind.path)?.label ?? kind.path),
      // Queries have no severity.
      h('td', null, rule.severity ? h('span', { class: `sev sev-${rule.severity}` }, rule.severity) : ''),
      h('td', null, toggleCell),
      ...healthCells(row.health),
      h('td', null, (rule.logTypes ?? []).join(', ')),
      h('td', null, actorText(rule.lastModifiedBy)),
      h('td', { class: 'nowrap' }, fmtTime(rule.lastModified)),
    ]
    cells.forEach((td, i) => {
      if (!COLUMNS[i].narrow) td.classList.add('wide-only')
    })
    return h('tr', { 'data-rule': `${kind.path}\u0000${rule.id}` }, cells)
  })
  return h(
    'table',
    { class: 'list rules-list' },
    h('caption', { class: 'sr-only' }, 'Rules'),
    h('thead', null, h('tr', null, header)),
    h('tbody', null, body),
  )
}
