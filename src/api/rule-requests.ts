// A write body → the rule in file form, or a 400 listing every problem at once: schema errors as
// JSON pointers, YAML-text fields parsed with line and column, the file form's structural and
// language problems (the kind's engine) mapped back to the field they came from. Then the unit
// tests (run-tests-first / run-tests-only).
import { RulekeeperError, validationFailed, type FieldProblem } from '../errors.js'
import type { EngineContext, EngineRegistry, TestOutcome } from '../engine/engine.js'
import { TEST_KEYS, RULE_OUTPUT_KEYS } from '../rules/fields.js'
import { fieldsOf, kindDef } from '../rules/kinds/index.js'
import { bodyToFileData } from '../rules/mapping.js'
import type { RuleFile, RuleKind, RuleProblem } from '../rules/model.js'
import { checkRuleData } from '../rules/rule-file.js'
import { jsonPointer, readOnlyFieldsOf, validateWriteBody } from '../rules/schemas.js'
import { checkRule } from '../engine/check-rule.js'
import { checkYamlOffThread, OFFLOAD_MIN_CHARS } from '../rules/yaml-offload.js'
import { locate, parseYaml, type ParsedYaml, type YamlProblem } from '../rules/yaml-text.js'
import { isPlainObject } from '../is-plain-object.js'

interface TextField {
  parsed?: ParsedYaml
  /** Whether the text was a document with the field's file key on top (`Detection: …`). */
  wrapped: boolean
}

export interface PreparedRule {
  rule: RuleFile
  data: Record<string, unknown>
}

const invert = (t: Record<string, string>) => Object.fromEntries(Object.entries(t).map(([a, b]) => [b, a]))
const TEST_API_KEY = invert(TEST_KEYS)
const OUTPUT_API_KEY = invert(RULE_OUTPUT_KEYS)

/**
 * Parses one YAML-text field; returns the structure or pushes located problems. `offThread` holds
 * the problems a worker found in a large text: such a text is not parsed again here.
 */
function parseTextField(
  api: string,
  fileKey: string,
  text: string,
  problems: FieldProblem[],
  texts: Map<string, TextField>,
  offThread?: YamlProblem[],
): unknown {
  if (offThread && offThread.length > 0) {
    if (api === 'alertTitle') return text.replace(/\n+$/, '')
    for (const e of offThread)
      problems.push({ path: `/${api}`, message: `invalid YAML: ${e.message}`, line: e.line, column: e.column })
    return undefined
  }
  const parsed = parseYaml(text)
  if (api === 'alertTitle') {
    // A title is a string; text that is not a YAML string (e.g. "{user} logged in") is taken literally.
    const v = parsed.errors.length === 0 ? parsed.value : undefined
    const inner =
      v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 && fileKey in v
        ? (v as Record<string, unknown>)[fileKey]
        : v
    return typeof inner === 'string' ? inner : text.replace(/\n+$/, '')
  }
  if (parsed.errors.length > 0) {
    for (const e of parsed.errors)
      problems.push({ path: `/${api}`, message: `invalid YAML: ${e.message}`, line: e.line, column: e.column })
    return undefined
  }
  let value = parsed.value
  let wrapped = false
  if (
    value &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.keys(value).length === 1 &&
    fileKey in value
  ) {
    value = (value as Record<string, unknown>)[fileKey]
    wrapped = true
  }
  texts.set(api, { parsed, wrapped })
  if (value === null || value === undefined) {
    problems.push({ path: `/${api}`, message: `${api} is empty` })
    return undefined
  }
  const needsList = api !== 'alertTitle'
  if (needsList && !Array.isArray(value)) {
    problems.push({ path: `/${api}`, message: `${api} must be a YAML list`, ...locate(parsed, []) })
    return undefined
  }
  return value
}

/** A problem found on the file form → the pointer (and line/column) in the request body. */
function toFieldProblem(kind: RuleKind, p: RuleProblem, texts: Map<string, TextField>): FieldProblem {
  const [first, ...rest] = p.path as Array<string | number>
  // Problems of the companion file (a scheduled rule's Python module) point at its API field
  // (`body`), with the line in its source.
  const companion = kindDef(kind).companion
  if (companion && first === companion.fileKey)
    return {
      path: `/${companion.apiField}`,
      message: p.message,
      ...(p.line !== undefined ? { line: p.line, column: p.column ?? 1 } : {}),
    }
  const field = fieldsOf(kind).find((f) => f.file === first)
  if (!field) return { path: first === undefined ? '' : jsonPointer([String(first)]), message: p.message }
  const text = texts.get(field.api)
  if (field.yamlText && text?.parsed) {
    const loc = locate(text.parsed, text.wrapped ? p.path : rest)
    return { path: `/${field.api}`, message: p.message, ...loc }
  }
  const parts: Array<string | number> = [field.api]
  if (field.api === 'tests') {
    const [i, key, j, sub, ...more] = rest
    if (i !== undefined) parts.push(i)
    if (key !== undefined) parts.push(TEST_API_KEY[String(key)] ?? key)
    if (j !== undefined) parts.push(j)
    if (sub !== undefined) parts.push(OUTPUT_API_KEY[String(sub)] ?? sub)
    parts.push(...more)
  } else parts.push(...rest)
  return { path: jsonPointer(parts), message: p.message }
}

