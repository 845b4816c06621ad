// Every rule of every kind in one list: every kind's list (policies too) is asked with the same filters and
// merged by id (each kind's pages are in id order, so the merge is too), paged 50 at a time.
import { api, SignedOut } from '../api.js'
import { actorText, field, fmtTime, h, message, replace, select, onSubmit } from '../dom.js'
import { kinds as allKinds, kindOf, logTypeNames, SEVERITIES } from '../kinds.js'

const PAGE = 50

/** One kind's list as a stream: a buffer of rules and the cursor of the page after it. */
class KindStream {
  constructor(kind, query) {
    this.kind = kind
    this.query = query
    this.buf = []
    this.next = undefined // undefined: not asked yet; null: no more pages
    this.error = null
  }
  /** Fills the buffer to `n` rules or the end of the list. */
  async fill(n) {
    while (this.buf.length < n && this.next !== null && !this.error) {
      const q = { ...this.query, limit: String(Math.max(100, n)) }
      if (this.next) q.cursor = this.next
      const r = await api('GET', `/${this.kind.path}`, { query: q })
      if (!r.ok) {
        this.error = `${this.kind.label}: ${r.body?.message ?? `HTTP ${r.status}`}`
        return
      }
      for (const rule of r.body.results) this.buf.push({ kind: this.kind, rule })
      this.next = r.body.next ?? null
    }
  }
}

/** The next `n` rules of the merged lists. */
async function nextPage(streams, n) {
  await Promise.all(streams.map((s) => s.fill(n)))
  const out = []
  while (out.length < n) {
    let best = null
    for (const s of streams) if (s.buf.length && (!best || s.buf[0].rule.id < best.buf[0].rule.id)) best = s
    if (!best) break
    out.push(best.buf.shift())
  }
  return out
}

