// A rule's unit tests as forms (the YAML view of them stays, switchable: rule-form.js): one form per
// test — its name, expected result, log type, mocks as name/value rows, and its event as JSON,
// checked as it is typed — each runnable alone (`POST /test-runs` with that test's name), showing
// passed or failed with the rule's outputs or its error. Every change is reported (`onChange`), so the
// caller keeps the tests and the YAML the same.
import { catalog } from '../api.js'
import { field, h, newId, replace } from '../dom.js'

/** The field holding a test's event: a policy test's `resource`, a correlation test's `ruleOutputs`, else `log`. */
const eventKeyOf = (t, fallback) => ['resource', 'ruleOutputs', 'log'].find((k) => k in (t ?? {})) ?? fallback

/**
 * `testForms({ tests, templateTest, readOnly, onChange, run })`: `run(test)` answers the API's
 * response for that one test. → `{ el, tests() (null while an event is not JSON), set(tests) }`.
 */
export function testForms({ tests, templateTest, readOnly, onChange, run }) {
  const fallbackKey = eventKeyOf(templateTest, 'log')
  let forms = []
  const list = h('div', { class: 'test-forms' })
  const add = h(
    'button',
    {
      type: 'button',
      disabled: readOnly,
      onclick() {
        const t = {
          name: `test ${forms.length + 1}`,
          expectedResult: true,
          [fallbackKey]: fallbackKey === 'ruleOutputs' ? [] : {},
        }
        forms.push(testForm(t))
        render()
        onChange()
        forms.at(-1).focus()
      },
    },
    'Add test',
  )
  // Enter in a test's field does not submit the rule's form (a save): the forms sit inside it.
  const el = h(
    'div',
    {
      class: 'tests-as-forms',
      onkeydown: (e) => {
        if (e.key === 'Enter' && e.target instanceof HTMLInputElement) e.preventDefault()
      },
    },
    list,
    h('div', { class: 'buttons' }, add),
  )

  function render() {
    replace(list, forms.length ? forms.map((f) => f.el) : h('p', { class: 'empty' }, 'This rule has no tests.'))
  }

  function testForm(t) {
    const key = eventKeyOf(t, fallbackKey)
    const name = h('input', { type: 'text', value: String(t.name ?? ''), autocomplete: 'off', readonly: readOnly })
    const expected = h(
      'select',
      { disabled: readOnly },
      h('option', { value: 'true', selected: t.expectedResult !== false }, 'true (the rule matches)'),
      h('option', { value: 'false', selected: t.expectedResult === false }, 'false (no match)'),
    )
    const withLogType = key === 'log'
    const listId = newId('log-types')
    const logType = withLogType
      ? h('input', { type: 'text', value: t.logType ?? '', autocomplete: 'off', list: listId, readonly: readOnly })
      : null
    const mocksBox = h('div', { class: 'mocks' })
    const mockRows = []
    const withMocks = key !== 'ruleOutputs'
    const event = h('textarea', {
      class: 'event-json',
      rows: '6',
      spellcheck: 'false',
      autocapitalize: 'off',
      readonly: readOnly,
    })
    event.value = JSON.stringify(t[key] ?? {}, null, 2)
    const eventProblem = h('small', { class: 'hint json-problem', id: newId('json'), 'aria-live': 'polite' })
    event.setAttribute('aria-describedby', eventProblem.id)
    const result = h('div', { class: 'test-result', 'aria-live': 'polite' })
    const legend = h('legend', null, String(t.name ?? ''))
    const runBtn = h('button', { type: 'button', onclick: () => runThis() }, 'Run test')
    const removeBtn = h(
      'button',
      {
        type: 'button',
        disabled: readOnly,
        onclick() {
          forms = forms.filter((f) => f !== self)
          render()
          onChange()
        },
      },
      'Remove test',
    )
    const changed = () => {
      legend.textContent = name.value
      runBtn.setAttribute('aria-label', `Run test ${name.value}`)
      removeBtn.setAttribute('aria-label', `Remove test ${name.value}`)
      onChange()
    }
    function mockRow(m) {
      const n = h('input', {
        type: 'text',
        value: m.objectName ?? '',
        autocomplete: 'off',
        readonly: readOnly,
        oninput: changed,
      })
      const v = h('input', {
        type: 'text',
        value: m.returnValue === undefined ? '' : String(m.returnValue),
        autocomplete: 'off',
        readonly: readOnly,
        oninput: changed,
      })
      const row = {
        boolean: typeof m.returnValue === 'boolean',
        value() {
          const text = v.value
          return {
            objectName: n.value,
            returnValue: row.boolean && (text === 'true' || text === 'false') ? text === 'true' : text,
          }
        },
        el: null,
      }
      const k = mockRows.length + 1
      row.el = h(
        'div',
        { class: 'mock-row' },
        field(`Mock ${k} name`, n),
        field(`Mock ${k} return value`, v),
        h(
          'button',
          {
            type: 'button',
            disabled: readOnly,
            'aria-label': `Remove mock ${k}`,
            onclick() {
              mockRows.splice(mockRows.indexOf(row), 1)
              row.el.remove()
              changed()
            },
          },
          'Remove',
        ),
      )
      mockRows.push(row)
      mocksBox.append(row.el)
    }
    for (const m of Array.isArray(t.mocks) ? t.mocks : []) mockRow(m)
    function addMock() {
      mockRow({})
      changed()
    }
    /** The event parsed, or undefined with the problem said beside it. */
    function eventValue() {
      try {
        const v = JSON.parse(event.value)
        event.removeAttribute('aria-invalid')
        eventProblem.textContent = ''
        return v
      } catch (e) {
        event.setAttribute('aria-invalid', 'true')
        eventProblem.textContent = `Not valid JSON: ${e.message}`
        return undefined
      }
    }
    for (const c of [name, logType, event])
      c?.addEventListener('input', () => {
        if (c === event) eventValue()
        changed()
      })
    expected.addEventListener('change', changed)
    function value() {
      const ev = eventValue()
      if (ev === undefined) return null
      // Fields the form does not show (a policy test's resourceType…) are kept as they were.
      const out = { ...t, name: name.value, expectedResult: expected.value === 'true', [key]: ev }
      if (withLogType) {
        if (logType.value.trim()) out.logType = logType.value.trim()
        else delete out.logType
      }
      if (withMocks && (mockRows.length || 'mocks' in t)) out.mocks = mockRows.map((r) => r.value())
      return out
    }
    async function runThis() {
      const test = value()
      if (!test) return replace(result, h('p', { class: 'fail' }, 'The event is not valid JSON: nothing was run.'))
      replace(result, h('p', { class: 'hint' }, 'Running…'))
      const r = await run(test)
      replace(result, resultOf(r, test))
    }
    const self = {
      value,
      focus: () => name.focus(),
      el: h(
        'fieldset',
        { class: 'test-form' },
        legend,
        h(
          'div',
          { class: 'test-fields' },
          field('Test name', name),
          field('Expected result', expected),
          withLogType ? field('Log type', logType, 'Optional: the event’s log type') : null,
          withLogType
            ? h(
                'datalist',
                { id: listId },
                catalog().logTypes.map((l) => h('option', { value: l.name })),
              )
            : null,
        ),
        withMocks
          ? h(
              'div',
              { class: 'mocks-part' },
              h('span', { class: 'label' }, 'Mocks'),
              mocksBox,
              h('button', { type: 'button', disabled: readOnly, onclick: addMock }, 'Add mock'),
            )
          : null,
        field(key === 'log' ? 'Event (JSON)' : key === 'resource' ? 'Resource (JSON)' : 'Rule outputs (JSON)', event),
        eventProblem,
        h('div', { class: 'buttons' }, runBtn, removeBtn),
        result,
      ),
    }
    runBtn.setAttribute('aria-label', `Run test ${name.value}`)
    removeBtn.setAttribute('aria-label', `Remove test ${name.value}`)
    return self
  }

  function set(list) {
    forms = (Array.isArray(list) ? list : []).map(testForm)
    render()
  }
  set(tests)
  return {
    el,
    tests() {
      const out = forms.map((f) => f.value())
      return out.some((t) => t === null) ? null : out
    },
    set,
  }
}

