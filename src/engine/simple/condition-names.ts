// The condition vocabulary as data: every canonical name, its accepted spellings, what operand it
// takes and which positive condition a negated one inverts. Validation, the compiler's function
// table (conditions.ts) and the Python transpiler all read this one list, so adding a condition
// starts here.

/** What a condition takes besides the key specifier. */
type OperandKind = 'value' | 'values' | 'none' | 'expressions' | 'constant'
/** The type a `Value` operand must have ('scalar' = string, number or boolean). */
export type OperandType = 'scalar' | 'string' | 'number' | 'cidr'

export interface ConditionInfo {
  operand: OperandKind
  operandType?: OperandType
  /** For a negated condition: the positive one it is exactly the negation of. */
  negates?: string
}

const POSITIVE = {
  Equals: { operand: 'value', operandType: 'scalar' },
  IEquals: { operand: 'value', operandType: 'scalar' },
  Contains: { operand: 'value', operandType: 'scalar' },
  IContains: { operand: 'value', operandType: 'scalar' },
  StartsWith: { operand: 'value', operandType: 'string' },
  IStartsWith: { operand: 'value', operandType: 'string' },
  EndsWith: { operand: 'value', operandType: 'string' },
  IEndsWith: { operand: 'value', operandType: 'string' },
  IsGreaterThan: { operand: 'value', operandType: 'number' },
  IsGreaterThanOrEquals: { operand: 'value', operandType: 'number' },
  IsLessThan: { operand: 'value', operandType: 'number' },
  IsLessThanOrEquals: { operand: 'value', operandType: 'number' },
  IsIn: { operand: 'values' },
  Exists: { operand: 'none' },
  IsNull: { operand: 'none' },
  IsNullOrEmpty: { operand: 'none' },
  IsIPAddress: { operand: 'none' },
  IsIPv4Address: { operand: 'none' },
  IsIPv6Address: { operand: 'none' },
  IsIPAddressPublic: { operand: 'none' },
  IsIPAddressPrivate: { operand: 'none' },
  IsIPAddressInCIDR: { operand: 'value', operandType: 'cidr' },
  CIDRContainsIPAddresses: { operand: 'value', operandType: 'cidr' },
  AnyElement: { operand: 'expressions' },
  AllElements: { operand: 'expressions' },
  OnlyOneElement: { operand: 'expressions' },
  NoElement: { operand: 'expressions' },
  AlwaysTrue: { operand: 'constant' },
  AlwaysFalse: { operand: 'constant' },
} as const satisfies Record<string, ConditionInfo>

/** Negated condition → the positive condition it inverts. */
const NEGATIONS = {
  DoesNotEqual: 'Equals',
  IDoesNotEqual: 'IEquals',
  DoesNotContain: 'Contains',
  IDoesNotContain: 'IContains',
  DoesNotStartWith: 'StartsWith',
  IDoesNotStartWith: 'IStartsWith',
  DoesNotEndWith: 'EndsWith',
  IDoesNotEndWith: 'IEndsWith',
  IsNotIn: 'IsIn',
  DoesNotExist: 'Exists',
  IsNotNull: 'IsNull',
  IsNotNullOrEmpty: 'IsNullOrEmpty',
  IsIPAddressNotInCIDR: 'IsIPAddressInCIDR',
  CIDRDoesNotContainIPAddresses: 'CIDRContainsIPAddresses',
} as const satisfies Record<string, keyof typeof POSITIVE>

/** Other spellings accepted for the same condition (the spec names `…OrEqual` and `…OrEqualTo`). */
const ALIASES: Record<string, ConditionName> = {
  IsGreaterThanOrEqual: 'IsGreaterThanOrEquals',
  IsGreaterThanOrEqualTo: 'IsGreaterThanOrEquals',
  IsLessThanOrEqual: 'IsLessThanOrEquals',
  IsLessThanOrEqualTo: 'IsLessThanOrEquals',
}

export type PositiveConditionName = keyof typeof POSITIVE
type NegatedConditionName = keyof typeof NEGATIONS
export type ConditionName = PositiveConditionName | NegatedConditionName

export const CONDITIONS: Readonly<Record<ConditionName, ConditionInfo>> = Object.freeze({
  ...POSITIVE,
  ...Object.fromEntries(
    Object.entries(NEGATIONS).map(([name, positive]) => [name, { ...POSITIVE[positive], negates: positive }]),
  ),
} as Record<ConditionName, ConditionInfo>)

/** Every canonical name, sorted, for "valid conditions are …" messages. */
export const CONDITION_NAMES: readonly ConditionName[] = Object.freeze(
  (Object.keys(CONDITIONS) as ConditionName[]).sort(),
)

/** Every accepted spelling (canonical names and aliases). */
export const ACCEPTED_CONDITION_NAMES: readonly string[] = Object.freeze(
  [...CONDITION_NAMES, ...Object.keys(ALIASES)].sort(),
)

/** The canonical name for an accepted spelling, or undefined. */
export function canonicalCondition(name: string): ConditionName | undefined {
  if (Object.hasOwn(CONDITIONS, name)) return name as ConditionName
  if (Object.hasOwn(ALIASES, name)) return ALIASES[name]
  return undefined
}

/** A negated condition's positive form, or undefined for a positive one. */
export function positiveOf(name: ConditionName): PositiveConditionName | undefined {
  return (CONDITIONS[name].negates as PositiveConditionName | undefined) ?? undefined
}
