// The OpenAPI part of the rule routes, per kind (tag: the kind's title): the kind's schemas (as the
// API returns it, as a client writes it, a page) generated from the JSON Schemas the server
// validates with and the kind's field table, and its paths (list, create, read, replace, delete,
// history). Response schemas list as `required` what a response always carries.
import { extraFieldsOf, fieldsOf, kindDef } from '../rules/kinds/index.js'
import type { RuleKind } from '../rules/model.js'
import { ID_PATTERN } from '../rules/rule-id.js'
import { readOnlyFieldsOf, responseSchema, writeSchema } from '../rules/schemas.js'
import { AUTH_ERRORS, err, json, NOT_IMPLEMENTED, type Obj, ref, UNAVAILABLE } from './openapi-common.js'
import { ERROR_EXAMPLES, RULE_EXAMPLES } from './openapi-examples.js'
import { ETAG_HEADER, historyPaths, IF_MATCH, IF_NONE_MATCH, PRECONDITION_FAILED } from './openapi-history.js'
import { MAX_CHANGE_REASON } from './rule-limits.js'

/** What the view of a rule of the kind always carries (mapping.ts `fileDataToView`, rule-views.ts). */
function alwaysPresent(kind: RuleKind): string[] {
  const def = kindDef(kind)
  const out: string[] = []
  // YAML-text fields are omitted when the file lacks them, unless a write requires them.
  for (const f of fieldsOf(kind)) if (!f.yamlText || f.requiredOnWrite) out.push(f.api)
  if (def.companion) out.push(def.companion.apiField)
  const metadata = new Set(['createdAt', 'createdBy', 'lastModified', 'lastModifiedBy', 'warnings'])
  for (const f of extraFieldsOf(kind)) if (metadata.has(f.api)) out.push(f.api)
  return out
}

let portableIdPattern_: string | undefined

/**
 * The id pattern without Unicode property escapes: the server's needs the `u` flag, which many
 * validators do not set (Spectral's ajv, most code generators), and without it `\p{Cc}` is read as
 * the letters `p{Cc}`. The same class spelt as `\uXXXX` ranges over the BMP means the same with or
 * without the flag; surrogates stay allowed (without the flag they are the halves of every astral
 * character), so only the server refuses the few astral format and private-use characters.
 */
function portableIdPattern(): string {
  if (portableIdPattern_ === undefined) {
    const allowed = new RegExp(ID_PATTERN, 'u')
    const hex = (n: number) => `\\u${n.toString(16).padStart(4, '0')}`
    const ranges: string[] = []
    let start = -1
    for (let c = 0; c <= 0x10000; c++) {
      const forbidden = c < 0x10000 && (c < 0xd800 || c > 0xdfff) && !allowed.test(`a${String.fromCharCode(c)}a`)
      if (forbidden && start < 0) start = c
      if (!forbidden && start >= 0) {
        ranges.push(start === c - 1 ? hex(start) : `${hex(start)}-${hex(c - 1)}`)
        start = -1
      }
    }
    portableIdPattern_ = `^(?! )(?!.* $)[^${ranges.join('')}]+$`
  }
  return portableIdPattern_
}

function withPortableId(schema: { properties: Record<string, Obj> }): { properties: Record<string, Obj> } {
  const id = schema.properties.id
  return id ? { ...schema, properties: { ...schema.properties, id: { ...id, pattern: portableIdPattern() } } } : schema
}

export function kindSchemas(kind: RuleKind): Record<string, Obj> {
  const def = kindDef(kind)
  const response = withPortableId(responseSchema(kind) as { properties: Record<string, Obj> })
  const write = withPortableId(writeSchema(kind) as { properties: Record<string, Obj> })
  // Read-only fields may be sent back (GET → edit → PUT) and are ignored, whatever their value.
  const readOnly = Object.fromEntries(
    [...readOnlyFieldsOf(kind)].map((f) => [
      f,
      { ...response.properties[f], readOnly: true, description: 'Read-only: ignored in writes.' },
    ]),
  )
  return {
    [def.title]: {
      ...response,
      description: `A ${kind} rule as the API returns it.`,
      required: alwaysPresent(kind),
    },
    [`${def.title}Write`]: {
      ...write,
      description: `A ${kind} rule as a client sends it. The read-only fields of a rule read back with GET may be sent along; they are ignored.`,
      properties: { ...write.properties, ...readOnly },
    },
    [`${def.title}Page`]: {
      type: 'object',
      description: `One page of ${kind} rules, in id order.`,
      required: ['results', 'next'],
      properties: {
        results: { type: 'array', items: ref(def.title) },
        next: { type: 'string', nullable: true, description: 'The `cursor` of the next page; null on the last page.' },
      },
    },
  }
}

