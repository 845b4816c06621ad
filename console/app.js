// The console's entry: a hash router (`#/rules`, `#/rules/<kind>/<id>[/history]`, `#/new`, `#/status`,
// `#/alerts[/<id>]`, `#/rule-errors`, `#/query`, `#/plans[/<id>]`), the sign-in gate, the server's kinds and log types loaded before
// the first page, focus moved to each page's heading for keyboard and screen-reader users, and a
// confirmation before leaving a page with unsaved edits.
import { loadCatalog, SignedOut, session } from './api.js'
import { h, message, replace } from './dom.js'
import { clearLeaveGuard, confirmLeave } from './leave-guard.js'
import { rulesView } from './views/rules.js'
import { signInView } from './views/sign-in.js'

// The list is the first page most visits show: it is loaded with the app; every other view (and the
// YAML library the editors use) only when it is opened.
const lazy = (file, name) => async (main, params, query) => (await import(file))[name](main, params, query)
const ruleView = lazy('./views/rule.js', 'ruleView')
const newRuleView = lazy('./views/new-rule.js', 'newRuleView')
const statusView = lazy('./views/status.js', 'statusView')
const alertsView = lazy('./views/alerts.js', 'alertsView')
const alertView = lazy('./views/alert.js', 'alertView')
const ruleErrorsView = lazy('./views/rule-errors.js', 'ruleErrorsView')
const queryView = lazy('./views/query.js', 'queryView')
const planView = lazy('./views/plan.js', 'planView')

const main = document.getElementById('main')
const nav = document.getElementById('nav')

const ROUTES = [
  [/^\/rules$/, [], rulesView],
  [/^\/rules\/([^/]+)\/([^/]+)$/, ['kind', 'id'], ruleView],
  [/^\/rules\/([^/]+)\/([^/]+)\/(history|alerts|errors|runs)$/, ['kind', 'id', 'tab'], ruleView],
  [/^\/new$/, [], newRuleView],
  [/^\/status$/, [], statusView],
  [/^\/alerts$/, [], alertsView],
  [/^\/alerts\/([^/]+)$/, ['id'], alertView],
  [/^\/rule-errors$/, [], ruleErrorsView],
  [/^\/query$/, [], queryView],
  [/^\/plans$/, [], planView],
  [/^\/plans\/([^/]+)$/, ['id'], planView],
]

let generation = 0
/** The hash of the page shown: where a cancelled leave goes back to. */
let shownHash = location.hash
/**
 * Shows the page of the address. `main` is `aria-busy` until the newest navigation's page is drawn;
 * then `main.dataset.shown` names the address drawn (what a reader or a test waits for: the page
 * before stays on screen until the new one replaces it).
 */
async function route() {
  const gen = ++generation
  main.setAttribute('aria-busy', 'true')
  const hash = location.hash
  try {
    await showPage(gen)
  } finally {
    if (gen === generation) {
      main.removeAttribute('aria-busy')
      main.dataset.shown = hash
    }
  }
}

async function showPage(gen) {
  clearLeaveGuard()
  shownHash = location.hash
  const hash = location.hash.replace(/^#/, '') || '/rules'
  const [path, qs = ''] = hash.split('?')
  if (!session.token()) {
    nav.hidden = true
    if (path !== '/sign-in') sessionStorage.setItem('rulekeeper.after-sign-in', `#${hash}`)
    return signInView(main)
  }
  nav.hidden = false
  for (const a of nav.querySelectorAll('a'))
    a.toggleAttribute('aria-current', path.startsWith(a.getAttribute('href').slice(1)))
  for (const a of nav.querySelectorAll('a[aria-current]')) a.setAttribute('aria-current', 'page')
  const query = new URLSearchParams(qs)
  for (const [re, names, view] of ROUTES) {
    const m = re.exec(path)
    if (!m) continue
    const params = { query }
    names.forEach((n, i) => {
      params[n] = decodeURIComponent(m[i + 1])
    })
    try {
      // The server's kinds and log types, once a session: every view reads them (kinds.js).
      await loadCatalog()
      await view(main, params, query)
    } catch (e) {
      if (e instanceof SignedOut) return signInView(main, `Signed out: ${e.message}`)
      replace(main, h('h1', { tabindex: '-1' }, 'Something went wrong'), message('error', String(e?.message ?? e)))
    }
    // A newer navigation owns the focus.
    if (gen === generation && !main.contains(document.activeElement)) main.querySelector('h1')?.focus()
    return
  }
  if (path === '/sign-in') {
    location.hash = '#/rules'
    return
  }
  replace(main, h('h1', { tabindex: '-1' }, 'Not found'), h('p', null, h('a', { href: '#/rules' }, 'All rules')))
}

document.getElementById('sign-out').addEventListener('click', () => {
  if (!confirmLeave()) return
  clearLeaveGuard()
  session.signOut()
  if (location.hash === '#/sign-in') route()
  else location.hash = '#/sign-in'
})
// A link within the console asks before the browser moves: staying then leaves no history entry.
document.addEventListener(
  'click',
  (e) => {
    const a = e.target instanceof Element ? e.target.closest('a[href^="#/"]') : null
    if (!a || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return
    if (a.getAttribute('href') === location.hash) return
    if (confirmLeave()) clearLeaveGuard()
    else e.preventDefault()
  },
  true,
)
// Back, Forward or a typed address: the move has happened; staying puts the page's address back
// (replacing the entry, so no new hashchange).
window.addEventListener('hashchange', () => {
  // An in-page anchor (the skip link's `#main`) is no page: the address goes back, the focus moves.
  if (location.hash && !location.hash.startsWith('#/')) {
    const target = document.getElementById(decodeURIComponent(location.hash.slice(1)))
    history.replaceState(null, '', shownHash || location.pathname)
    target?.focus()
    return
  }
  if (!confirmLeave()) return history.replaceState(null, '', shownHash || location.pathname)
  route()
})
route()
