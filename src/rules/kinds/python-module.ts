// What the kinds whose rule is a Python module (scheduled and streaming rules) share: the `.py`
// beside the YAML as the API's `body`, the Python test shape, no generated Python view, and the YAML
// alert keys Panther's rule schema allows on every rule (kept, see PYTHON_ALERT_KEY_FIELDS).
import { COMMON_EXTRA_FIELDS, type FieldSpec, PYTHON_TESTS, yamlTextField } from '../fields.js'
import type { RuleKindDef } from './kind.js'

/**
 * `AlertTitle`, `AlertContext`, `DynamicSeverities`, `GroupBy`: Panther's rule schema accepts them on
 * a Python rule too (one schema for both forms). They are kept and served like a simple rule's, as
 * YAML text; the module's functions decide the alert (docs/decisions.md), and check() warns so.
 */
export const PYTHON_ALERT_KEY_FIELDS: readonly FieldSpec[] = [
  yamlTextField('alertTitle', 'AlertTitle'),
  yamlTextField('alertContext', 'AlertContext'),
  yamlTextField('dynamicSeverities', 'DynamicSeverities'),
  yamlTextField('groupBy', 'GroupBy'),
]

export const PYTHON_MODULE_KIND = {
  extraFields: [
    { api: 'body', schema: { type: 'string', minLength: 1 }, readOnly: false, requiredOnWrite: true },
    ...COMMON_EXTRA_FIELDS,
  ],
  requiredFileKeys: [],
  tests: PYTHON_TESTS,
  companion: { fileKey: 'Filename', apiField: 'body', placeholder: 'rule.py', noun: 'Python file' },
  pythonView: false,
  loadRank: 0,
} satisfies Partial<RuleKindDef<string>>