/** One test's outcome: passed or failed, the reason, and the functions' outputs. */
function resultOf(r, test) {
  if (!r.ok) {
    const where = (r.body?.errors ?? []).map((p) => `${p.path}: ${p.message}`).join('; ')
    return h(
      'p',
      { class: 'fail', role: 'alert' },
      `${r.body?.message ?? 'failed'}${where ? `: ${where}` : ''} (HTTP ${r.status})`,
    )
  }
  const one = r.body.testResults?.[0] ?? {}
  const functions = Object.entries(one.functions ?? {})
  const reason = one.passed
    ? null
    : (one.error ??
      (functions
        .filter(([, v]) => v?.error)
        .map(([k, v]) => `${k}: ${v.error}`)
        .join('; ') ||
        `expected ${test.expectedResult}, the rule returned ${!test.expectedResult}`))
  return [
    h(
      'p',
      { class: one.passed ? 'pass' : 'fail' },
      h('span', { class: `badge ${one.passed ? 'ok' : 'bad'}` }, one.passed ? 'passed' : 'failed'),
      ` ${one.name ?? test.name}`,
    ),
    reason ? h('div', { class: 'reason' }, reason) : null,
    functions.length
      ? h(
          'dl',
          { class: 'facts outputs', 'aria-label': `Outputs of ${test.name}` },
          functions.map(([k, v]) => [
            h('dt', null, k),
            h('dd', null, v?.error ? `error: ${v.error}` : JSON.stringify(v?.output ?? null)),
          ]),
        )
      : null,
  ]
}
