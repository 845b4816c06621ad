// A code editor without a library: a plain <textarea> (so typing, undo, selection and screen readers
// work as in any field) laid over a highlighted copy of its text, with line numbers and marks on the
// lines that have problems. Tab leaves the field as everywhere else (no keyboard trap).
import { h, newId } from './dom.js'
import { escapeHtml, highlight } from './highlight.js'

/**
 * `codeEditor({ label, lang, value, readOnly })` → `{ el, value(), set(text), mark(lines), focusLine(n) }`.
 * `mark` takes `[{ line, message }]` (1-based lines).
 */
export function codeEditor({ label, lang, value = '', readOnly = false, readOnlyReason }) {
  const id = newId('code')
  const textarea = h('textarea', {
    id,
    class: 'code-input',
    spellcheck: 'false',
    autocapitalize: 'off',
    autocomplete: 'off',
    wrap: 'off',
    readonly: readOnly,
    'aria-describedby': readOnlyReason ? `${id}-why` : undefined,
  })
  textarea.value = value
  const hl = h('pre', { class: 'code-hl', 'aria-hidden': 'true' })
  const gutter = h('pre', { class: 'code-gutter', 'aria-hidden': 'true' })
  const area = h('div', { class: 'code-area' }, gutter, hl, textarea)
  const el = h(
    'div',
    { class: 'editor' },
    h('label', { for: id }, label),
    readOnlyReason ? h('small', { id: `${id}-why`, class: 'hint' }, readOnlyReason) : null,
    h('div', { class: 'code-scroll' }, area),
  )
  let marks = new Map()
  const render = () => {
    const text = textarea.value
    // A trailing newline keeps the last (empty) line's height in the highlighted copy.
    hl.innerHTML = `${highlight(lang, text)}\n`
    const n = text.split('\n').length
    textarea.rows = n
    const nums = []
    for (let i = 1; i <= n; i++)
      nums.push(marks.has(i) ? `<span class="mark" title="${escapeHtml(marks.get(i))}">${i}</span>` : String(i))
    gutter.innerHTML = nums.join('\n')
  }
  textarea.addEventListener('input', render)
  render()
  return {
    el,
    textarea,
    value: () => textarea.value,
    set(text) {
      textarea.value = text
      render()
    },
    mark(list) {
      marks = new Map(list.filter((p) => p.line).map((p) => [p.line, p.message]))
      render()
    },
    /** Puts the caret at the start of line `n` and focuses the field. */
    focusLine(n) {
      const lines = textarea.value.split('\n')
      let pos = 0
      for (let i = 0; i < n - 1 && i < lines.length; i++) pos += lines[i].length + 1
      textarea.focus()
      textarea.setSelectionRange(pos, pos)
      const lineHeight = textarea.scrollHeight / Math.max(lines.length, 1)
      el.querySelector('.code-scroll').scrollTop = Math.max(0, (n - 3) * lineHeight)
    },
  }
}
