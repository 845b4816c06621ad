// Rule errors (`#/rule-errors?rule-id=&since=`): one entry per rule and error text, the latest first
// (the API's /rule-errors/groups), each with its rule (a link to the rule's page), how many times
// and when, the message with its traceback, and the record that caused the latest one, fetched
// through the API (/rule-errors/record) when asked for. Filters by rule id and time, older pages.
import { api } from '../api.js'
import { field, fmtTime, h, message, onSubmit, replace } from '../dom.js'
import { ruleHrefOfKind } from '../kinds.js'

function recordPart(e, n) {
  if (!e.record)
    return h('p', { class: 'hint' }, 'No record: the rule could not be compiled, or the error is of a correlation run.')
  const out = h('div', { 'aria-live': 'polite' })
  const button = h(
    'button',
    {
      type: 'button',
      'aria-expanded': 'false',
      async onclick() {
        if (button.getAttribute('aria-expanded') === 'true') {
          button.setAttribute('aria-expanded', 'false')
          button.textContent = 'Show record'
          return replace(out)
        }
        const r = await api('GET', '/rule-errors/record', {
          query: { partition: e.record.partition, offset: String(e.record.offset) },
        })
        if (!r.ok) return replace(out, message('error', `${r.body?.message} (HTTP ${r.status})`))
        button.setAttribute('aria-expanded', 'true')
        button.textContent = 'Hide record'
        replace(
          out,
          h(
            'pre',
            { class: 'code-view', tabindex: '0', 'aria-label': `Record of error ${n}` },
            JSON.stringify(r.body, null, 2),
          ),
        )
      },
    },
    'Show record',
  )
  return h(
    'div',
    null,
    h('p', { class: 'sub' }, `Latest record: ${e.record.partition} at byte ${e.record.offset} `, button),
    out,
  )
}

export function entry(e, n) {
  const times =
    e.count === 1 ? `at ${fmtTime(e.lastTime)}` : `last ${fmtTime(e.lastTime)}, first ${fmtTime(e.firstTime)}`
  return h(
    'li',
    { class: 'rule-error' },
    h('h2', null, e.ruleKind ? h('a', { href: ruleHrefOfKind(e.ruleKind, e.ruleId) }, e.ruleId) : e.ruleId),
    h(
      'p',
      { class: 'sub' },
      h('strong', null, `${e.count} ${e.count === 1 ? 'error' : 'errors'}`),
      ` ${times}`,
      e.revision ? ` · revision ${e.revision.slice(0, 10)}` : '',
      e.ruleKind ? '' : ' · no rule has this id now',
    ),
    h('pre', { class: 'code-view', tabindex: '0', 'aria-label': `Error ${n}` }, e.error),
    recordPart(e, n),
  )
}

export async function ruleErrorsView(main, _params, query) {
  document.title = 'Rule errors · rulekeeper'
  const q = (k) => query.get(k) ?? ''
  const rule = h('input', { type: 'text', value: q('rule-id'), autocomplete: 'off' })
  const since = h('input', {
    type: 'text',
    value: q('since'),
    autocomplete: 'off',
    placeholder: '2026-11-20T08:00:00Z',
  })
  const apply = () => {
    const p = new URLSearchParams()
    if (rule.value.trim()) p.set('rule-id', rule.value.trim())
    if (since.value.trim()) p.set('since', since.value.trim())
    location.hash = `#/rule-errors${p.size ? `?${p}` : ''}`
  }
  const form = h(
    'form',
    { class: 'filters', role: 'search', onsubmit: onSubmit(apply) },
    field('Rule id', rule),
    field('Since', since, 'RFC 3339 time'),
    h('button', { type: 'submit' }, 'Filter'),
  )
  const apiQuery = { limit: '20' }
  for (const k of ['rule-id', 'since', 'cursor']) if (q(k)) apiQuery[k] = q(k)
  const r = await api('GET', '/rule-errors/groups', { query: apiQuery })
  const head = h('h1', { tabindex: '-1' }, 'Rule errors')
  const intro = h(
    'p',
    { class: 'sub' },
    'Errors of rules evaluating stored records (an exception, a rule that cannot be compiled, a correlation run that failed), one entry per rule and message, the latest first.',
  )
  if (!r.ok) return replace(main, head, intro, form, message('error', `${r.body?.message} (HTTP ${r.status})`))
  const nextQuery = new URLSearchParams(query)
  if (r.body.next) nextQuery.set('cursor', r.body.next)
  const firstQuery = new URLSearchParams(query)
  firstQuery.delete('cursor')
  replace(
    main,
    head,
    intro,
    form,
    r.body.results.length
      ? h(
          'ol',
          { class: 'rule-errors' },
          r.body.results.map((e, i) => entry(e, i + 1)),
        )
      : h('p', { class: 'empty' }, 'No rule error matches.'),
    h(
      'nav',
      { class: 'pager', 'aria-label': 'Pages' },
      q('cursor') ? h('a', { href: `#/rule-errors${firstQuery.size ? `?${firstQuery}` : ''}` }, 'Latest') : null,
      r.body.next ? h('a', { href: `#/rule-errors?${nextQuery}` }, 'Older errors') : null,
    ),
  )
}
