// What a rule's pages share (its page, rule.js, and its History tab, history.js): the header with
// the crumbs, the id and the rule's severity and state, and the tabs between its views.
import { h } from '../dom.js'

export function tabs(kindPath, id, current) {
  const base = `#/rules/${encodeURIComponent(kindPath)}/${encodeURIComponent(id)}`
  const tab = (name, href) =>
    h('a', { href, class: 'tab', 'aria-current': name === current ? 'page' : undefined }, name)
  return h(
    'nav',
    { class: 'tabs', 'aria-label': 'Rule views' },
    tab('Rule', base),
    tab('History', `${base}/history`),
    // The rule's errors on stored records: the rule-errors page, filtered to this rule.
    tab('Rule errors', `#/rule-errors?${new URLSearchParams({ 'rule-id': id })}`),
  )
}

export function ruleHeader(kind, id, rule) {
  return h(
    'div',
    { class: 'rule-head' },
    h('p', { class: 'crumbs' }, h('a', { href: '#/rules' }, 'Rules'), ` / ${kind.label}`),
    h('h1', { tabindex: '-1' }, id),
    rule
      ? h(
          'p',
          { class: 'sub' },
          h('span', { class: `sev sev-${rule.severity}` }, rule.severity),
          ` ${rule.enabled === false ? 'disabled' : 'enabled'} · ${rule.displayName || 'no display name'}`,
        )
      : null,
  )
}
