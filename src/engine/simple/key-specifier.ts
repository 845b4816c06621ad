// Key specifiers compiled to resolvers: `(event) => MISSING | null | value`. Missing is a unique
// symbol so that no JSON value can be mistaken for it and every typed condition rejects it for
// free. Lookups are own-property only: `constructor` or `__proto__` in a path never reach
// Object.prototype. A `[*]` maps the rest of the path over a list, dropping missing and null.
import type { KeySpec, PathSegment } from './ast.js'

/** The "missing" state of a resolution (a segment absent, of the wrong type, or out of range). */
export const MISSING: unique symbol = Symbol('missing')
export type Missing = typeof MISSING

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

function fieldStep(name: string): Resolver {
  // Names that exist on Object.prototype need the own-property check; all others can trust
  // `undefined` (JSON has no undefined) and skip it, which keeps the common lookup fast.
  if (name in Object.prototype) {
    return (node) =>
      node !== null && typeof node === 'object' && !Array.isArray(node) && hasOwn.call(node, name)
        ? (node as Record<string, unknown>)[name]
        : MISSING
  }
  return (node) => {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return MISSING
    const v = (node as Record<string, unknown>)[name]
    return v === undefined ? MISSING : v
  }
}

function indexStep(index: number): Resolver {
  return (node) => (Array.isArray(node) && index < node.length ? node[index] : MISSING)
}

/** A walk without wildcards: specialised for the short paths rules mostly use. */
function compilePlain(segments: readonly PathSegment[]): Resolver {
  const steps = segments.map((s) => (s.kind === 'field' ? fieldStep(s.name) : indexStep((s as { index: number }).index)))
  if (steps.length === 0) return (node) => node
  if (steps.length === 1) return steps[0]!
  if (steps.length === 2) {
    const [a, b] = steps as [Resolver, Resolver]
    return (node) => {
      const v = a(node)
      return v === MISSING ? MISSING : b(v)
    }
  }
  return (node) => {
    let v: unknown = node
    for (let i = 0; i < steps.length; i++) {
      v = steps[i]!(v)
      if (v === MISSING) return MISSING
    }
    return v
  }
}

export function compileSegments(segments: readonly PathSegment[]): Resolver {
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
