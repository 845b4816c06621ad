// The repository's health (`GET /status`): the reconciler's conditions, the applied and attempted
// revisions, the last run, the accounting of every file, the invalid files with their problems (the
// first 100 /status lists, `Show more invalid files` pages the rest from `GET /status/invalid-files`),
// and each file whose Python cannot run here or was not checked;
// `Reconcile now` (`POST /reconcile`, Manage Rules) runs the reconciler and shows the status after it.
import { api, permissions } from '../api.js'
import { fmtTime, h, message, replace } from '../dom.js'

const table = (caption, head, rows) =>
  h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'list' },
      h('caption', null, caption),
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          head.map((c) => h('th', { scope: 'col' }, c)),
        ),
      ),
      h('tbody', null, rows),
    ),
  )

function problemLine(e) {
  if (typeof e === 'string') return e
  // `file`: the line is in another file than the YAML (its .py, or a helper it imports).
  const at = [e.file ?? e.path, e.line ? `line ${e.line}${e.column ? `, column ${e.column}` : ''}` : '']
    .filter(Boolean)
    .join(' ')
  return `${at ? `${at}: ` : ''}${e.message ?? JSON.stringify(e)}`
}

export async function statusView(main) {
  document.title = 'Status · rulekeeper'
  const [r, perms] = await Promise.all([api('GET', '/status'), permissions()])
  const heading = h('h1', { tabindex: '-1' }, 'Status')
  const outcome = h('div', { 'aria-live': 'polite' })
  const why = 'Your token lacks the Manage Rules permission: it cannot run the reconciler.'
  const button = h(
    'button',
    {
      type: 'button',
      disabled: !perms.manageRules,
      'aria-describedby': perms.manageRules ? undefined : 'reconcile-why',
      async onclick() {
        button.disabled = true
        replace(outcome, message('info', 'Reconciling…'))
        const res = await api('POST', '/reconcile')
        button.disabled = false
        if (!res.ok)
          return replace(outcome, message('error', `Not reconciled: ${res.body?.message} (HTTP ${res.status})`))
        replace(outcome, message('ok', `Reconciled at ${fmtTime(new Date().toISOString())}.`))
        replace(body, statusBody(res.body))
      },
    },
    'Reconcile now',
  )
  const controls = h(
    'div',
    { class: 'buttons' },
    button,
    perms.manageRules ? null : h('small', { id: 'reconcile-why', class: 'hint' }, why),
  )
  const body = h('div')
  replace(main, heading, controls, outcome, body)
  if (!r.ok) return replace(body, message('error', `${r.body?.message} (HTTP ${r.status})`))
  replace(body, statusBody(r.body))
}

const invalidRow = (f) =>
  h(
    'tr',
    null,
    h('td', null, h('code', null, f.path)),
    h('td', null, f.ruleId ?? ''),
    h(
      'td',
      null,
      h(
        'ul',
        { class: 'problems' },
        (f.errors ?? []).map((e) => h('li', null, problemLine(e))),
      ),
    ),
  )

/**
 * The invalid files: the rows /status gave, and while the list goes on (`invalidFilesNext`, then each
 * page's `next`) a button that appends the next page of `GET /status/invalid-files`.
 */
function invalidFilesSection(s, invalid) {
  const total = s.invalidFileCount ?? invalid.length
  const tbody = h('tbody', null, invalid.map(invalidRow))
  const shown = h('p', { 'aria-live': 'polite' })
  const more = h('div', { class: 'buttons' })
  let count = invalid.length
  const showing = () =>
    replace(shown, count < total ? `Showing the first ${count} of ${total} invalid files, by path.` : '')
  const offer = (cursor) => {
    if (!cursor) return replace(more)
    const button = h(
      'button',
      {
        type: 'button',
        async onclick() {
          button.disabled = true
          const r = await api('GET', '/status/invalid-files', { query: { cursor, limit: '100' } })
          if (!r.ok) {
            button.disabled = false
            return replace(shown, message('error', `Not loaded: ${r.body?.message} (HTTP ${r.status})`))
          }
          for (const f of r.body.results) tbody.append(invalidRow(f))
          count += r.body.results.length
          showing()
          offer(r.body.next)
        },
      },
      'Show more invalid files',
    )
    replace(more, button)
  }
  showing()
  offer(s.invalidFilesNext)
  return [
    h('h2', null, `Invalid files (${total})`),
    total
      ? [
          h(
            'div',
            { class: 'table-wrap' },
            h(
              'table',
              { class: 'list' },
              h('caption', null, 'Invalid files'),
              h(
                'thead',
                null,
                h(
                  'tr',
                  null,
                  ['Path', 'Rule id', 'Problems'].map((c) => h('th', { scope: 'col' }, c)),
                ),
              ),
              tbody,
            ),
          ),
          shown,
          more,
        ]
      : h('p', null, 'Every rule file is valid.'),
  ]
}