export function kindPaths(kind: RuleKind): Record<string, unknown> {
  const def = kindDef(kind)
  const name = def.title
  const noun = `${kind} rule`
  const q = (n: string, schema: Obj, description: string) => ({
    name: n,
    in: 'query',
    required: false,
    schema,
    description,
  })
  const bool = (d: boolean) => ({ type: 'boolean', default: d })
  const list = { type: 'array', items: { type: 'string' } }
  const includePython = def.pythonView
    ? [q('include-python', bool(false), 'Also return `pythonBody`, the rule as the Python it is evaluated as.')]
    : []
  const listParams = [
    q('cursor', { type: 'string' }, 'The `next` of the previous page.'),
    q('limit', { type: 'integer', minimum: 1, maximum: 1000, default: 100 }, 'Page size.'),
    q('name-contains', { type: 'string' }, 'Case-insensitive substring of the id or of displayName.'),
    q('state', { type: 'string', enum: ['enabled', 'disabled'] }, 'Only enabled or only disabled rules.'),
    q('severity', list, 'Any of these severities (comma-separated or repeated).'),
    q('tag', list, 'Has any of these tags (case-insensitive).'),
    q('created-by', { type: 'string' }, 'createdBy.id equals this.'),
    q('last-modified-by', { type: 'string' }, 'lastModifiedBy.id equals this.'),
    ...def.listFilters.map((f) =>
      q(f.param, list, `${f.description.charAt(0).toUpperCase()}${f.description.slice(1)}.`),
    ),
    ...includePython,
  ]
  const writeParams = [
    q('run-tests-first', bool(true), 'Run the unit tests before saving; a failing test saves nothing (400).'),
    q('run-tests-only', bool(false), 'Run the unit tests and save nothing (204 when every test passes).'),
    {
      name: 'X-Change-Reason',
      in: 'header',
      required: false,
      schema: { type: 'string', maxLength: MAX_CHANGE_REASON },
      description:
        'Becomes the body of the commit message. Its bytes are read as UTF-8 (so any script works, as curl sends it); bytes that are not valid UTF-8 are read as Latin-1. At most 2,000 characters.',
    },
  ]
  const common = { ...AUTH_ERRORS, '501': NOT_IMPLEMENTED, '503': UNAVAILABLE }
  const example = RULE_EXAMPLES[kind]
  const body = {
    required: true,
    description: `The ${noun}. Read-only fields are ignored.`,
    content: json(ref(`${name}Write`), example?.write),
  }
  const ok = (d: string) => ({ description: d, headers: ETAG_HEADER, content: json(ref(name), example?.read) })
  const invalid = err(
    'The body is invalid (every problem, each with a JSON pointer and, inside a YAML-text field, line and column), or a unit test failed (`testResults`); nothing was saved.',
    ERROR_EXAMPLES.invalid,
  )
  const tooLarge = err('The body, a field or the rule file is larger than the configured limit.')
  const notJson = err('The body is not `application/json`.')
  const idParam = {
    name: 'id',
    in: 'path',
    required: true,
    schema: { type: 'string' },
    description: 'The rule id (`RuleID`).',
  }
  const tag = [name]
  return {
    [`/${def.apiPath}`]: {
      get: {
        tags: tag,
        summary: `List ${noun}s`,
        description: `Pages through the ${noun}s of the served revision in id order, filtered. Needs View Rules. A walk with \`cursor\` never repeats an id and never skips one that stayed unchanged.`,
        operationId: `list${name}s`,
        parameters: listParams,
        responses: {
          '200': {
            description: 'A page of rules.',
            content: json(ref(`${name}Page`), example ? { results: [example.read], next: null } : undefined),
          },
          '400': err('An unknown or malformed query parameter.'),
          ...common,
        },
      },
      post: {
        tags: tag,
        summary: `Create a ${noun}`,
        description: `Validates the ${noun}, runs its unit tests (unless \`run-tests-first=false\`) and commits it as a new file. Needs Manage Rules. Answers **200** with the saved rule, as every successful POST of this API does (a POST names no resource of its own, so it does not answer 201 with a Location); compare PUT, which answers 201 when it creates.`,
        operationId: `create${name}`,
        parameters: writeParams,
        requestBody: body,
        responses: {
          '200': ok('The saved rule.'),
          '204': { description: '`run-tests-only=true`: every test passed; nothing was saved.' },
          '400': invalid,
          '409': err('A rule with this id (ignoring case) exists.'),
          '413': tooLarge,
          '415': notJson,
          ...common,
        },
      },
    },
    [`/${def.apiPath}/{id}`]: {
      parameters: [idParam],
      get: {
        tags: tag,
        summary: `Get a ${noun}`,
        description: `The ${noun} with this id in the served revision, with its history metadata and warnings. Needs View Rules.`,
        operationId: `get${name}`,
        parameters: includePython,
        responses: { '200': ok('The rule.'), '404': err('No rule of this kind has this id.'), ...common },
      },
      put: {
        tags: tag,
        summary: `Create or replace a ${noun}`,
        description: `Replaces the ${noun} with this id, or creates it: **200** when it existed (replaced, or unchanged when the body says what the file says), **201** when this request created it. The body's id, when given, must equal the path's. A rule read with GET may be sent back as it is, edited: read-only fields are ignored. Unit tests run first unless \`run-tests-first=false\`. Needs Manage Rules.`,
        operationId: `replace${name}`,
        parameters: [...writeParams, IF_MATCH, IF_NONE_MATCH],
        requestBody: body,
        responses: {
          '200': ok('The rule existed and was replaced (or was unchanged).'),
          '201': ok('The rule did not exist and was created.'),
          '204': { description: '`run-tests-only=true`: every test passed; nothing was saved.' },
          '400': invalid,
          '409': err('The id belongs to a rule of another kind.'),
          '412': PRECONDITION_FAILED,
          '413': tooLarge,
          '415': notJson,
          ...common,
        },
      },
      delete: {
        tags: tag,
        summary: `Delete a ${noun}`,
        description: `Removes the ${noun}'s files in one commit. Needs Manage Rules.`,
        operationId: `delete${name}`,
        parameters: [writeParams[2], IF_MATCH],
        responses: {
          '204': { description: 'Deleted.' },
          '400': err('An unknown query parameter, or a change reason that is too long.'),
          '404': err('No rule of this kind has this id.'),
          '412': PRECONDITION_FAILED,
          ...common,
        },
      },
    },
    ...historyPaths(kind, common, writeParams[2]!, example?.read),
  }
}
