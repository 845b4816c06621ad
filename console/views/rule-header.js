// What a rule's pages share (its page, rule.js, its History tab, history.js, and its Alerts, Rule
// errors and Runs tabs, rule-tabs.js): the header with the crumbs, the id and the rule's severity and
// state, and the tabs between its views (each its own address, so bookmarkable).
import { h } from '../dom.js'

export function tabs(kindPath, id, current) {
  const base = `#/rules/${encodeURIComponent(kindPath)}/${encodeURIComponent(id)}`
  const tab = (name, href) =>
    h('a', { href, class: 'tab', 'aria-current': name === current ? 'page' : undefined }, name)
  return h(
    'nav',
    { class: 'tabs', 'aria-label': 'Rule views' },
    tab('Rule', base),
    tab('Alerts', `${base}/alerts`),
    tab('Rule errors', `${base}/errors`),
    tab('Runs', `${base}/runs`),
    tab('History', `${base}/history`),
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
