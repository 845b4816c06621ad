// New rule (`#/new?kind=…`): a kind picker and the kind's template in the same editors and checks as a
// rule's page; Create is a POST (409 when the id exists), then the new rule's page opens.
import { api, permissions, reasonHeaders } from '../api.js'
import { field, h, replace, select } from '../dom.js'
import { KINDS, kindOf, TEMPLATES } from '../kinds.js'
import { clearLeaveGuard, confirmLeave } from '../leave-guard.js'
import { ruleForm } from './rule-form.js'

export async function newRuleView(main, _params, query) {
  document.title = 'New rule · rulekeeper'
  const kind = kindOf(query.get('kind') ?? '') ?? KINDS[0]
  const perms = await permissions()
  const picker = select(
    KINDS.map((k) => [k.path, k.label]),
    kind.path,
  )
  picker.addEventListener('change', () => {
    // Another kind's template replaces the editors: edits made to this one are asked about first.
    if (!confirmLeave()) {
      picker.value = kind.path
      return
    }
    clearLeaveGuard()
    location.hash = `#/new?kind=${picker.value}`
  })
  const form = ruleForm({
    kind,
    rule: TEMPLATES[kind.path],
    canManage: perms.manageRules,
    manageReason: 'Your token lacks the Manage Rules permission: it cannot create rules.',
    submitLabel: 'Create',
    testRequest: () => ['POST', `/${kind.path}`],
    async onSubmit(body, reason) {
      const res = await api('POST', `/${kind.path}`, { body, headers: reasonHeaders(reason) })
      if (res.ok) {
        clearLeaveGuard()
        location.hash = `#/rules/${kind.path}/${encodeURIComponent(res.body.id)}`
      }
      return res
    },
  })
  replace(
    main,
    h('h1', { tabindex: '-1' }, 'New rule'),
    h('p', null, 'Start from the template of a kind; the id, fields, tests and code are yours to change.'),
    field('Kind', picker),
    form.el,
  )
}
