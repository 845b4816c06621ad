// New rule (`#/new?kind=…&log-type=…`): a kind picker (the server's kinds) and the kind's template
// (`GET /kinds`) in the same editors and checks as a rule's page; for a kind whose rules name log
// types, a log-type picker (the server's, `GET /log-types`) sets the template's. Create is a POST
// (409 when the id exists), then the new rule's page opens.
import { api, permissions, reasonHeaders } from '../api.js'
import { field, h, replace, select } from '../dom.js'
import { kinds, kindOf, logTypeNames } from '../kinds.js'
import { clearLeaveGuard, confirmLeave } from '../leave-guard.js'
import { ruleForm } from './rule-form.js'

export async function newRuleView(main, _params, query) {
  document.title = 'New rule · rulekeeper'
  const kind = kindOf(query.get('kind') ?? '') ?? kinds()[0]
  const logTypes = kind.logTypeFilter ? logTypeNames() : []
  const logType = logTypes.includes(query.get('log-type')) ? query.get('log-type') : logTypes[0]
  const perms = await permissions()
  // Another kind's or log type's template replaces the editors: edits made to this one are asked about first.
  const reopen = (picker, shown, next) => {
    picker.addEventListener('change', () => {
      if (!confirmLeave()) {
        picker.value = shown
        return
      }
      clearLeaveGuard()
      location.hash = `#/new?${new URLSearchParams(next(picker.value))}`
    })
    return picker
  }
  const kindPicker = reopen(
    select(
      kinds().map((k) => [k.path, k.label]),
      kind.path,
    ),
    kind.path,
    (v) => ({ kind: v }),
  )
  const logTypePicker = logType
    ? reopen(
        select(
          logTypes.map((n) => [n, n]),
          logType,
        ),
        logType,
        (v) => ({ kind: kind.path, 'log-type': v }),
      )
    : null
  const rule = structuredClone(kind.template)
  if (logType) rule.logTypes = [logType]
  const form = ruleForm({
    kind,
    rule,
    canManage: perms.manageRules,
    manageReason: 'Your token lacks the Manage Rules permission: it cannot create rules.',
    submitLabel: 'Create',
    testRequest: () => ['POST', `/${kind.path}`],
    async onSubmit(body, reason) {
      const res = await api('POST', `/${kind.path}`, { body, headers: reasonHeaders(reason) })
      if (res.ok) {
        clearLeaveGuard()
        location.hash = `#/rules/${encodeURIComponent(kind.path)}/${encodeURIComponent(res.body.id)}`
      }
      return res
    },
  })
  replace(
    main,
    h('h1', { tabindex: '-1' }, 'New rule'),
    h('p', null, 'Start from the template of a kind; the id, fields, tests and code are yours to change.'),
    field('Kind', kindPicker),
    logTypePicker ? field('Log type', logTypePicker, 'One of the log types this server ingests.') : null,
    form.el,
  )
}
