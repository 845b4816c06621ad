// Turns the JSON Schema validator's errors (ajv, allErrors, verbose) into configuration problems:
// a key path instead of a JSON pointer, an unknown key with the nearest known key, a missing key
// at its own path, and the allowed values of an enum spelled out.
import type { ErrorObject } from 'ajv'
import { isPlainObject } from '../is-plain-object.js'
import { type ConfigProblem, type KeyPath, unknownKey } from './problems.js'

/** `/destinations/2/url` → ['destinations', 2, 'url'] (array indexes as numbers). */
function pathOf(pointer: string, data: unknown): Array<string | number> {
  const out: Array<string | number> = []
  let cur = data
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    const key = Array.isArray(cur) && /^\d+$/.test(seg) ? Number(seg) : seg
    out.push(key)
    cur = isPlainObject(cur) || Array.isArray(cur) ? (cur as Record<string | number, unknown>)[key] : undefined
  }
  return out
}

function knownKeysOf(schema: unknown): string[] {
  return isPlainObject(schema) && isPlainObject(schema.properties) ? Object.keys(schema.properties) : []
}

const TYPE_NAMES: Record<string, string> = {
  object: 'a map',
  array: 'a list',
  null: 'null',
  integer: 'an integer',
}

function messageOf(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>
  switch (e.keyword) {
    case 'type': {
      const types = Array.isArray(p.type) ? p.type : String(p.type).split(',')
      return `must be ${types.map((t) => TYPE_NAMES[String(t)] ?? `a ${String(t)}`).join(' or ')}`
    }
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).map((v) => String(v)).join(', ')}`
    case 'pattern':
      return `must match ${String(p.pattern)}`
    default:
      return e.message ?? 'is invalid'
  }
}

export function schemaProblems(errors: readonly ErrorObject[], data: unknown): ConfigProblem[] {
  const out: ConfigProblem[] = []
  for (const e of errors) {
    const at: KeyPath = pathOf(e.instancePath, data)
    const p = e.params as Record<string, unknown>
    if (e.keyword === 'additionalProperties')
      out.push(unknownKey(at, String(p.additionalProperty), knownKeysOf(e.parentSchema)))
    else if (e.keyword === 'required') out.push({ path: [...at, String(p.missingProperty)], message: 'is required' })
    else out.push({ path: at, message: messageOf(e) })
  }
  return out
}
