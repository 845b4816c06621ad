// A rule's History tab (api.md "History, restore and optimistic concurrency"): its commits newest
// first (actor, time, reason, change), the diff of each against its parent, the rule at a revision,
// and Restore (a new commit; a change reason, and If-Match with the ETag of the rule as it was when
// the history was shown, so a change made since is a 412, not overwritten).
import { api, permissions, reasonHeaders, reasonProblem, rulePath } from '../api.js'
import { actorText, field, fmtTime, h, message, replace } from '../dom.js'
import { highlightDiff } from '../highlight.js'
import { ruleHeader, tabs } from './rule-header.js'

const short = (rev) => (rev ? rev.slice(0, 10) : '')

export async function historyPanel(main, kind, id, params) {
  document.title = `History of ${id} · rulekeeper`
  const base = rulePath(kind.path, id)
  const body = h('div')
  replace(main, ruleHeader(kind, id), tabs(kind.path, id, 'History'), body)
  const query = {}
  if (params.query?.get('cursor')) query.cursor = params.query.get('cursor')
  // The rule's ETag as the history is shown: a restore over a version changed since is a 412.
  const [r, perms, current] = await Promise.all([
    api('GET', `${base}/history`, { query }),
    permissions(),
    api('GET', base),
  ])
  let shownEtag = current.ok ? current.headers.get('ETag') : null
  if (!r.ok) return replace(body, message('error', `${r.body?.message} (HTTP ${r.status})`))
  const detail = h('div', { class: 'history-detail', 'aria-live': 'polite' })
  const rows = r.body.results.map((c) =>
    h(
      'tr',
      null,
      h('td', null, fmtTime(c.time)),
      h('td', null, actorText(c.actor), c.authorName ? h('div', { class: 'hint' }, c.authorName) : null),
      h('td', null, c.change),
      h('td', { class: 'reason' }, c.reason ?? ''),
      h('td', null, h('code', null, short(c.revision))),
      h(
        'td',
        { class: 'row-actions' },
        h(
          'button',
          { type: 'button', onclick: () => showDiff(c), 'aria-label': `Diff of ${short(c.revision)}` },
          'Diff',
        ),
        c.change === 'deleted'
          ? null
          : h(
              'button',
              { type: 'button', onclick: () => showVersion(c), 'aria-label': `View at ${short(c.revision)}` },
              'View',
            ),
        c.change === 'deleted'
          ? null
          : h(
              'button',
              {
                type: 'button',
                disabled: !perms.manageRules,
                title: perms.manageRules ? undefined : 'Your token lacks the Manage Rules permission.',
                onclick: () => restoreForm(c),
                'aria-label': `Restore ${short(c.revision)}`,
              },
              'Restore',
            ),
      ),
    ),
  )
  replace(
    body,
    rows.length
      ? h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { class: 'list' },
            h('caption', { class: 'sr-only' }, `Commits of ${id}, newest first`),
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                ['Time', 'Actor', 'Change', 'Reason', 'Revision', 'Actions'].map((c) => h('th', { scope: 'col' }, c)),
              ),
            ),
            h('tbody', null, rows),
          ),
        )
      : h('p', null, 'No commits.'),
    r.body.next
      ? h(
          'p',
          null,
          h(
            'a',
            {
              href: `#/rules/${encodeURIComponent(kind.path)}/${encodeURIComponent(id)}/history?cursor=${encodeURIComponent(r.body.next)}`,
            },
            'Older commits',
          ),
        )
      : null,
    detail,
  )

  async function showDiff(c) {
    const q = { to: c.revision }
    if (c.parent) q.from = c.parent
    const d = await api('GET', `${base}/diff`, { query: q })
    if (!d.ok) return replace(detail, message('error', `${d.body?.message} (HTTP ${d.status})`))
    replace(
      detail,
      h('h2', { tabindex: '-1' }, `Diff of ${short(c.revision)}${c.parent ? ` against ${short(c.parent)}` : ''}`),
      d.body.files.length ? null : h('p', null, 'No change to the rule’s files.'),
      d.body.files.map((f) => {
        const pre = h('pre', { class: 'diff', tabindex: '0', 'aria-label': `Diff of ${f.path}` })
        pre.innerHTML = highlightDiff(f.unifiedDiff)
        return h('section', null, h('h3', null, f.path), pre)
      }),
    )
    detail.querySelector('h2').focus()
  }

  async function showVersion(c) {
    const v = await api('GET', `${base}/history/${encodeURIComponent(c.revision)}`)
    if (!v.ok) return replace(detail, message('error', `${v.body?.message} (HTTP ${v.status})`))
    const { ruleToYaml } = await import('./rule-form.js')
    const { highlight } = await import('../highlight.js')
    const pre = h('pre', { class: 'code-view', tabindex: '0', 'aria-label': `The rule at ${short(c.revision)}` })
    const { revision: _shown, ...rule } = v.body
    pre.innerHTML = highlight('yaml', ruleToYaml(kind, rule))
    const py = v.body.body ? h('pre', { class: 'code-view', tabindex: '0', 'aria-label': 'Python body' }) : null
    if (py) py.innerHTML = highlight('python', v.body.body)
    replace(detail, h('h2', { tabindex: '-1' }, `The rule at ${short(c.revision)}`), pre, py)
    detail.querySelector('h2').focus()
  }

  function restoreForm(c) {
    const reason = h('input', { type: 'text', maxlength: '2000', value: `Restore ${short(c.revision)}` })
    const out = h('div', { 'aria-live': 'polite' })
    const form = h(
      'form',
      {
        class: 'restore',
        async onsubmit(e) {
          e.preventDefault()
          const why = reason.value.trim()
          const bad = reasonProblem(why)
          if (bad) return replace(out, message('error', bad))
          const headers = reasonHeaders(why)
          if (shownEtag) headers['If-Match'] = shownEtag
          const res = await api('POST', `${base}/restore`, { query: { revision: c.revision }, headers })
          if (res.ok) {
            shownEtag = res.headers.get('ETag') ?? shownEtag
            replace(
              out,
              message(
                'ok',
                `Restored to ${short(c.revision)}. `,
                h('a', { href: `#/rules/${encodeURIComponent(kind.path)}/${encodeURIComponent(id)}` }, 'Open the rule'),
              ),
            )
          } else if (res.status === 412) {
            replace(
              out,
              message(
                'error',
                'Not restored: the rule was changed by someone else since this history was shown (HTTP 412). Reload the history and try again.',
              ),
            )
          } else if (Array.isArray(res.body?.testResults)) {
            const failed = res.body.testResults.filter((t) => !t.passed).map((t) => `${t.name}: ${t.error ?? 'failed'}`)
            replace(
              out,
              message(
                'error',
                `Not restored: ${res.body.message}`,
                h(
                  'ul',
                  null,
                  failed.map((f) => h('li', null, f)),
                ),
              ),
            )
          } else replace(out, message('error', `Not restored: ${res.body?.message} (HTTP ${res.status})`))
        },
      },
      h('h2', { tabindex: '-1' }, `Restore the rule as it was at ${short(c.revision)}`),
      h('p', null, 'A new commit makes the rule’s files identical to that revision; its tests run first.'),
      field('Change reason', reason),
      h('button', { type: 'submit', class: 'primary' }, 'Restore'),
      out,
    )
    replace(detail, form)
    form.querySelector('h2').focus()
  }
}
