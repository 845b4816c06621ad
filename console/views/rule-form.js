// The editing part shared by a rule's page and the new-rule page: the rule as YAML (its writable
// fields) and its Python body in code editors, `Run tests` (the API's run-tests-only), a `Change
// reason` and the save button; problems of a save are marked at their line, test results listed.
// The tests can be edited as forms instead of YAML (test-forms.js; the switch moves them between the
// two, so both hold the same tests). Edits not saved yet hold the page (leave-guard.js).
import { LineCounter, parseDocument, stringify } from './../vendor/yaml/index.js'
import { api, reasonProblem } from '../api.js'
import { field, h, message, onSubmit as submitted, replace } from '../dom.js'
import { codeEditor } from '../editor.js'
import { setLeaveGuard } from '../leave-guard.js'
import { writableFields } from '../kinds.js'
import { testForms } from './test-forms.js'

/** The writable fields of a rule, as YAML (the Python body is edited apart). */
export function ruleToYaml(kind, rule) {
  const { body: _python, ...out } = writableFields(kind, rule)
  return stringify(out, { lineWidth: 0 })
}

/** A rule's fields as one text, whatever their order (null: not a rule). */
const canonical = (b) => (b ? JSON.stringify(Object.entries(b).sort(([a], [c]) => (a < c ? -1 : 1))) : null)

/**
 * `ruleForm({ kind, rule, canManage, manageReason, submitLabel, testRequest, onSubmit })`: `testRequest(body)`
 * is the `[method, path]` of the test run, `onSubmit(body, reason)` answers the API's response; the
 * form shows its problems and results, the caller what follows.
 */
