// DOM building without HTML strings: every text from the API becomes a text node, so a rule or an
// alert can never inject markup. `h(tag, attrs, ...children)`; `on<Event>` attributes add listeners.

/** @param {string} tag @param {Record<string, unknown> | null} [attrs] @param {...unknown} children */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2).toLowerCase(), v)
    else if (k === 'class') el.className = String(v)
    else if (k === 'value') el.value = v
    else el.setAttribute(k, v === true ? '' : String(v))
  }
  append(el, children)
  return el
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue
    if (Array.isArray(c)) append(el, c)
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)))
  }
}

/**
 * A form's submit button, disabled with the reason shown beside it (and named by
 * aria-describedby) when the token lacks the permission: `[button, reason | null]`.
 */
export function submitButton(label, allowed, reasonId, reason) {
  return [
    h('button', { type: 'submit', disabled: !allowed, 'aria-describedby': allowed ? undefined : reasonId }, label),
    allowed ? null : h('small', { id: reasonId, class: 'hint' }, reason),
  ]
}

/** Replaces the content of `el` with `children`. */
export function replace(el, ...children) {
  el.replaceChildren()
  append(el, children)
}

let uid = 0
/** A fresh element id (labels point at their control with it). */
export const newId = (prefix) => `${prefix}-${++uid}`

/** A labelled control: `<div class="field"><label for>…</label>control</div>`. */
export function field(label, control, hint) {
  if (!control.id) control.id = newId('f')
  const hintEl = hint ? h('small', { id: `${control.id}-hint`, class: 'hint' }, hint) : null
  if (hintEl) control.setAttribute('aria-describedby', hintEl.id)
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control, hintEl)
}

/** A `<select>` of `[value, label]` options. */
export function select(options, value) {
  return h(
    'select',
    null,
    options.map(([v, l]) => h('option', { value: v, selected: v === value }, l)),
  )
}

/** A message box: `kind` is `error` (an alert for screen readers), `ok` or `info` (a status). */
export function message(kind, ...children) {
  return h('div', { class: `msg msg-${kind}`, role: kind === 'error' ? 'alert' : 'status' }, ...children)
}

export const fmtTime = (t) => (t ? t.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '')
export const actorText = (a) => (a ? `${a.id}${a.type ? ` (${a.type})` : ''}` : '')

/** A form's submit handler: the page does not reload, `fn` runs. */
export const onSubmit = (fn) => (e) => {
  e.preventDefault()
  fn()
}
