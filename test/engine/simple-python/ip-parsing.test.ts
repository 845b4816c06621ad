// The generated module parses addresses with Python's ipaddress and CIDRs with its own `_cidr`; the
// evaluator with ip.ts. Fuzzed strings (zones, embedded and mapped IPv4, whitespace, leading zeros,
// '/' in odd places) must parse to the same (version, integer) — and CIDRs to the same network — on
// both sides. This is how the two ip.ts bugs of the transpiler work were found.
import { execFileSync } from 'node:child_process'
import t from 'tap'
import { ip } from '../../../src/engine/simple/index.js'
import { RUNTIME_PRELUDE } from '../../../src/engine/simple-python/index.js'
import { mulberry32 as rng } from '../../helpers/seeded-random.js'

const ATOMS = [
  '1',
  '0',
  '00',
  '255',
  '256',
  '01',
  'ffff',
  'FFFF',
  '12345',
  'g',
  '',
  ':',
  '::',
  '.',
  '%',
  '%eth0',
  '/',
  '/8',
  '/33',
  '/129',
  ' ',
  '1.2.3.4',
  '10.0.0.1',
  'a',
  '\n',
  '%a/b',
  '0000',
  '00000',
  '٣',
  '::ffff:',
  'fe80',
  '/0',
  '/24',
  '/064',
]

function strings(n: number): string[] {
  const r = rng(4242)
  const out = new Set<string>([
    '::1.2.3.4',
    '::10.0.0.1',
    'fe80::1%a/b',
    '1::10.0.0.1/96',
    '::ffff:10.0.0.1/104',
    '10.0.0.0/255.0.0.0',
  ])
  const bases = [
    '10.0.0.1',
    '192.168.1.20',
    '8.8.8.8',
    '0.0.0.0',
    '255.255.255.255',
    '::1',
    '::',
    '1::',
    '::ffff:10.0.0.1',
    '::10.0.0.1',
    'fe80::1',
    '2001:db8::1',
    '1:2:3:4:5:6:7:8',
    '1:2:3:4:5:6:1.2.3.4',
    '64:ff9b::8.8.8.8',
    'FE80::ABCD:1',
    '1:2:3:4:5:6:7::',
  ]
  const pick = <T>(a: readonly T[]): T => a[Math.floor(r() * a.length)]!
  // Half mutations of real addresses (near misses), half random atoms.
  while (out.size < n / 2) {
    let s = pick(bases)
    const m = r()
    if (m < 0.3) s += `/${pick(['0', '8', '24', '32', '33', '64', '96', '128', '129', '08', '', ' 8'])}`
    else if (m < 0.4) s += `%${pick(['eth0', '1', '', 'a b', '%'])}`
    else if (m < 0.5) s = pick([' ', '\t', '']) + s + pick(['\n', ' ', ''])
    else if (m < 0.8) {
      const i = Math.floor(r() * s.length)
      s = s.slice(0, i) + pick(['', '0', ':', '.', 'f', '%', '/', '00', ' ']) + s.slice(i + (r() < 0.5 ? 1 : 0))
    }
    out.add(s)
  }
  while (out.size < n) {
    let s = ''
    const k = 1 + Math.floor(r() * 8)
    for (let i = 0; i < k; i++)
      s += ATOMS[Math.floor(r() * ATOMS.length)]! + (r() < 0.5 ? [':', '.', '::'][Math.floor(r() * 3)] : '')
    out.add(s)
  }
  return [...out]
}

const hex = (bytes: Uint8Array) => BigInt(`0x${Buffer.from(bytes).toString('hex')}`).toString()

t.test('addresses and CIDRs parse the same in the generated Python and in ip.ts', async (t) => {
  const list = strings(6000)
  const program = `${RUNTIME_PRELUDE}
import sys
def show(x):
    return None if x is None else [x[0], str(x[1])] + ([x[2]] if len(x) > 2 else [])
data = _json.loads(sys.stdin.read())
print(_json.dumps({"ip": [show(_ip(s)) for s in data], "cidr": [show(_cidr(s)) for s in data]}))
`
  const py = JSON.parse(
    execFileSync('python3', ['-c', program], { input: JSON.stringify(list), maxBuffer: 1e8 }).toString(),
  ) as { ip: unknown[]; cidr: unknown[] }
  let ipBad = 0
  let cidrBad = 0
  let valid = 0
  list.forEach((s, i) => {
    const a = ip.parseIpAddress(s)
    const tsIp = a === null ? null : [a.version, hex(a.bytes)]
    if (a !== null) valid++
    if (JSON.stringify(tsIp) !== JSON.stringify(py.ip[i]))
      t.fail(`address ${JSON.stringify(s)}: ts ${JSON.stringify(tsIp)} py ${JSON.stringify(py.ip[i])}`, {
        diagnostic: false,
      }) || ipBad++
    const n = ip.parseCidr(s)
    // Python keeps the network number shifted right by the host bits; compare the same way.
    const tsNet =
      n === null
        ? null
        : [n.version, (BigInt(hex(n.bytes)) >> BigInt((n.version === 4 ? 32 : 128) - n.prefix)).toString(), n.prefix]
    if (JSON.stringify(tsNet) !== JSON.stringify(py.cidr[i]))
      t.fail(`cidr ${JSON.stringify(s)}: ts ${JSON.stringify(tsNet)} py ${JSON.stringify(py.cidr[i])}`, {
        diagnostic: false,
      }) || cidrBad++
  })
  t.equal(ipBad, 0, 'addresses agree')
  t.equal(cidrBad, 0, 'CIDRs agree')
  t.ok(valid > 400, `${valid} of ${list.length} strings are addresses`)
})
