// A rule's page (`#/rules/<kind>/<id>`): its fields, its file in the editors, Run tests, and Save with
// a change reason, sent with `If-Match: <the ETag of the version shown>` so a concurrent edit is a 412
// (shown by the form), never a silent overwrite. Its History tab is history.js, its Alerts, Rule
// errors and Runs tabs rule-tabs.js (the header and tabs all show are rule-header.js); its Preview
// (rule-preview.js) runs the editors' rule over stored events.
import { api, permissions, reasonHeaders, rulePath } from '../api.js'
import { actorText, fmtTime, h, message, replace } from '../dom.js'
import { kindOf } from '../kinds.js'
import { historyPanel } from './history.js'
import { ruleForm } from './rule-form.js'
import { ruleHeader, tabs } from './rule-header.js'

function facts(rule) {
  const row = (k, v) => (v === undefined || v === '' ? null : [h('dt', null, k), h('dd', null, v)])
  return h(
    'dl',
    { class: 'facts' },
    row('Log types', (rule.logTypes ?? []).join(', ') || undefined),
    row('Resource types', (rule.resourceTypes ?? []).join(', ') || undefined),
    row('Tags', (rule.tags ?? []).join(', ') || undefined),
    row('Created', `${fmtTime(rule.createdAt)} by ${actorText(rule.createdBy)}`),
    row('Last modified', `${fmtTime(rule.lastModified)} by ${actorText(rule.lastModifiedBy)}`),
    row('References', (rule.correlationRuleReferenceIds ?? []).join(', ') || undefined),
  )
}

export async function ruleView(main, params) {
  const kind = kindOf(params.kind)
  if (!kind)
    return replace(main, h('h1', { tabindex: '-1' }, 'Not found'), message('error', `No rule kind ${params.kind}.`))
  if (params.tab === 'history') return historyPanel(main, kind, params.id, params)
  if (params.tab) return (await import('./rule-tabs.js')).ruleTabView(main, kind, params.id, params.tab, params.query)
  document.title = `${params.id} · rulekeeper`
  const [r, perms] = await Promise.all([api('GET', rulePath(kind.path, params.id)), permissions()])
  if (!r.ok) {
    return replace(
      main,
      ruleHeader(kind, params.id),
      tabs(kind.path, params.id, 'Rule'),
      message(
        'error',
        r.status === 404
          ? 'This rule does not exist (now). Its History tab shows its past, if it had one.'
          : `${r.body?.message} (HTTP ${r.status})`,
      ),
    )
  }
  let rule = r.body
  let etag = r.headers.get('ETag')
  const saved = h('div', { 'aria-live': 'polite' })
  const form = ruleForm({
    kind,
    rule,
    canManage: perms.manageRules,
    manageReason: 'Your token lacks the Manage Rules permission: the rule is read-only.',
    submitLabel: 'Save',
    testRequest: () => ['PUT', rulePath(kind.path, rule.id)],
    async onSubmit(body, reason) {
      const headers = reasonHeaders(reason)
      if (etag) headers['If-Match'] = etag
      const res = await api('PUT', rulePath(kind.path, rule.id), { body, headers })
      if (res.ok) {
        rule = res.body
        etag = res.headers.get('ETag') ?? null
        form.setRule(rule)
        replace(factsEl, facts(rule))
        replace(form.out, message('ok', `Saved at ${fmtTime(rule.lastModified)}.`))
      }
      return res
    },
  })
  const factsEl = h('div', null, facts(rule))
  const warnings = (rule.warnings ?? []).map((w) =>
    message('info', typeof w === 'string' ? w : (w.message ?? JSON.stringify(w))),
  )
  replace(main, ruleHeader(kind, rule.id, rule), tabs(kind.path, rule.id, 'Rule'), warnings, factsEl, saved, form.el)
  // Rules that name the log types they run on (writable) are the ones detection runs over stored events.
  if (kind.logTypeFilter && !kind.readOnlyFields.includes('logTypes'))
    main.append(await (await import('./rule-preview.js')).previewPart({ kind, form }))
  if (kind.pythonView) main.append(await generatedPython(kind, rule.id))
}

/** A simple rule's generated Python (read-only), folded away. */
async function generatedPython(kind, id) {
  const r = await api('GET', rulePath(kind.path, id), { query: { 'include-python': 'true' } })
  if (!r.ok || !r.body?.pythonBody) return ''
  const { highlightPython } = await import('../highlight.js')
  const pre = h('pre', { class: 'code-view', tabindex: '0', 'aria-label': 'Generated Python' })
  pre.innerHTML = highlightPython(r.body.pythonBody)
  return h('details', { class: 'generated' }, h('summary', null, 'Generated Python (read-only)'), pre)
}
