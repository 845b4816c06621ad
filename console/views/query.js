// The query page (`#/query[?sql=…]`): SQL over the stored events through `POST /queries` (Query
// Data), its columns and rows in a table, a page at a time (the next page replaces the one shown, so
// the page holds one server page — at most queries.maxPageBytes — and a long value is shown cut),
// DuckDB's errors with their line and column. The alert page links here with its events' SQL.
import { api, permissions } from '../api.js'
import { field, h, message, onSubmit, replace, submitButton } from '../dom.js'

const EXAMPLE = `SELECT p_event_time, user_email, p_row_id
FROM editor_audit
WHERE p_occurs_since('1 hour')
ORDER BY p_event_time DESC`

/** Characters of one value shown in a cell (the rest is counted, not kept in the page). */
const CELL_CHARS = 500

function cellText(v) {
  const text = v === null ? 'NULL' : typeof v === 'string' ? v : JSON.stringify(v)
  return text.length > CELL_CHARS ? `${text.slice(0, CELL_CHARS)}… (${text.length - CELL_CHARS} more characters)` : text
}

function resultTable(page, firstRow) {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'list query-rows' },
      h('caption', null, page.rows.length === 0 ? 'No rows' : `Rows ${firstRow + 1}–${firstRow + page.rows.length}`),
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          page.columns.map((c) => h('th', { scope: 'col', title: c.type }, c.name)),
        ),
      ),
      h(
        'tbody',
        null,
        page.rows.map((row) =>
          h(
            'tr',
            null,
            page.columns.map((c) => h('td', { class: 'value' }, cellText(row[c.name]))),
          ),
        ),
      ),
    ),
  )
}

function errorText(r) {
  const b = r.body ?? {}
  const at = b.line ? ` (line ${b.line}${b.column ? `, column ${b.column}` : ''})` : ''
  return `${b.message ?? `HTTP ${r.status}`}${at} (HTTP ${r.status})`
}

export async function queryView(main, _params, query) {
  document.title = 'Query · rulekeeper'
  const perms = await permissions()
  const sql = h('textarea', { rows: '8', spellcheck: 'false', class: 'sql' })
  sql.value = query.get('sql') ?? EXAMPLE
  const out = h('div', { 'aria-live': 'polite' })
  // The SQL of the page shown, its cursor to the next page, and the row the page starts at.
  let shown = { sql: '', next: null, first: 0 }

  async function run(cursor) {
    const text = cursor ? shown.sql : sql.value
    replace(out, message('info', 'Running…'))
    const r = await api('POST', '/queries', { body: cursor ? { sql: text, cursor } : { sql: text } })
    if (!r.ok) return replace(out, message('error', errorText(r)))
    const first = cursor ? shown.first + (shown.count ?? 0) : 0
    shown = { sql: text, next: r.body.next, first, count: r.body.rows.length }
    replace(
      out,
      resultTable(r.body, first),
      r.body.next
        ? h('p', { class: 'pager' }, h('button', { type: 'button', onclick: () => run(shown.next) }, 'Next page'))
        : h('p', null, 'No more rows.'),
    )
  }

  replace(
    main,
    h('h1', { tabindex: '-1' }, 'Query'),
    h(
      'p',
      null,
      'Read-only SQL (DuckDB, with Panther’s time macros) over the stored events: one table per log type, e.g. ',
      h('code', null, 'editor_audit'),
      '.',
    ),
    h(
      'form',
      { onsubmit: onSubmit(() => run(null)) },
      field('SQL', sql),
      submitButton('Run', perms.queryData, 'query-why', 'Your token lacks the Query Data permission.'),
    ),
    out,
  )
}

/**
 * The SQL of "events around this alert": its (first) log type's table, 15 minutes either side of its
 * first event. `table` is the log type’s table as `GET /log-types` names it.
 */
export function eventsAroundSql(table, firstEventTime) {
  return `SELECT *
FROM ${table}
WHERE p_occurs_around('${firstEventTime}', '15 minutes')
ORDER BY p_event_time`
}
