// The condition table shared by the simple engine's tests and the transpiler's differential
// tests: every condition × (value of the right type, wrong types, null, missing, list values) with
// the expected outcome of the positive form; negations are derived (NEGATION_OF).
import { CONDITION_NAMES, positiveOf } from '../../../src/engine/simple/index.js'

export const MISSING = Symbol('missing field')
export type Cases = Array<[value: unknown, expected: boolean]>

export interface Row {
  condition: string
  operand?: { Value: unknown } | { Values: unknown[] }
  /** Values of the type the condition is about, with the expected outcome. */
  right: Cases
  /** Values of other types: all false for a positive condition. */
  wrong: unknown[]
  null: boolean
  missing: boolean
  list: Cases
}

const T = true
const F = false
export const ROWS: Row[] = [
  { condition: 'Equals', operand: { Value: 'admin' }, right: [['admin', T], ['Admin', F], ['admin ', F]], wrong: [1, true, { a: 'admin' }], null: F, missing: F, list: [[['admin'], F]] },
  { condition: 'Equals', operand: { Value: 5 }, right: [[5, T], [5.0, T], [6, F], [-5, F]], wrong: ['5', true], null: F, missing: F, list: [[[5], F]] },
  { condition: 'Equals', operand: { Value: 1.5 }, right: [[1.5, T], [1, F]], wrong: ['1.5'], null: F, missing: F, list: [[[1.5], F]] },
  { condition: 'Equals', operand: { Value: true }, right: [[true, T], [false, F]], wrong: ['true', 1], null: F, missing: F, list: [[[true], F]] },
  { condition: 'Equals', operand: { Value: false }, right: [[false, T], [true, F]], wrong: [0, '', 'false'], null: F, missing: F, list: [[[], F]] },
  { condition: 'Equals', operand: { Value: '' }, right: [['', T], [' ', F]], wrong: [0, false], null: F, missing: F, list: [[[''], F]] },
  { condition: 'IEquals', operand: { Value: 'AdMin' }, right: [['admin', T], ['ADMIN', T], ['admins', F]], wrong: [1, true], null: F, missing: F, list: [[['admin'], F]] },
  { condition: 'IEquals', operand: { Value: 7 }, right: [[7, T], [8, F]], wrong: ['7'], null: F, missing: F, list: [[[7], F]] },
  { condition: 'Contains', operand: { Value: 'min' }, right: [['admin', T], ['ADMIN', F], ['xyz', F], ['min', T]], wrong: [123, true, { min: 1 }], null: F, missing: F, list: [[['admin', 'x'], T], [['x'], F], [['min'], T], [[1, 2], F], [[], F], [[['admin']], F]] },
  { condition: 'Contains', operand: { Value: 2 }, right: [[[1, 2, 3], T], [[1], F], [[2.0], T]], wrong: ['123', 2, true], null: F, missing: F, list: [[['2'], F], [[[2]], F]] },
  { condition: 'Contains', operand: { Value: true }, right: [[[false, true], T], [[false], F]], wrong: ['true', true], null: F, missing: F, list: [[['true'], F]] },
  { condition: 'IContains', operand: { Value: 'MIN' }, right: [['xAdMiNx', T], ['mi', F]], wrong: [1, false], null: F, missing: F, list: [[['ADMIN'], T], [['x', 'mIn'], T], [['mi'], F]] },
  { condition: 'StartsWith', operand: { Value: 'ad' }, right: [['admin', T], ['Admin', F], ['bad', F], ['ad', T]], wrong: [1, true], null: F, missing: F, list: [[['admin'], F]] },
  { condition: 'IStartsWith', operand: { Value: 'AD' }, right: [['admin', T], ['Admin', T], ['bad', F]], wrong: [1], null: F, missing: F, list: [[['admin'], F]] },
  { condition: 'EndsWith', operand: { Value: 'in' }, right: [['admin', T], ['admins', F], ['adMIN', F]], wrong: [1], null: F, missing: F, list: [[['admin'], F]] },
  { condition: 'IEndsWith', operand: { Value: 'IN' }, right: [['ADMIN', T], ['admIn', T], ['admins', F]], wrong: [1], null: F, missing: F, list: [[['admin'], F]] },
  { condition: 'IsGreaterThan', operand: { Value: 10 }, right: [[11, T], [10, F], [10.5, T], [-20, F]], wrong: ['11', true, '9'], null: F, missing: F, list: [[[11], F]] },
  { condition: 'IsGreaterThanOrEquals', operand: { Value: 10 }, right: [[10, T], [9.99, F], [10.0, T]], wrong: ['10'], null: F, missing: F, list: [[[10], F]] },
  { condition: 'IsGreaterThanOrEqual', operand: { Value: 10 }, right: [[10, T], [9, F]], wrong: ['10'], null: F, missing: F, list: [[[10], F]] },
  { condition: 'IsGreaterThanOrEqualTo', operand: { Value: 10 }, right: [[10, T], [9, F]], wrong: ['10'], null: F, missing: F, list: [[[10], F]] },
  { condition: 'IsLessThan', operand: { Value: 10 }, right: [[9, T], [10, F], [-1.5, T]], wrong: ['9', false], null: F, missing: F, list: [[[9], F]] },
  { condition: 'IsLessThanOrEquals', operand: { Value: 10 }, right: [[10, T], [11, F]], wrong: ['10'], null: F, missing: F, list: [[[10], F]] },
  { condition: 'IsLessThanOrEqual', operand: { Value: 10.5 }, right: [[10.5, T], [11, F]], wrong: ['10'], null: F, missing: F, list: [[[10], F]] },
  { condition: 'IsLessThanOrEqualTo', operand: { Value: 10 }, right: [[10, T], [11, F]], wrong: ['10'], null: F, missing: F, list: [[[10], F]] },
  { condition: 'IsIn', operand: { Values: ['a', 'b'] }, right: [['a', T], ['c', F], ['A', F]], wrong: [1, true, { a: 1 }], null: F, missing: F, list: [[['x', 'b'], T], [['x'], F], [[], F], [[['a']], F]] },
  { condition: 'IsIn', operand: { Values: [1, 2] }, right: [[2, T], [2.0, T], [3, F]], wrong: ['2', true], null: F, missing: F, list: [[[5, 1], T], [['1'], F]] },
  { condition: 'IsIn', operand: { Values: [true] }, right: [[true, T], [false, F]], wrong: ['true', 1], null: F, missing: F, list: [[[false, true], T]] },
  { condition: 'IsIn', operand: { Values: [] }, right: [['a', F]], wrong: [1], null: F, missing: F, list: [[['a'], F]] },
  { condition: 'Exists', right: [['x', T], [0, T], [false, T], ['', T], [{}, T]], wrong: [], null: T, missing: F, list: [[[], T]] },
  { condition: 'IsNull', right: [['x', F], [0, F], [false, F], ['', F]], wrong: [], null: T, missing: T, list: [[[], F], [[null], F]] },
  { condition: 'IsNullOrEmpty', right: [['', T], ['x', F], [' ', F], [{}, T], [{ a: 1 }, F]], wrong: [0, false], null: T, missing: T, list: [[[], T], [[null], F], [[''], F]] },
  { condition: 'IsIPAddress', right: [['10.0.0.1', T], ['::1', T], ['fe80::1%eth0', T], ['::ffff:1.2.3.4', T], ['2001:db8::', T], ['10.0.0.256', F], ['010.0.0.1', F], ['127.1', F], ['1.2.3.4 ', F], ['', F], ['1:2:3:4:5:6:7:8:9', F], ['::ffff:1.2.3.04', F], ['fe80::1%', F], ['0x7f.0.0.1', F]], wrong: [167772161, true], null: F, missing: F, list: [[['10.0.0.1'], F]] },
  { condition: 'IsIPv4Address', right: [['10.0.0.1', T], ['255.255.255.255', T], ['::1', F], ['1.2.3', F]], wrong: [1], null: F, missing: F, list: [[['10.0.0.1'], F]] },
  { condition: 'IsIPv6Address', right: [['::1', T], ['::ffff:10.0.0.1', T], ['10.0.0.1', F], ['12345::', F]], wrong: [1], null: F, missing: F, list: [[['::1'], F]] },
  { condition: 'IsIPAddressPublic', right: [['8.8.8.8', T], ['10.1.2.3', F], ['100.64.0.1', F], ['192.0.0.9', T], ['192.0.0.8', F], ['255.255.255.255', F], ['2001:4860:4860::8888', T], ['fe80::1', F], ['2001:db8::1', F], ['::ffff:8.8.8.8', T], ['::ffff:10.0.0.1', F], ['not-an-ip', F]], wrong: [134744072], null: F, missing: F, list: [[['8.8.8.8'], F]] },
  { condition: 'IsIPAddressPrivate', right: [['10.1.2.3', T], ['172.31.255.255', T], ['172.32.0.0', F], ['100.64.0.1', F], ['8.8.8.8', F], ['192.0.0.9', F], ['192.0.0.8', T], ['127.0.0.1', T], ['fd00::1', T], ['2001:db8::1', T], ['::1', T], ['::ffff:192.168.1.1', T], ['2001:4860::1', F], ['bad', F]], wrong: [167837955], null: F, missing: F, list: [[['10.0.0.1'], F]] },
  { condition: 'IsIPAddressInCIDR', operand: { Value: '10.0.0.0/8' }, right: [['10.255.0.1', T], ['11.0.0.1', F], ['::ffff:10.0.0.1', F], ['bad', F]], wrong: [167772161], null: F, missing: F, list: [[['10.0.0.1'], F]] },
  { condition: 'IsIPAddressInCIDR', operand: { Value: '2001:db8::/32' }, right: [['2001:db8:1::1', T], ['2001:db9::1', F], ['10.0.0.1', F]], wrong: [1], null: F, missing: F, list: [[['2001:db8::1'], F]] },
  { condition: 'IsIPAddressInCIDR', operand: { Value: '192.168.1.77/24' }, right: [['192.168.1.1', T], ['192.168.2.1', F]], wrong: [1], null: F, missing: F, list: [[['192.168.1.1'], F]] },
  { condition: 'IsIPAddressInCIDR', operand: { Value: '192.168.1.7' }, right: [['192.168.1.7', T], ['192.168.1.8', F]], wrong: [1], null: F, missing: F, list: [] },
  { condition: 'CIDRContainsIPAddresses', operand: { Value: '10.0.0.0/8' }, right: [['10.1.1.1', T], ['11.1.1.1', F]], wrong: [167772161, { ip: '10.0.0.1' }], null: F, missing: F, list: [[['1.1.1.1', '10.0.0.1'], T], [['1.1.1.1'], F], [[], F], [['bad', 10], F]] },
]

export const NEGATION_OF = new Map<string, string>()
for (const name of CONDITION_NAMES) {
  const p = positiveOf(name)
  if (p !== undefined) NEGATION_OF.set(p, name)
}

