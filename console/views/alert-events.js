// An alert's events as a table: the columns are chosen from the fields seen in the events shown
// (nested objects as dotted paths), by default p_event_time, p_log_type and the rule's GroupBy keys
// (else the first few fields); the choice is kept per user and log type in localStorage (a
// preference, never the token). Each row has a JSON toggle that shows the raw event below it.
import { h, replace } from '../dom.js'

/** Fields listed in the picker at most (events with thousands of keys stay usable). */
const MAX_FIELDS = 300
const FIXED = ['p_event_time', 'p_log_type']
const FIRST_FEW = 4

/** Every leaf of `v` as `[dotted path, value]`; arrays are leaves (shown as JSON). */
function leaves(v, prefix = '', out = new Map()) {
  for (const [k, x] of Object.entries(v ?? {})) {
    const path = prefix ? `${prefix}.${k}` : k
    if (x && typeof x === 'object' && !Array.isArray(x)) leaves(x, path, out)
    else if (!out.has(path)) out.set(path, x)
    if (out.size >= MAX_FIELDS) break
  }
  return out
}

const cellText = (v) => (v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v))

/** The keys of a rule's GroupBy text (`- Key: user_email` lines), the fields its dedup string is built from. */
export function groupByKeys(groupBy) {
  if (typeof groupBy !== 'string') return []
  return [...groupBy.matchAll(/^\s*-?\s*Key:\s*['"]?([^'"\n]+?)['"]?\s*$/gm)].map((m) => m[1])
}

const storeKey = (user, logType) => `rulekeeper.alert-columns.${user ?? 'anyone'}.${logType ?? ''}`

function saved(key) {
  try {
    const v = JSON.parse(localStorage.getItem(key) ?? 'null')
    return Array.isArray(v) && v.every((x) => typeof x === 'string') ? v : null
  } catch {
    return null
  }
}

/**
 * The events table of an alert: `{ events, user, logType, dedupFields }` → an element (the picker
 * and the table). `events` are the records as stored (`GET /alerts/{id}/events`).
 */
export function eventsTable({ events, user, logType, dedupFields }) {
  const rows = events.map((ev) => leaves(ev))
  const fields = []
  for (const r of rows) for (const k of r.keys()) if (!fields.includes(k) && fields.length < MAX_FIELDS) fields.push(k)
  const key = storeKey(user, logType)
  const fallback = () => {
    const fixed = FIXED.filter((f) => fields.includes(f))
    const dedup = dedupFields.filter((f) => fields.includes(f) && !fixed.includes(f))
    if (dedup.length) return [...fixed, ...dedup]
    return [...fixed, ...fields.filter((f) => !fixed.includes(f)).slice(0, FIRST_FEW)]
  }
  let columns = saved(key) ?? fallback()
  const wrap = h('div', { class: 'table-wrap' })
  const boxes = fields.map((f) =>
    h(
      'li',
      null,
      h(
        'label',
        null,
        h('input', {
          type: 'checkbox',
          value: f,
          checked: columns.includes(f),
          onchange(e) {
            // A field checked becomes the last column; one unchecked leaves; the others keep their order.
            columns = columns.filter((x) => x !== f)
            if (e.target.checked) columns.push(f)
            localStorage.setItem(key, JSON.stringify(columns))
            render()
          },
        }),
        ` ${f}`,
      ),
    ),
  )
  const reset = h(
    'button',
    {
      type: 'button',
      onclick() {
        localStorage.removeItem(key)
        columns = fallback()
        for (const li of boxes) {
          const box = li.querySelector('input')
          box.checked = columns.includes(box.value)
        }
        render()
      },
    },
    'Default columns',
  )
  const picker = h(
    'details',
    { class: 'columns' },
    h('summary', null, 'Columns'),
    h(
      'fieldset',
      null,
      h('legend', null, 'Columns of the events table'),
      h('ul', { class: 'column-list' }, boxes),
      reset,
    ),
  )
  function render() {
    const shown = columns.filter((c) => fields.includes(c))
    replace(
      wrap,
      h(
        'table',
        { class: 'list events' },
        h('caption', { class: 'sr-only' }, 'Events of the alert'),
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            shown.map((c) => h('th', { scope: 'col' }, c)),
            h('th', { scope: 'col' }, 'Event'),
          ),
        ),
        h(
          'tbody',
          null,
          events.map((ev, i) => {
            const raw = h('tr', { class: 'raw', hidden: true }, h('td', { colspan: String(shown.length + 1) }))
            const toggle = h(
              'button',
              {
                type: 'button',
                'aria-expanded': 'false',
                'aria-label': `JSON of event ${i + 1}`,
                onclick() {
                  const open = toggle.getAttribute('aria-expanded') !== 'true'
                  toggle.setAttribute('aria-expanded', String(open))
                  raw.hidden = !open
                  if (open && !raw.firstChild.firstChild)
                    raw.firstChild.append(
                      h(
                        'pre',
                        { class: 'code-view', tabindex: '0', 'aria-label': `Event ${i + 1}` },
                        JSON.stringify(ev, null, 2),
                      ),
                    )
                },
              },
              'JSON',
            )
            return [
              h(
                'tr',
                null,
                shown.map((c) => h('td', null, cellText(rows[i].get(c)))),
                h('td', null, toggle),
              ),
              raw,
            ]
          }),
        ),
      ),
    )
  }
  render()
  return h('div', { class: 'events-part' }, picker, wrap)
}