/** The status answer as the page shows it. */
function statusBody(s) {
  const conds = s.conditions ?? []
  const ready = conds.find((c) => c.type === 'Ready')
  const invalid = s.invalidFiles ?? []
  const notRun = s.notRunFiles ?? []
  const files = s.files ?? {}
  return [
    ready?.status !== 'True'
      ? message('error', `Not ready: ${ready?.message ?? 'unknown'}`)
      : invalid.length
        ? message('info', `Ready, with invalid files: ${ready.message}`)
        : notRun.length
          ? message('info', `Ready, with files whose Python cannot run here: ${ready.message}`)
          : message('ok', `Ready: ${ready.message}`),
    h(
      'dl',
      { class: 'facts' },
      h('dt', null, 'Applied revision'),
      h('dd', null, h('code', null, s.lastAppliedRevision ?? 'none')),
      h('dt', null, 'Last attempted revision'),
      h('dd', null, h('code', null, s.lastAttemptedRevision ?? 'none')),
      h('dt', null, 'Last run'),
      h(
        'dd',
        null,
        s.lastRun
          ? `${fmtTime(s.lastRun.finishedAt ?? s.lastRun.startedAt)}: ${s.lastRun.outcome ?? ''}, ${s.lastRun.filesChanged ?? 0} files changed, ${s.lastRun.durationMs ?? '?'} ms`
          : 'none since start',
      ),
      h('dt', null, 'Remote'),
      h(
        'dd',
        null,
        s.remote
          ? `${s.remote.url} (${s.remote.branch}) ${s.remote.reachable ? 'reachable' : 'unreachable'}`
          : 'none (embedded repository)',
      ),
    ),
    table(
      'Conditions',
      ['Type', 'Status', 'Reason', 'Message', 'Since'],
      conds.map((c) =>
        h(
          'tr',
          null,
          h('td', null, c.type),
          h('td', null, c.status),
          h('td', null, c.reason),
          h('td', null, c.message),
          h('td', null, fmtTime(c.lastTransitionTime)),
        ),
      ),
    ),
    table(
      'Files',
      ['Files', 'Valid', 'Invalid', 'Unsupported', 'Analysis files', 'Python not run', 'Python not checked'],
      [
        h(
          'tr',
          null,
          ['files', 'valid', 'invalid', 'unsupported', 'analysisFiles', 'notRun', 'unchecked'].map((k) =>
            h('td', null, String(files[k] ?? 0)),
          ),
        ),
      ],
    ),
    invalidFilesSection(s, invalid),
    notRun.length
      ? [
          h('h2', null, `Python not run or not checked (${notRun.length})`),
          table(
            'Valid files whose Python cannot run here (a module the interpreter lacks) or was not checked (no sandbox)',
            ['Path', 'Rule id', 'Status', 'Why'],
            notRun.map((f) =>
              h(
                'tr',
                null,
                h('td', null, h('code', null, f.path)),
                h('td', null, f.ruleId ?? ''),
                h('td', null, f.status === 'unchecked' ? 'not checked' : 'not run'),
                h('td', null, problemLine(f.problem ?? {})),
              ),
            ),
          ),
        ]
      : null,
    (s.staleRules ?? []).length
      ? [
          h('h2', null, 'Rules served from an older version'),
          h(
            'ul',
            null,
            s.staleRules.map((x) => h('li', null, typeof x === 'string' ? x : JSON.stringify(x))),
          ),
        ]
      : null,
  ]
}