export async function rulesView(main, _params, query) {
  document.title = 'Rules · rulekeeper'
  const q = (k) => query.get(k) ?? ''
  const search = h('input', { type: 'search', name: 'q', value: q('q'), autocomplete: 'off' })
  const kind = select([['', 'All kinds'], ...allKinds().map((k) => [k.path, k.label])], q('kind'))
  const severity = select([['', 'Any severity'], ...SEVERITIES.map((s) => [s, s])], q('severity'))
  const state = select(
    [
      ['', 'Enabled or disabled'],
      ['enabled', 'Enabled'],
      ['disabled', 'Disabled'],
    ],
    q('state'),
  )
  const tag = h('input', { type: 'text', value: q('tag'), autocomplete: 'off' })
  // Any log type may be typed (a rule may name one this server does not ingest); the server's are offered.
  const logTypeList = h(
    'datalist',
    { id: 'log-type-list' },
    logTypeNames().map((n) => h('option', { value: n })),
  )
  const logType = h('input', { type: 'text', value: q('log-type'), autocomplete: 'off', list: 'log-type-list' })
  const filters = () => {
    const p = new URLSearchParams()
    const set = (k, v) => v && p.set(k, v)
    set('q', search.value.trim())
    set('kind', kind.value)
    set('severity', severity.value)
    set('state', state.value)
    set('tag', tag.value.trim())
    set('log-type', logType.value.trim())
    return p
  }
  // The filters stay on the page (and keep the focus); the URL follows them so a view is bookmarkable.
  const apply = () => {
    const p = filters()
    history.replaceState(null, '', `#/rules${p.size ? `?${p}` : ''}`)
    load(p)
  }
  let debounce
  search.addEventListener('input', () => {
    clearTimeout(debounce)
    debounce = setTimeout(apply, 300)
  })
  const form = h(
    'form',
    { class: 'filters', role: 'search', onsubmit: onSubmit(apply) },
    field('Search rules', search, 'Id or display name'),
    field('Kind', kind),
    field('Severity', severity),
    field('State', state),
    field('Tag', tag),
    field('Log type', logType),
    logTypeList,
    h('button', { type: 'submit' }, 'Filter'),
  )
  for (const s of [kind, severity, state]) s.addEventListener('change', apply)

  const table = h('div', { class: 'table-wrap' })
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' })
  const notes = h('div')
  replace(
    main,
    h(
      'div',
      { class: 'title-row' },
      h('h1', { tabindex: '-1' }, 'Rules'),
      h('a', { class: 'button', href: '#/new' }, 'New rule'),
    ),
    form,
    notes,
    table,
    pager,
  )
  // One list per filter: a list still loading for older filters fills its own pages, never the new one's.
  let list = { streams: [], pages: [] }
  let loading = 0
  async function load(p) {
    const get = (k) => p.get(k) ?? ''
    const apiQuery = {}
    if (get('q')) apiQuery['name-contains'] = get('q')
    if (get('severity')) apiQuery.severity = get('severity')
    if (get('state')) apiQuery.state = get('state')
    if (get('tag')) apiQuery.tag = get('tag')
    if (get('log-type')) apiQuery['log-type'] = get('log-type')
    const kinds = allKinds().filter(
      (k) => (!get('kind') || k.path === get('kind')) && (!get('log-type') || k.logTypeFilter),
    )
    list = { streams: kinds.map((k) => new KindStream(k, apiQuery)), pages: [] }
    await show(0, ++loading)
  }
  async function show(i, run = loading, refocus = '') {
    const { streams, pages } = list
    try {
      while (pages.length <= i) pages.push(await nextPage(streams, PAGE))
    } catch (e) {
      if (e instanceof SignedOut) throw e
      replace(notes, message('error', `The list could not be read: ${e.message}`))
      return
    }
    if (run !== loading) return // a newer filter's list is on its way
    const rows = pages[i]
    const errors = streams.filter((s) => s.error).map((s) => s.error)
    replace(notes, errors.length ? message('error', errors.join('; ')) : null)
    replace(table, rows.length ? rulesTable(rows) : h('p', { class: 'empty' }, 'No rule matches.'))
    const more = streams.some((s) => s.buf.length || s.next !== null) || pages.length > i + 1
    const first = i * PAGE + 1
    replace(
      pager,
      h(
        'button',
        { type: 'button', disabled: i === 0, onclick: () => show(i - 1, loading, 'Previous page') },
        'Previous page',
      ),
      h('span', { 'aria-live': 'polite' }, rows.length ? `Rules ${first}–${first + rows.length - 1}` : ''),
      h(
        'button',
        { type: 'button', disabled: !more || rows.length < PAGE, onclick: () => show(i + 1, loading, 'Next page') },
        'Next page',
      ),
    )
    // Paging by keyboard: the focus stays on the pager (the button pressed, else the other one).
    if (refocus)
      [...pager.querySelectorAll('button:not([disabled])')]
        .sort((a) => (a.textContent === refocus ? -1 : 1))[0]
        ?.focus()
  }
  await load(query)
}

export const ruleHref = (kindPath, id) => `#/rules/${encodeURIComponent(kindPath)}/${encodeURIComponent(id)}`

function rulesTable(rows) {
  return h(
    'table',
    { class: 'list' },
    h('caption', { class: 'sr-only' }, 'Rules'),
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        ['Id', 'Display name', 'Kind', 'Severity', 'Enabled', 'Log types', 'Last modified by', 'Last modified'].map(
          (c) => h('th', { scope: 'col' }, c),
        ),
      ),
    ),
    h(
      'tbody',
      null,
      rows.map(({ kind, rule }) =>
        h(
          'tr',
          null,
          h('td', null, h('a', { href: ruleHref(kind.path, rule.id) }, rule.id)),
          h('td', null, rule.displayName ?? ''),
          h('td', null, kindOf(kind.path).label),
          // Queries have no severity.
          h('td', null, rule.severity ? h('span', { class: `sev sev-${rule.severity}` }, rule.severity) : ''),
          h('td', null, rule.enabled === false ? 'no' : 'yes'),
          h('td', null, (rule.logTypes ?? []).join(', ')),
          h('td', null, actorText(rule.lastModifiedBy)),
          h('td', null, fmtTime(rule.lastModified)),
        ),
      ),
    ),
  )
}
