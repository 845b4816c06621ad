// Validation of key specifiers (`Key`, `DeepKey`, `KeyPath`, `Enrichment`) wherever they appear:
// inside match expressions, as multi-key operands, in `AlertContext` and `GroupBy`. Each problem
// points at the offending key in the file form.
import type { DataPath } from '../../rules/model.js'
import type { KeySpec } from './ast.js'
import { parseKeyPath } from './key-path.js'
import { caseHint, typeName, type ProblemSink } from './problems.js'
import { isPlainObject } from '../../is-plain-object.js'

export const KEY_SPEC_KEYS = ['Key', 'DeepKey', 'KeyPath', 'Enrichment'] as const
export type KeySpecKey = (typeof KEY_SPEC_KEYS)[number]
const ENRICHMENT_KEYS = ['Table', 'Selector', 'FieldPath'] as const

export function keySpecKeysIn(map: Record<string, unknown>): KeySpecKey[] {
  return KEY_SPEC_KEYS.filter((k) => Object.hasOwn(map, k))
}

/** Parses the key specifier stored under `key` of `map` (the caller checked there is exactly one). */
export function parseKeySpecEntry(
  map: Record<string, unknown>,
  key: KeySpecKey,
  path: DataPath,
  sink: ProblemSink,
): KeySpec | null {
  const raw = map[key]
  const at = [...path, key]
  const max = sink.limits.maxPathSegments
  switch (key) {
    case 'Key':
      if (typeof raw !== 'string' || raw === '') {
        sink.error(
          at,
          `Key must be a non-empty string, not ${typeName(raw)}${typeof raw === 'number' ? ' (quote it)' : ''}`,
        )
        return null
      }
      return { kind: 'key', name: raw }
    case 'DeepKey': {
      if (!Array.isArray(raw) || raw.length === 0) {
        sink.error(at, `DeepKey must be a non-empty list of field names and array indexes, not ${typeName(raw)}`)
        return null
      }
      if (raw.length > max) {
        sink.error(at, `DeepKey has ${raw.length} steps; at most ${max} are allowed`)
        return null
      }
      let ok = true
      raw.forEach((step, i) => {
        const fine = (typeof step === 'string' && step !== '') || (Number.isSafeInteger(step) && (step as number) >= 0)
        if (!fine) {
          ok = false
          sink.error(
            [...at, i],
            `a DeepKey step must be a field name (string) or an array index (integer ≥ 0), not ${sink.quote(step)}`,
          )
        }
      })
      return ok ? { kind: 'deepKey', steps: raw as Array<string | number> } : null
    }
    case 'KeyPath': {
      if (typeof raw !== 'string') {
        sink.error(at, `KeyPath must be a string such as a.b[0].c, not ${typeName(raw)}`)
        return null
      }
      const parsed = parseKeyPath(raw, max)
      if (!parsed.ok) {
        sink.error(at, `KeyPath ${sink.quote(raw)} ${parsed.message}`)
        return null
      }
      return { kind: 'keyPath', text: raw, segments: parsed.segments }
    }
    case 'Enrichment':
      return parseEnrichment(raw, at, sink)
  }
}

function parseEnrichment(raw: unknown, at: DataPath, sink: ProblemSink): KeySpec | null {
  if (!isPlainObject(raw)) {
    sink.error(at, `Enrichment must be a map with Table, Selector and FieldPath, not ${typeName(raw)}`)
    return null
  }
  let ok = true
  for (const k of Object.keys(raw)) {
    if (!(ENRICHMENT_KEYS as readonly string[]).includes(k)) {
      ok = false
      sink.error(
        [...at, k],
        `unknown key ${sink.quote(k)} in Enrichment${caseHint(k, ENRICHMENT_KEYS)}; allowed: Table, Selector, FieldPath`,
      )
    }
  }
  for (const k of ENRICHMENT_KEYS) {
    const v = raw[k]
    if (typeof v !== 'string' || v === '') {
      ok = false
      sink.error(
        v === undefined ? at : [...at, k],
        v === undefined ? `Enrichment needs ${k}` : `Enrichment ${k} must be a non-empty string, not ${typeName(v)}`,
      )
    }
  }
  if (!ok) return null
  const fieldPath = raw.FieldPath as string
  const parsed = parseKeyPath(fieldPath, sink.limits.maxPathSegments)
  if (!parsed.ok) {
    sink.error([...at, 'FieldPath'], `FieldPath ${sink.quote(fieldPath)} ${parsed.message}`)
    return null
  }
  return {
    kind: 'enrichment',
    table: raw.Table as string,
    selector: raw.Selector as string,
    fieldPath,
    segments: parsed.segments,
  }
}

/**
 * A map that is nothing but one key specifier (multi-key operands, `KeyValue`, `GroupBy` items).
 */
export function parseKeySpecMap(raw: unknown, path: DataPath, sink: ProblemSink, what: string): KeySpec | null {
  if (!isPlainObject(raw)) {
    sink.error(
      path,
      `${what} must be a key specifier (a map with one of Key, DeepKey, KeyPath, Enrichment), not ${typeName(raw)}`,
    )
    return null
  }
  const present = keySpecKeysIn(raw)
  let ok = true
  for (const k of Object.keys(raw)) {
    if (!(KEY_SPEC_KEYS as readonly string[]).includes(k)) {
      ok = false
      sink.error(
        [...path, k],
        `unknown key ${sink.quote(k)} in ${what}${caseHint(k, KEY_SPEC_KEYS)}; a key specifier has exactly one of Key, DeepKey, KeyPath, Enrichment`,
      )
    }
  }
  if (present.length !== 1) {
    if (present.length === 0 && ok) sink.error(path, `${what} needs one of Key, DeepKey, KeyPath, Enrichment`)
    if (present.length > 1)
      sink.error(path, `${what} has ${present.length} key specifiers (${present.join(', ')}); use exactly one`)
    return null
  }
  const spec = parseKeySpecEntry(raw, present[0]!, path, sink)
  return ok ? spec : null
}
