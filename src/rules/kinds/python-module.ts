// What the kinds whose rule is a Python module (scheduled and streaming rules) share: the `.py`
// beside the YAML as the API's `body`, the Python test shape, and no generated Python view.
import { COMMON_EXTRA_FIELDS, PYTHON_TESTS } from '../fields.js'
import type { RuleKindDef } from './kind.js'

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
