// Alert fields of a simple rule (spec §1.5): the `AlertTitle` template (parse once, render per
// event), `AlertContext`, `DynamicSeverities` and the `GroupBy` dedup key, compiled to functions
// of one event. Rendering never throws on event data: missing and null render as '', lists and
// objects as compact JSON.
import type { Severity } from '../../rules/model.js'
import type { ContextEntry, KeySpec, RuleTree, SeverityRule, TitlePart } from './ast.js'
import { compileAll, type Predicate } from './compile.js'
import { parseKeyPath } from './key-path.js'
import { compileKeySpec, MISSING, type Resolver } from './key-specifier.js'

export type TemplateParse = { ok: true; parts: TitlePart[] } | { ok: false; messages: string[] }

/**
 * `{path}` placeholders (KeyPath syntax, surrounding spaces trimmed); everything else is literal,
 * including a `{` with no `}` after it, an empty `{}`, and a `{` followed by another `{`.
 */
export function parseTitleTemplate(text: string, maxSegments: number): TemplateParse {
  const parts: TitlePart[] = []
  const messages: string[] = []
  let literal = ''
  let i = 0
  while (i < text.length) {
    const open = text.indexOf('{', i)
    if (open < 0) break
    const close = text.indexOf('}', open + 1)
    const nextOpen = text.indexOf('{', open + 1)
    const inner = close < 0 ? '' : text.slice(open + 1, close).trim()
    if (close < 0 || (nextOpen >= 0 && nextOpen < close) || inner === '') {
      literal += text.slice(i, open + 1)
      i = open + 1
      continue
    }
    literal += text.slice(i, open)
    const parsed = parseKeyPath(inner, maxSegments)
    if (!parsed.ok) {
      const shown = inner.length > 60 ? `${inner.slice(0, 60)}…` : inner
      messages.push(`the placeholder {${shown}} at character ${open + 1}: KeyPath ${parsed.message}`)
    } else {
      if (literal !== '') parts.push({ kind: 'text', text: literal })
      literal = ''
      parts.push({ kind: 'placeholder', key: { kind: 'keyPath', text: inner, segments: parsed.segments } })
    }
    i = close + 1
  }
  literal += text.slice(i)
  if (literal !== '') parts.push({ kind: 'text', text: literal })
  return messages.length > 0 ? { ok: false, messages } : { ok: true, parts }
}

/** How a resolved value appears inside a title (the transpiler must render the same way). */
function renderValue(v: unknown): string {
  if (v === MISSING || v === null || v === undefined) return ''
  if (typeof v === 'string') return v
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  return JSON.stringify(v)
}

/** Cuts to `max` Unicode code points (never in the middle of a surrogate pair). */
function cutTitle(title: string, max: number): string {
  if (title.length <= max) return title
  let count = 0
  let i = 0
  while (i < title.length && count < max) {
    const c = title.charCodeAt(i)
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < title.length ? 2 : 1
    count++
  }
  return title.slice(0, i)
}

export interface AlertFunctions {
  title(event: unknown): string
  dedup(event: unknown): string
  alertContext(event: unknown): Record<string, unknown>
  severity(event: unknown): Severity | null
}

function compileTitle(
  parts: readonly TitlePart[] | undefined,
  fallback: string,
  maxLength: number,
): (event: unknown) => string {
  if (parts === undefined) {
    const fixed = cutTitle(fallback, maxLength)
    return () => fixed
  }
  const pieces: Array<string | Resolver> = parts.map((p) => (p.kind === 'text' ? p.text : compileKeySpec(p.key)))
  return (ev) => {
    let out = ''
    for (const p of pieces) out += typeof p === 'string' ? p : renderValue(p(ev))
    return cutTitle(out, maxLength)
  }
}

function compileAlertContext(
  entries: readonly ContextEntry[] | undefined,
): (event: unknown) => Record<string, unknown> {
  const compiled = (entries ?? []).map((e) => [e.keyName, compileKeySpec(e.key)] as const)
  // fromEntries defines own properties, so a KeyName such as __proto__ stays plain data.
  return (ev) =>
    Object.fromEntries(
      compiled.map(([name, resolve]) => {
        const v = resolve(ev)
        return [name, v === MISSING ? null : v]
      }),
    )
}

function compileSeverity(
  rules: readonly SeverityRule[] | undefined,
  base: Severity | null,
): (event: unknown) => Severity | null {
  const compiled: Array<[Severity, Predicate]> = (rules ?? []).map((r) => [r.changeTo, compileAll(r.conditions)])
  return (ev) => {
    for (const [severity, holds] of compiled) if (holds(ev)) return severity
    return base
  }
}

function compileDedup(
  groupBy: readonly KeySpec[] | undefined,
  title: (event: unknown) => string,
): (event: unknown) => string {
  if (groupBy === undefined) return title
  const resolvers = groupBy.map(compileKeySpec)
  return (ev) =>
    JSON.stringify(
      resolvers.map((r) => {
        const v = r(ev)
        return v === MISSING ? null : v
      }),
    )
}

export function compileAlertFunctions(tree: RuleTree, maxTitleLength: number): AlertFunctions {
  const title = compileTitle(tree.alertTitle, tree.fallbackTitle, maxTitleLength)
  return {
    title,
    dedup: compileDedup(tree.groupBy, title),
    alertContext: compileAlertContext(tree.alertContext),
    severity: compileSeverity(tree.dynamicSeverities, tree.severity),
  }
}
