// Every rule of every kind in one list: every kind's list (policies too) is asked with the same filters and
// merged by id (each kind's pages are in id order, so the merge is too), paged 50 at a time, each page
// with its rules' health (`GET /rule-health`). Sorted by another column (a header pressed: `sort` and
// `dir` in the address, beside the filters), the whole filtered list and every rule's health are read
// first. The table is rules-table.js; enabling and disabling, one rule or the selected ones, rule-toggle.js.
import { api, permissions, SignedOut } from '../api.js'
import { field, h, message, replace, select, onSubmit } from '../dom.js'
import { kinds as allKinds, logTypeNames, SEVERITIES } from '../kinds.js'
import { keyOf, toggleBar } from './rule-toggle.js'
import { rulesTable, SORT_KEYS, sortRows } from './rules-table.js'

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
      const q = { ...this.query, limit: String(Math.min(1000, Math.max(100, n))) }
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

/** The health of the rules of `rows` (the page's, or every served rule's when `all`), set on each row. */
async function addHealth(rows, all) {
  const byId = new Map()
  let cursor
  do {
    const query = { limit: '1000' }
    if (!all) query['rule-id'] = rows.map((r) => r.rule.id)
    if (cursor) query.cursor = cursor
    const r = await api('GET', '/rule-health', { query })
    if (!r.ok) return `Rule health could not be read: ${r.body?.message ?? `HTTP ${r.status}`}`
    for (const x of r.body.results) byId.set(x.ruleId, x)
    cursor = all ? r.body.next : null
  } while (cursor)
  for (const row of rows) row.health = byId.get(row.rule.id) ?? null
  return null
}

export async function rulesView(main, _params, query) {
  document.title = 'Rules · rulekeeper'
  const permsP = permissions()
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
  const sort = {
    key: SORT_KEYS.includes(q('sort')) ? q('sort') : 'id',
    dir: q('dir') === 'desc' ? 'desc' : 'asc',
  }
  const filters = () => {
    const p = new URLSearchParams()
    const set = (k, v) => v && p.set(k, v)
    set('q', search.value.trim())
    set('kind', kind.value)
    set('severity', severity.value)
    set('state', state.value)
    set('tag', tag.value.trim())
    set('log-type', logType.value.trim())
    if (sort.key !== 'id' || sort.dir !== 'asc') {
      p.set('sort', sort.key)
      p.set('dir', sort.dir)
    }
    return p
  }
  // The filters stay on the page (and keep the focus); the URL follows them so a view is bookmarkable.
  const apply = (refocus = '') => {
    const p = filters()
    history.replaceState(null, '', `#/rules${p.size ? `?${p}` : ''}`)
    load(p, refocus)
  }
  let debounce
  search.addEventListener('input', () => {
    clearTimeout(debounce)
    debounce = setTimeout(apply, 300)
  })
  const form = h(
    'form',
    { class: 'filters', role: 'search', onsubmit: onSubmit(() => apply()) },
    field('Search rules', search, 'Id or display name'),
    field('Kind', kind),
    field('Severity', severity),
    field('State', state),
    field('Tag', tag),
    field('Log type', logType),
    logTypeList,
    h('button', { type: 'submit' }, 'Filter'),
  )
  for (const s of [kind, severity, state]) s.addEventListener('change', () => apply())

  const table = h('div', { class: 'table-wrap' })
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' })
  const notes = h('div')
  // One list per filter: a list still loading for older filters fills its own pages, never the new one's.
  let list = { streams: [], pages: [], shown: 0 }
  const selected = new Map()
  // The toggles need the token's permissions: asked beside the list's first page, not before it.
  const barBox = h('div')
  let perms = null
  let bar = null
  const ready = permsP.then((p) => {
    perms = p
    bar = toggleBar({
      canManage: perms.manageRules,
      rows: () => list.pages[list.shown] ?? [],
      selected,
      changed(row, saved) {
        // The row's fields as saved (the list's representation holds fewer than the rule's).
        row.rule = Object.fromEntries(Object.keys(row.rule).map((k) => [k, k in saved ? saved[k] : row.rule[k]]))
        row.rule.enabled = saved.enabled
        render(list.shown)
      },
    })
    replace(barBox, bar.el, bar.out)
  })
  replace(
    main,
    h(
      'div',
      { class: 'title-row' },
      h('h1', { tabindex: '-1' }, 'Rules'),
      h('a', { class: 'button', href: '#/new' }, 'New rule'),
    ),
    form,
    barBox,
    notes,
    table,
    pager,
  )
  let loading = 0
  async function load(p, refocus = '') {
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
    selected.clear()
    list = { streams: kinds.map((k) => new KindStream(k, apiQuery)), pages: [], shown: 0, health: [] }
    const run = ++loading
    if (sort.key !== 'id' || sort.dir !== 'asc') {
      // Sorted by another column: every rule of the filters and every rule's health, then pages of the sorted rows.
      const { streams } = list
      let rows
      try {
        rows = await nextPage(streams, Number.POSITIVE_INFINITY)
      } catch (e) {
        if (e instanceof SignedOut) throw e
        return replace(notes, message('error', `The list could not be read: ${e.message}`))
      }
      const problem = await addHealth(rows, true)
      if (run !== loading) return
      list.healthProblem = problem
      const sorted = sortRows(rows, sort.key, sort.dir)
      for (let i = 0; i < sorted.length || i === 0; i += PAGE) list.pages.push(sorted.slice(i, i + PAGE))
    }
    await show(0, run, refocus)
  }
  function onSort(key) {
    sort.dir = sort.key === key && sort.dir === 'asc' ? 'desc' : 'asc'
    sort.key = key
    apply(key)
  }
  async function show(i, run = loading, refocus = '') {
    const { streams, pages } = list
    try {
      while (pages.length <= i) {
        const rows = await nextPage(streams, PAGE)
        list.healthProblem = rows.length ? await addHealth(rows, false) : null
        pages.push(rows)
      }
    } catch (e) {
      if (e instanceof SignedOut) throw e
      replace(notes, message('error', `The list could not be read: ${e.message}`))
      return
    }
    await ready
    if (run !== loading) return // a newer filter's list is on its way
    list.shown = i
    render(i, refocus)
  }
  function render(i, refocus = '') {
    const { streams, pages } = list
    const rows = pages[i]
    const errors = streams.filter((s) => s.error).map((s) => s.error)
    if (list.healthProblem) errors.push(list.healthProblem)
    replace(notes, errors.length ? message('error', errors.join('; ')) : null)
    replace(
      table,
      rows.length
        ? rulesTable(rows, {
            sort,
            onSort,
            toggle: (row) => bar.toggleOne(row, row.rule.enabled === false),
            selected,
            onSelect(row, on) {
              if (on) selected.set(keyOf(row), row)
              else selected.delete(keyOf(row))
              bar.sync()
            },
            canManage: perms.manageRules,
            whyId: 'toggle-why',
          })
        : h('p', { class: 'empty' }, 'No rule matches.'),
    )
    bar.sync()
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
    if (refocus === 'Previous page' || refocus === 'Next page')
      [...pager.querySelectorAll('button:not([disabled])')]
        .sort((a) => (a.textContent === refocus ? -1 : 1))[0]
        ?.focus()
    else if (refocus) table.querySelector(`th button[data-sort="${refocus}"]`)?.focus()
  }
  await load(query)
}
