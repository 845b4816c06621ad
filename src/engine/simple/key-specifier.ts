// Key specifiers compiled to resolvers: `(event) => MISSING | null | value`. Missing is a unique
// symbol so that no JSON value can be mistaken for it and every typed condition rejects it for
// free. Lookups are own-property only: `constructor` or `__proto__` in a path never reach
// Object.prototype. A `[*]` maps the rest of the path over a list, dropping missing and null.
import type { KeySpec, PathSegment } from './ast.js'

/** The "missing" state of a resolution (a segment absent, of the wrong type, or out of range). */
export const MISSING: unique symbol = Symbol('missing')

/** Resolves a key specifier against one event (or list element). */
export type Resolver = (event: unknown) => unknown

const hasOwn = Object.prototype.hasOwnProperty

/** The key specifier as one walk: what every kind means in terms of KeyPath segments. */
export function keySpecSegments(spec: KeySpec): readonly PathSegment[] {
  switch (spec.kind) {
    case 'key':
      return [{ kind: 'field', name: spec.name }]
    case 'deepKey':
      return spec.steps.map((s) => (typeof s === 'number' ? { kind: 'index', index: s } : { kind: 'field', name: s }))
    case 'keyPath':
      return spec.segments
    case 'enrichment':
      return [
        { kind: 'field', name: 'p_enrichment' },
        { kind: 'field', name: spec.table },
        { kind: 'field', name: spec.selector },
        ...spec.segments,
      ]
  }
}

/** Human text of a key specifier for messages ("KeyPath a.b[0]"). */
export function describeKeySpec(spec: KeySpec): string {
  switch (spec.kind) {
    case 'key':
      return `Key ${spec.name}`
    case 'deepKey':
      return `DeepKey [${spec.steps.join(', ')}]`
    case 'keyPath':
      return `KeyPath ${spec.text}`
    case 'enrichment':
      return `Enrichment ${spec.table}.${spec.selector}.${spec.fieldPath}`
  }
}

export function compileKeySpec(spec: KeySpec): Resolver {
  return compileSegments(keySpecSegments(spec))
}

const OBJECT_PROTO = Object.prototype

/**
 * One object-field step. JSON values are never functions and never Object.prototype itself, so
 * only a value that looks inherited (every Object.prototype member is a function, `__proto__`
 * yields the prototype) pays for the own-property check; the common lookup stays one load.
 * A top-level function (not a closure) so that the optimiser inlines it into every caller.
 */
export function getField(node: unknown, name: string): unknown {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return MISSING
  const v = (node as Record<string, unknown>)[name]
  if (v === undefined) return MISSING
  if ((typeof v === 'function' || v === OBJECT_PROTO) && !hasOwn.call(node, name)) return MISSING
  return v
}

function getIndex(node: unknown, index: number): unknown {
  return Array.isArray(node) && index < node.length ? node[index] : MISSING
}

/** The field names of a path made only of object fields (the common case), else null. */
export function plainFieldNames(spec: KeySpec): string[] | null {
  const names: string[] = []
  for (const s of keySpecSegments(spec)) {
    if (s.kind !== 'field') return null
    names.push(s.name)
  }
  return names
}

/** A walk without wildcards: specialised for the short all-field paths rules mostly use. */
function compilePlain(segments: readonly PathSegment[]): Resolver {
  if (segments.length === 0) return (node) => node
  if (segments.every((s) => s.kind === 'field')) {
    const names = segments.map((s) => (s as { name: string }).name)
    if (names.length === 1) {
      const a = names[0]!
      return (node) => getField(node, a)
    }
    if (names.length === 2) {
      const [a, b] = names as [string, string]
      return (node) => {
        const v = getField(node, a)
        return v === MISSING ? MISSING : getField(v, b)
      }
    }
  }
  return (node) => {
    let v: unknown = node
    for (let i = 0; i < segments.length; i++) {
      const s = segments[i]!
      v = s.kind === 'field' ? getField(v, s.name) : getIndex(v, (s as { index: number }).index)
      if (v === MISSING) return MISSING
    }
    return v
  }
}

function compileSegments(segments: readonly PathSegment[]): Resolver {
  const wild = segments.findIndex((s) => s.kind === 'wildcard')
  if (wild < 0) return compilePlain(segments)
  const head = compilePlain(segments.slice(0, wild))
  const rest = segments.slice(wild + 1)
  const tail = compileSegments(rest)
  const flatten = rest.some((s) => s.kind === 'wildcard')
  return (node) => {
    const base = head(node)
    if (!Array.isArray(base)) return MISSING
    const out: unknown[] = []
    for (let i = 0; i < base.length; i++) {
      const v = tail(base[i])
      if (v === MISSING || v === null) continue
      if (flatten) for (const x of v as unknown[]) out.push(x)
      else out.push(v)
    }
    return out
  }
}