/**
 * Validates a write body for `kind` and maps it to file form. `pathId` is the id in the URL of a
 * PUT (the body's id must match it; a body without id takes it).
 */
export async function prepareRule(
  kind: RuleKind,
  input: unknown,
  pathId: string | undefined,
  engines: EngineRegistry,
  ctx: EngineContext,
): Promise<PreparedRule> {
  if (!isPlainObject(input)) {
    throw validationFailed([{ path: '', message: 'the body must be a JSON object' }])
  }
  const readOnly = readOnlyFieldsOf(kind)
  // A prototype-less copy: a `__proto__` key stays an ordinary (unknown) field, never a prototype.
  const body: Record<string, unknown> = Object.create(null) as Record<string, unknown>
  for (const [k, v] of Object.entries(input)) if (!readOnly.has(k)) body[k] = v
  const problems: FieldProblem[] = []
  if (pathId !== undefined) {
    if (body.id === undefined) body.id = pathId
    else if (body.id !== pathId)
      problems.push({
        path: '/id',
        message: `id ${JSON.stringify(body.id)} does not match the id in the path ${JSON.stringify(pathId)}`,
      })
  }
  problems.push(...validateWriteBody(kind, body))
  const texts = new Map<string, TextField>()
  const structures: Record<string, unknown> = {}
  const textFields = fieldsOf(kind).filter((f) => f.yamlText && typeof body[f.api] === 'string')
  // Large texts are checked in the worker first: one that fails there never costs the event loop.
  const offThread = await Promise.all(
    textFields.map((f) =>
      (body[f.api] as string).length >= OFFLOAD_MIN_CHARS ? checkYamlOffThread(body[f.api] as string) : undefined,
    ),
  )
  for (const [i, f] of textFields.entries()) {
    const v = parseTextField(f.api, f.file, body[f.api] as string, problems, texts, offThread[i])
    if (v !== undefined) structures[f.api] = v
  }
  // Schema and YAML problems do not stop here: the file form is checked too (structure and
  // language), so one 400 lists every problem of the body.
  const companion = kindDef(kind).companion
  const pythonSource = companion ? (body[companion.apiField] as string) : undefined
  const data = bodyToFileData(kind, body, structures, companion?.placeholder)
  const rule: RuleFile = { kind, id: body.id as string, path: '', data, pythonSource }
  // The companion's name is a placeholder here: its problems are the engine's to find.
  const structural = checkRuleData(kind, data, pythonSource).filter(
    (p) => companion === undefined || p.path[0] !== companion.fileKey,
  )
  const engine = engines[kind]
  const checked = checkRule(rule, structural, engine, ctx)
  // On an API write a reference to a rule that does not exist is an error, not a warning.
  const fileProblems = [...checked.errors, ...checked.warnings.filter((w) => w.code === 'DanglingReference')]
  // What the body's schema or YAML already said of a field is not said again from the file form.
  const said = (p: FieldProblem) =>
    problems.some((q) => q.path !== '' && (p.path === q.path || p.path.startsWith(`${q.path}/`)))
  problems.push(...fileProblems.map((p) => toFieldProblem(kind, p, texts)).filter((p) => !said(p)))
  if (problems.length > 0) throw validationFailed(problems)
  // Checks that run code (a Python module's import) come once the rest is valid.
  if (engine?.checkAsync) {
    const ran = await engine.checkAsync(rule, ctx)
    if (ran.length > 0) throw validationFailed(ran.map((p) => toFieldProblem(kind, p, texts)))
  }
  // The engines saw a module name; the writer picks the real file name beside the YAML.
  const fileData = { ...data }
  if (companion) delete fileData[companion.fileKey]
  return { rule, data: fileData }
}

export function hasTests(rule: RuleFile): boolean {
  return Array.isArray(rule.data.Tests) && rule.data.Tests.length > 0
}

/** Runs the rule's tests; never reports a pass for a test that did not run. */
export async function runRuleTests(
  rule: RuleFile,
  engines: EngineRegistry,
  ctx: EngineContext,
): Promise<{ passed: boolean; testResults: unknown[] }> {
  const engine = engines[rule.kind]
  const def = kindDef(rule.kind)
  if (!engine)
    throw new RulekeeperError(
      'NotImplemented',
      `cannot run the tests of this ${rule.kind} rule: ${def.missingEngine}; save it with run-tests-first=false to skip them`,
    )
  const outcomes = await engine.runTests(rule, ctx)
  const testResults = outcomes.map((o: TestOutcome) => def.tests.result(o))
  return { passed: outcomes.every((o) => o.passed === true), testResults }
}
