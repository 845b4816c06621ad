// JSON Schemas of the kinds, derived from each kind's field table: the write schema the API
// validates bodies with (ajv, every error), the response schema, and the file check that reuses
// the write schema on a file's view. The OpenAPI document is generated from these same objects.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import { RULE_OUTPUT_KEYS, TEST_KEYS } from './fields.js'
import { extraFieldsOf, fieldsOf, kindDef } from './kinds/index.js'
import { idCharacterProblem } from './rule-id.js'
import { fileKeyOf } from './mapping.js'
import type { DataPath, RuleKind, RuleProblem } from './model.js'

type Schema = Record<string, unknown>

export function readOnlyFieldsOf(kind: RuleKind): Set<string> {
  return new Set([
    ...fieldsOf(kind)
      .filter((f) => f.readOnly)
      .map((f) => f.api),
    ...extraFieldsOf(kind)
      .filter((f) => f.readOnly)
      .map((f) => f.api),
  ])
}

function writable(kind: RuleKind) {
  return [...fieldsOf(kind).filter((f) => !f.readOnly), ...extraFieldsOf(kind).filter((f) => !f.readOnly)]
}

export function writeSchema(kind: RuleKind): Schema {
  const fields = writable(kind)
  return {
    type: 'object',
    additionalProperties: false,
    required: fields.filter((f) => f.requiredOnWrite).map((f) => f.api),
    properties: Object.fromEntries(fields.map((f) => [f.api, f.schema])),
  }
}

export function responseSchema(kind: RuleKind): Schema {
  const props: Record<string, Schema> = {}
  for (const f of fieldsOf(kind)) props[f.api] = f.readOnly ? { ...f.schema, readOnly: true } : f.schema
  for (const f of extraFieldsOf(kind)) props[f.api] = f.readOnly ? { ...f.schema, readOnly: true } : f.schema
  return { type: 'object', properties: props }
}

const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: true })
// Rule ids: the one id check (rule-id.ts), reported with its own message; the id's `pattern` is
// for the OpenAPI document and says the same, so its error is left out.
const ID_PATTERN_PATH = '#/properties/id/pattern'
const checkId = Object.assign(
  (enabled: boolean, data: string): boolean => {
    const why = enabled ? idCharacterProblem(data) : undefined
    checkId.errors = why ? [{ keyword: 'x-rule-id', message: why, params: {} }] : []
    return why === undefined
  },
  { errors: [] as Array<Partial<ErrorObject>> },
)
ajv.addKeyword({ keyword: 'x-rule-id', type: 'string', schemaType: 'boolean', errors: true, validate: checkId })
const writeValidators = new Map<RuleKind, ValidateFunction>()
const fileValidators = new Map<RuleKind, ValidateFunction>()

function writeValidator(kind: RuleKind): ValidateFunction {
  let v = writeValidators.get(kind)
  if (!v) writeValidators.set(kind, (v = ajv.compile(writeSchema(kind))))
  return v
}

/** The write schema minus YAML-text fields and the companion's text, open to other keys: checks a file's view. */
function fileValidator(kind: RuleKind): ValidateFunction {
  let v = fileValidators.get(kind)
  if (!v) {
    const companionField = kindDef(kind).companion?.apiField
    const fields = writable(kind).filter((f) => !('yamlText' in f && f.yamlText) && f.api !== companionField)
    v = ajv.compile({
      type: 'object',
      required: fields.filter((f) => f.requiredOnWrite).map((f) => f.api),
      properties: Object.fromEntries(fields.map((f) => [f.api, f.schema])),
    })
    fileValidators.set(kind, v)
  }
  return v
}

function errorPath(e: ErrorObject): string[] {
  const parts =
    e.instancePath === ''
      ? []
      : e.instancePath
          .slice(1)
          .split('/')
          .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
  if (e.keyword === 'required') parts.push(String((e.params as { missingProperty: string }).missingProperty))
  if (e.keyword === 'additionalProperties')
    parts.push(String((e.params as { additionalProperty: string }).additionalProperty))
  return parts
}

const pointer = (parts: ReadonlyArray<string | number>) =>
  parts.length === 0 ? '' : `/${parts.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`

function messageOf(e: ErrorObject, parts: string[]): string {
  const name = parts.length ? parts[parts.length - 1] : 'body'
  switch (e.keyword) {
    case 'required':
      return `${name} is required`
    case 'additionalProperties':
      return `unknown field ${name}`
    case 'enum':
      return `${name} must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`
    case 'anyOf':
      return `${name} must be an integer or a string`
    default:
      return `${name} ${e.message ?? 'is invalid'}`
  }
}

/** Every schema problem of a write body, as JSON pointers. The body has its read-only fields removed. */
export function validateWriteBody(kind: RuleKind, body: unknown): Array<{ path: string; message: string }> {
  const v = writeValidator(kind)
  if (v(body)) return []
  const seen = new Set<string>()
  const out: Array<{ path: string; message: string }> = []
  for (const e of v.errors ?? []) {
    // anyOf reports each branch too; the anyOf error itself says it all.
    if (e.schemaPath.includes('/anyOf/') || e.schemaPath === ID_PATTERN_PATH) continue
    const parts = errorPath(e)
    const item = { path: pointer(parts), message: messageOf(e, parts) }
    const key = `${item.path}\0${item.message}`
    if (seen.has(key)) continue
    seen.add(key)
    out.push(item)
  }
  return out
}

const TEST_FILE_KEY: Record<string, string> = TEST_KEYS
const OUTPUT_FILE_KEY: Record<string, string> = RULE_OUTPUT_KEYS

/** An API path (of the view) → the file path of the same value. */
function viewPathToFilePath(kind: RuleKind, parts: ReadonlyArray<string>): DataPath {
  const [field, ...rest] = parts
  if (field === undefined) return []
  const out: Array<string | number> = [fileKeyOf(kind, field) ?? field]
  if (field === 'tests') {
    const [idx, key, j, sub, ...more] = rest
    if (idx !== undefined) out.push(Number(idx))
    if (key !== undefined) out.push(TEST_FILE_KEY[key] ?? key)
    if (j !== undefined) out.push(Number.isNaN(Number(j)) ? j : Number(j))
    if (sub !== undefined) out.push(OUTPUT_FILE_KEY[sub] ?? sub)
    out.push(...more)
  } else out.push(...rest.map((r) => (/^\d+$/.test(r) ? Number(r) : r)))
  return out
}

/** Schema problems of a rule file, checked on its API view; paths point into the file form. */
export function validateFileView(kind: RuleKind, view: Record<string, unknown>): RuleProblem[] {
  const v = fileValidator(kind)
  if (v(view)) return []
  const out: RuleProblem[] = []
  for (const e of v.errors ?? []) {
    if (e.schemaPath.includes('/anyOf/') || e.schemaPath === ID_PATTERN_PATH) continue
    const parts = errorPath(e)
    const filePath = viewPathToFilePath(kind, parts)
    const last = filePath[filePath.length - 1]
    out.push({ path: filePath, message: messageOf(e, last === undefined ? [] : [String(last)]) })
  }
  return out
}

export { pointer as jsonPointer }