export function ruleForm({ kind, rule, canManage, manageReason, submitLabel, testRequest, onSubmit }) {
  const readOnly = !canManage
  const yamlEd = codeEditor({
    label: 'Rule (YAML)',
    lang: 'yaml',
    value: ruleToYaml(kind, rule),
    readOnly,
    readOnlyReason: readOnly ? manageReason : undefined,
  })
  const pyEd = kind.python
    ? codeEditor({ label: 'Python body', lang: 'python', value: rule.body ?? '', readOnly })
    : null
  // What was loaded or last saved: the editors differ from it while there are unsaved edits (in the
  // forms view, the rule they make together differs from it).
  let mode = 'yaml'
  let saved = { yaml: yamlEd.value(), python: pyEd?.value(), rule: canonical(parsed(yamlEd.value())) }
  setLeaveGuard(
    () =>
      !readOnly &&
      (pyEd?.value() !== saved.python ||
        (mode === 'yaml' ? yamlEd.value() !== saved.yaml : canonical(formsRule()) !== saved.rule)),
  )
  const forms = testForms({
    tests: [],
    templateTest: kind.template?.tests?.[0],
    readOnly,
    onChange: () => {},
    run: runOne,
  })
  const switchName = `tests-view-${Math.random().toString(36).slice(2)}`
  const viewSwitch = h(
    'fieldset',
    { class: 'tests-view' },
    h('legend', null, 'Edit the tests as'),
    ['yaml', 'forms'].map((v) =>
      h(
        'label',
        null,
        h('input', {
          type: 'radio',
          name: switchName,
          value: v,
          checked: v === 'yaml',
          onchange: () => switchTo(v),
        }),
        v === 'yaml' ? ' YAML (in the rule)' : ' Forms, one per test',
      ),
    ),
  )
  const viewProblem = h('div', { 'aria-live': 'polite' })
  const reason = h('input', { type: 'text', maxlength: '2000', autocomplete: 'off', disabled: readOnly })
  const out = h('div', { class: 'results', 'aria-live': 'polite' })
  const runBtn = h('button', { type: 'button', onclick: () => runTests() }, 'Run tests')
  const saveBtn = h(
    'button',
    {
      type: 'submit',
      class: 'primary',
      disabled: readOnly,
      'aria-describedby': readOnly ? 'save-why' : undefined,
    },
    submitLabel,
  )
  const form = h(
    'form',
    { class: 'rule-form', onsubmit: submitted(save) },
    viewSwitch,
    viewProblem,
    yamlEd.el,
    h('section', { class: 'tests-forms-part', 'aria-label': 'Tests', hidden: true }, h('h2', null, 'Tests'), forms.el),
    pyEd?.el,
    h(
      'div',
      { class: 'actions' },
      field('Change reason', reason, 'Why this change: it becomes the body of the commit message.'),
      h('div', { class: 'buttons' }, runBtn, saveBtn),
      readOnly ? h('small', { id: 'save-why', class: 'hint' }, manageReason) : null,
    ),
    out,
  )

  /** The body from the editors, or null with the YAML error shown at its line. */
  function body() {
    const lc = new LineCounter()
    const doc = parseDocument(yamlEd.value(), { lineCounter: lc, prettyErrors: false })
    if (doc.errors.length) {
      const problems = doc.errors.map((e) => ({
        path: '(YAML)',
        message: e.message.split('\n')[0],
        line: lc.linePos(e.pos[0]).line,
        editor: yamlEd,
      }))
      showProblems('The YAML is not valid; nothing was sent.', problems)
      return null
    }
    const b = doc.toJS() ?? {}
    if (typeof b !== 'object' || Array.isArray(b)) {
      showProblems('The YAML must be a mapping of the rule’s fields.', [])
      return null
    }
    if (mode === 'forms') {
      const tests = forms.tests()
      if (!tests) {
        showProblems('A test’s event is not valid JSON; nothing was sent.', [])
        return null
      }
      b.tests = tests
    }
    if (pyEd) b.body = pyEd.value()
    return b
  }

  /** The YAML's mapping, or null when it is not one. */
  function parsed(text) {
    const doc = parseDocument(text)
    const v = doc.errors.length ? null : doc.toJS()
    return v && typeof v === 'object' && !Array.isArray(v) ? v : null
  }

  /** The rule the forms view shows: the YAML's fields with the forms' tests. */
  function formsRule() {
    const b = parsed(yamlEd.value())
    const tests = forms.tests()
    return b && tests ? { ...b, tests } : null
  }

  /** Moves the tests between the YAML and the forms; a YAML or JSON problem keeps the view as it is. */
  function switchTo(next) {
    if (next === mode) return
    const radios = viewSwitch.querySelectorAll('input')
    const stay = (why) => {
      for (const r of radios) r.checked = r.value === mode
      replace(viewProblem, message('error', why))
    }
    const doc = parseDocument(yamlEd.value())
    if (doc.errors.length || !doc.contents?.items) return stay('The YAML is not valid: fix it to switch views.')
    if (next === 'forms') {
      const tests = doc.toJS().tests
      forms.set(Array.isArray(tests) ? tests : [])
      doc.delete('tests')
      yamlEd.set(String(doc.contents.items.length ? doc.toString({ lineWidth: 0 }) : '{}\n'))
    } else {
      const tests = forms.tests()
      if (!tests) return stay('A test’s event is not valid JSON: fix it to switch views.')
      doc.set('tests', tests)
      yamlEd.set(doc.toString({ lineWidth: 0 }))
      // The same rule as saved, written again: no unsaved edit.
      if (canonical(parsed(yamlEd.value())) === saved.rule) saved.yaml = yamlEd.value()
    }
    mode = next
    replace(viewProblem)
    forms.el.closest('section').hidden = mode !== 'forms'
  }

  /** One test of the editors' rule through `POST /test-runs` (its result, pass or fail). */
  async function runOne(test) {
    const b = parsed(yamlEd.value())
    if (!b) return { ok: false, status: 0, body: { message: 'The YAML is not valid: nothing was run' } }
    if (pyEd) b.body = pyEd.value()
    return api('POST', '/test-runs', { body: { kind: kind.path, rule: { ...b, tests: [test] }, tests: [test.name] } })
  }

  /** A problem's line in the editors: the node its JSON pointer names, plus its line inside a YAML text. */
  function locate(p) {
    const segs = String(p.path ?? '')
      .split('/')
      .slice(1)
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    if (pyEd && segs[0] === 'body') return { ...p, line: p.line ?? 1, editor: pyEd }
    const lc = new LineCounter()
    const doc = parseDocument(yamlEd.value(), { lineCounter: lc })
    for (let n = segs.length; n > 0; n--) {
      const keys = segs.slice(0, n).map((s) => (/^\d+$/.test(s) ? Number(s) : s))
      const node = doc.getIn(keys, true)
      if (node?.range) {
        const at = lc.linePos(node.range[0]).line
        // A YAML-text field is a block scalar: its text starts on the line after the `|`.
        const inText = n === segs.length && p.line && typeof node.value === 'string' && node.type?.startsWith('BLOCK')
        return { ...p, line: inText ? at + p.line : at, editor: yamlEd }
      }
    }
    return { ...p, line: undefined, editor: yamlEd }
  }

  function showProblems(title, problems) {
    yamlEd.mark(problems.filter((p) => p.editor === yamlEd))
    pyEd?.mark(problems.filter((p) => p.editor === pyEd))
    replace(
      out,
      message(
        'error',
        h('strong', null, title),
        problems.length
          ? h(
              'ul',
              { class: 'problems' },
              problems.map((p) =>
                h(
                  'li',
                  null,
                  p.line
                    ? h(
                        'button',
                        { type: 'button', class: 'link', onclick: () => p.editor.focusLine(p.line) },
                        `${p.editor === pyEd ? 'Python' : 'YAML'} line ${p.line}`,
                      )
                    : null,
                  ` ${p.path}: ${p.message}`,
                ),
              ),
            )
          : null,
      ),
    )
  }

  function clearMarks() {
    yamlEd.mark([])
    pyEd?.mark([])
  }

  function showTests(sent, results) {
    const expected = new Map((sent.tests ?? []).map((t) => [t.name, t.expectedResult]))
    const reasonOf = (r) => {
      if (r.passed) return ''
      if (r.error) return r.error
      const fnErrors = Object.entries(r.functions ?? {})
        .filter(([, v]) => v?.error)
        .map(([k, v]) => `${k}: ${v.error}`)
      if (fnErrors.length) return fnErrors.join('; ')
      const exp = expected.get(r.name)
      return exp === undefined ? 'failed' : `expected ${exp}, the rule returned ${!exp}`
    }
    const failed = results.filter((r) => !r.passed).length
    return h(
      'section',
      { class: 'tests', 'aria-label': 'Test results' },
      h('h3', null, failed ? `${failed} of ${results.length} tests failed` : `All ${results.length} tests passed`),
      h(
        'ul',
        null,
        results.map((r) =>
          h(
            'li',
            { class: r.passed ? 'pass' : 'fail' },
            h('span', { class: `badge ${r.passed ? 'ok' : 'bad'}` }, r.passed ? 'passed' : 'failed'),
            ` ${r.name}`,
            r.passed ? null : h('div', { class: 'reason' }, reasonOf(r)),
          ),
        ),
      ),
    )
  }

  /** Shows a write's or a test run's failure; true when it was one. */
  function showFailure(r, sent) {
    if (r.status === 400 && Array.isArray(r.body?.testResults)) {
      clearMarks()
      replace(out, message('error', r.body.message), showTests(sent, r.body.testResults))
    } else if ((r.status === 400 || r.status === 413) && Array.isArray(r.body?.errors))
      showProblems(r.body.message ?? 'The rule is not valid.', r.body.errors.map(locate))
    else if (r.status === 412)
      replace(
        out,
        message(
          'error',
          h('strong', null, 'Not saved: this rule was changed by someone else since you opened it.'),
          ' (HTTP 412, the version you edited is no longer the current one.) Your edits are still in the editor; ',
          'open the rule again to see the current version and its history, then apply your change to it.',
        ),
      )
    else if (r.status === 403)
      replace(out, message('error', `Not allowed: ${r.body?.message ?? 'forbidden'} (HTTP 403)`))
    else if (!r.ok) replace(out, message('error', `${r.body?.message ?? 'failed'} (HTTP ${r.status})`))
    else return false
    return true
  }

  async function runTests() {
    const b = body()
    if (!b) return
    replace(out, message('info', 'Running tests…'))
    const [method, path] = testRequest(b)
    const r = await api(method, path, { body: b, query: { 'run-tests-only': 'true' } })
    if (showFailure(r, b)) return
    clearMarks()
    const tests = b.tests ?? []
    replace(
      out,
      tests.length
        ? showTests(
            b,
            tests.map((t) => ({ name: t.name, passed: true })),
          )
        : message('info', 'This rule has no tests.'),
    )
  }

  async function save() {
    const b = body()
    if (!b) return
    const why = reason.value.trim()
    const bad = reasonProblem(why)
    if (bad) return replace(out, message('error', bad))
    replace(out, message('info', 'Saving…'))
    const r = await onSubmit(b, why)
    if (showFailure(r, b)) return
    clearMarks()
    reason.value = ''
  }

  function setRule(rule) {
    const text = ruleToYaml(kind, rule)
    pyEd?.set(rule.body ?? '')
    saved = { yaml: text, python: pyEd?.value(), rule: canonical(parsed(text)) }
    if (mode === 'forms') {
      const doc = parseDocument(text)
      forms.set(doc.toJS().tests ?? [])
      doc.delete('tests')
      yamlEd.set(doc.toString({ lineWidth: 0 }))
    } else yamlEd.set(text)
  }
  return { el: form, out, setRule, body, report: showFailure }
}
