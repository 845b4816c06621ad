// The condition function table: positive condition name → a builder that takes the operand once
// (at compile time, or per event for multi-key) and returns a test of one resolved value. Tests are
// typed (no string↔number coercion) and false on MISSING; a negated condition is built as the exact
// negation of its positive form, so it is true on a missing value.
import { CONDITIONS, type ConditionName, type OperandType, type PositiveConditionName } from './condition-names.js'
import { isGlobalAddress, isPrivateAddress, inNetwork, parseCidr, parseIpAddress, type IpNetwork } from './ip.js'
import { MISSING } from './key-specifier.js'
import { isPlainObject } from '../../is-plain-object.js'

/** A test of one resolved value (MISSING, null or a JSON value). */
export type ValueTest = (value: unknown) => boolean
type Builder = (operand: unknown) => ValueTest

const never: ValueTest = () => false
const lower = (v: unknown): unknown => (typeof v === 'string' ? v.toLowerCase() : v)

/** String conditions: apply to string values only, case-folded for the I forms. */
function stringTest(fold: boolean, test: (value: string, operand: string) => boolean): Builder {
  return (operand) => {
    if (typeof operand !== 'string') return never
    const op = fold ? operand.toLowerCase() : operand
    return fold
      ? (v) => typeof v === 'string' && test(v.toLowerCase(), op)
      : (v) => typeof v === 'string' && test(v, op)
  }
}

function equalsTest(fold: boolean): Builder {
  return (operand) => {
    const op = fold ? lower(operand) : operand
    if (fold && typeof op === 'string') return (v) => typeof v === 'string' && v.toLowerCase() === op
    return (v) => v === op
  }
}

/** String value: substring. List value: an element equals the operand or (string) contains it. */
function containsTest(fold: boolean): Builder {
  return (operand) => {
    const op = fold ? lower(operand) : operand
    if (typeof op === 'string') {
      const inString = (s: string) => (fold ? s.toLowerCase() : s).includes(op)
      return (v) => {
        if (typeof v === 'string') return inString(v)
        if (!Array.isArray(v)) return false
        for (const e of v) if (typeof e === 'string' && inString(e)) return true
        return false
      }
    }
    return (v) => Array.isArray(v) && v.includes(op)
  }
}

function numberTest(test: (value: number, operand: number) => boolean): Builder {
  return (operand) => {
    if (typeof operand !== 'number') return never
    return (v) => typeof v === 'number' && test(v, operand)
  }
}

/** Operands are a Set, so `has` is exactly the typed equality ('1' ≠ 1, 1 = 1.0). */
const isInTest: Builder = (operand) => {
  const set = new Set(Array.isArray(operand) ? operand : [operand])
  return (v) => {
    if (!Array.isArray(v)) return set.has(v)
    for (const e of v) if (set.has(e)) return true
    return false
  }
}

function ipTest(test: (text: string) => boolean): Builder {
  return () => (v) => typeof v === 'string' && test(v)
}

function cidrTest(listAware: boolean): Builder {
  return (operand) => {
    const net: IpNetwork | null = typeof operand === 'string' ? parseCidr(operand) : null
    if (net === null) return never
    const one = (e: unknown) => {
      if (typeof e !== 'string') return false
      const a = parseIpAddress(e)
      return a !== null && inNetwork(a, net)
    }
    if (!listAware) return one
    return (v) => (Array.isArray(v) ? v.some(one) : one(v))
  }
}

function isEmpty(v: unknown): boolean {
  if (v === MISSING || v === null || v === '') return true
  if (Array.isArray(v)) return v.length === 0
  if (isPlainObject(v)) {
    for (const _ in v) return false
    return true
  }
  return false
}

/** The table. Comprehension and constant conditions are structural and live in compile.ts. */
const CONDITION_TABLE: Readonly<Partial<Record<PositiveConditionName, Builder>>> = Object.freeze({
  Equals: equalsTest(false),
  IEquals: equalsTest(true),
  Contains: containsTest(false),
  IContains: containsTest(true),
  StartsWith: stringTest(false, (v, op) => v.startsWith(op)),
  IStartsWith: stringTest(true, (v, op) => v.startsWith(op)),
  EndsWith: stringTest(false, (v, op) => v.endsWith(op)),
  IEndsWith: stringTest(true, (v, op) => v.endsWith(op)),
  IsGreaterThan: numberTest((v, op) => v > op),
  IsGreaterThanOrEquals: numberTest((v, op) => v >= op),
  IsLessThan: numberTest((v, op) => v < op),
  IsLessThanOrEquals: numberTest((v, op) => v <= op),
  IsIn: isInTest,
  Exists: () => (v) => v !== MISSING,
  IsNull: () => (v) => v === MISSING || v === null,
  IsNullOrEmpty: () => isEmpty,
  IsIPAddress: ipTest((s) => parseIpAddress(s) !== null),
  IsIPv4Address: ipTest((s) => parseIpAddress(s)?.version === 4),
  IsIPv6Address: ipTest((s) => parseIpAddress(s)?.version === 6),
  IsIPAddressPublic: ipTest((s) => {
    const a = parseIpAddress(s)
    return a !== null && isGlobalAddress(a)
  }),
  IsIPAddressPrivate: ipTest((s) => {
    const a = parseIpAddress(s)
    return a !== null && isPrivateAddress(a)
  }),
  IsIPAddressInCIDR: cidrTest(false),
  CIDRContainsIPAddresses: cidrTest(true),
})

const isScalar = (v: unknown): boolean => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'

/** Whether an operand (from the file or, for multi-key, from the event) has the type a condition needs. */
export function operandFits(type: OperandType | undefined, operand: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof operand === 'string'
    case 'number':
      return typeof operand === 'number'
    case 'cidr':
      return typeof operand === 'string' && parseCidr(operand) !== null
    default:
      return isScalar(operand)
  }
}

/**
 * The positive test of a condition and whether the condition negates it. The compiler applies the
 * negation inline (one call less per evaluation); `buildConditionTest` wraps it.
 * An operand of the wrong type (possible only for multi-key, where it comes from the event) makes
 * the positive form false, hence the negated one true.
 * `IsIn` operands: a list of scalars, or one scalar standing for a one-element list.
 */
export function buildPositiveTest(name: ConditionName, operand: unknown): { test: ValueTest; negated: boolean } {
  const info = CONDITIONS[name]
  const positive = (info.negates ?? name) as PositiveConditionName
  const builder = CONDITION_TABLE[positive]
  if (builder === undefined) throw new Error(`${name} is not a value condition`)
  let test: ValueTest
  if (info.operand === 'value' && !operandFits(info.operandType, operand)) test = never
  else if (info.operand === 'values') {
    const list = Array.isArray(operand) ? operand.filter(isScalar) : isScalar(operand) ? [operand] : []
    test = builder(list)
  } else test = builder(operand)
  return { test, negated: info.negates !== undefined }
}

/** The test for a condition and operand, negation included. */
export function buildConditionTest(name: ConditionName, operand: unknown): ValueTest {
  const { test, negated } = buildPositiveTest(name, operand)
  return negated ? (v) => !test(v) : test
}
