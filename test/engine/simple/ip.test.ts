// IP parsing and classification against the real Python `ipaddress` module (the generated Python
// must agree with this evaluator): address validity and family, CIDR membership, and is_private /
// is_global — the latter only where this machine's Python has the same tables as CPython 3.13.
import { execFileSync } from 'node:child_process'
import t from 'tap'
import { ip } from '../../../src/engine/simple/index.js'

const ADDRESSES = [
  '0.0.0.0',
  '1.1.1.1',
  '8.8.8.8',
  '10.0.0.1',
  '10.255.255.255',
  '11.0.0.0',
  '100.63.255.255',
  '100.64.0.1',
  '100.127.255.255',
  '127.0.0.1',
  '169.254.1.1',
  '172.15.255.255',
  '172.16.0.0',
  '172.31.255.255',
  '172.32.0.0',
  '192.0.0.1',
  '192.0.0.9',
  '192.0.0.10',
  '192.0.0.170',
  '192.0.2.1',
  '192.88.99.1',
  '192.168.1.1',
  '198.18.0.1',
  '198.20.0.1',
  '198.51.100.7',
  '203.0.113.9',
  '224.0.0.1',
  '240.0.0.1',
  '255.255.255.254',
  '255.255.255.255',
  '::',
  '::1',
  '::2',
  '::ffff:8.8.8.8',
  '::ffff:10.0.0.1',
  '::ffff:0a00:0001',
  '64:ff9b::8.8.8.8',
  '64:ff9b:1::1',
  '100::1',
  '100::1:0:0:0:1',
  '2001::1',
  '2001:1::1',
  '2001:1::3',
  '2001:3::1',
  '2001:4:112::1',
  '2001:10::1',
  '2001:20::1',
  '2001:db8::1',
  '2001:4860:4860::8888',
  '2002::1',
  '2606:4700::1111',
  '3fff::1',
  'fc00::1',
  'fd12:3456::1',
  'fe80::1',
  'fe80::1%eth0',
  'ff02::1',
  'FE80::ABCD',
  // an embedded IPv4 after '::' is the low 32 bits, not a mapped address (ipaddr.js read it as mapped)
  '::1.2.3.4',
  '::10.0.0.1',
  '::192.168.1.1',
  '1::10.0.0.1',
  // not addresses (or not in Python's strict syntax)
  '',
  ' 1.1.1.1',
  '1.1.1.1 ',
  '1.1.1',
  '1.1.1.1.1',
  '01.1.1.1',
  '1.1.1.01',
  '256.1.1.1',
  '1.1.1.-1',
  '0x1.1.1.1',
  '1.1.1.1/32',
  'fe80::1%a/b',
  '::1%/',
  ':::',
  '1::2::3',
  '12345::',
  'g::1',
  '::ffff:1.2.3.04',
  '::1.2.3',
  'fe80::1%',
  '1::%a%b',
  '1:2:3:4:5:6:7:8:9',
  '[::1]',
  'localhost',
]
const NETWORKS = [
  '10.0.0.0/8',
  '10.1.2.3/16',
  '192.168.1.1',
  '0.0.0.0/0',
  '2001:db8::/32',
  '::/0',
  'fe80::/10',
  '1.2.3.4/32',
]

interface PyAnswer {
  version: number
  addresses: Array<null | { v: number; private: boolean; global: boolean }>
  membership: boolean[][]
}

function askPython(): PyAnswer | null {
  const program = `
import ipaddress, json, sys
data = json.load(sys.stdin)
def info(s):
    try:
        a = ipaddress.ip_address(s)
    except ValueError:
        return None
    return {"v": a.version, "private": a.is_private, "global": a.is_global}
nets = [ipaddress.ip_network(n, strict=False) for n in data["networks"]]
def member(s, n):
    try:
        a = ipaddress.ip_address(s)
    except ValueError:
        return False
    return a.version == n.version and a in n
print(json.dumps({
    "version": sys.version_info[0] * 100 + sys.version_info[1],
    "addresses": [info(s) for s in data["addresses"]],
    "membership": [[member(s, n) for n in nets] for s in data["addresses"]],
}))
`
  try {
    const out = execFileSync('python3', ['-c', program], {
      input: JSON.stringify({ addresses: ADDRESSES, networks: NETWORKS }),
      timeout: 20_000,
    })
    return JSON.parse(out.toString()) as PyAnswer
  } catch {
    return null
  }
}

// Ranges whose classification changed in CPython 3.12.4 / 3.13 (CVE-2024-4032); an older Python
// on the test machine answers differently there, by design of the tables we follow.
const CHANGED = ['192.0.0.0/24', '64:ff9b:1::/48', '2001::/23', '2002::/16', '3fff::/20'].map((c) => ip.parseCidr(c)!)

const py = askPython()

t.test('python3 is available to cross-check against', async (t) => {
  t.ok(py, 'python3 ran')
})

t.test('address validity and family agree with Python ipaddress', { skip: py === null }, async (t) => {
  ADDRESSES.forEach((s, i) => {
    const ours = ip.parseIpAddress(s)
    const theirs = py!.addresses[i]
    t.equal(ours === null ? null : ours.version, theirs === null ? null : theirs!.v, JSON.stringify(s))
  })
})

t.test('is_private and is_global agree with Python ipaddress', { skip: py === null }, async (t) => {
  ADDRESSES.forEach((s, i) => {
    const ours = ip.parseIpAddress(s)
    const theirs = py!.addresses[i]
    if (ours === null || theirs === null) return
    if (py!.version < 313 && CHANGED.some((n) => ip.inNetwork(ours, n))) return
    t.equal(ip.isPrivateAddress(ours), theirs!.private, `${s} is_private`)
    t.equal(ip.isGlobalAddress(ours), theirs!.global, `${s} is_global`)
  })
})

t.test('CIDR membership agrees with Python ip_network(strict=False)', { skip: py === null }, async (t) => {
  const nets = NETWORKS.map((n) => ip.parseCidr(n)!)
  ADDRESSES.forEach((s, i) => {
    const a = ip.parseIpAddress(s)
    for (const [j, n] of nets.entries()) {
      t.equal(a !== null && ip.inNetwork(a, n), py!.membership[i]![j], `${s} in ${NETWORKS[j]}`)
    }
  })
})

t.test('the CPython 3.13 tables where older Pythons differ', async (t) => {
  const rows: Array<[string, boolean, boolean]> = [
    ['192.0.0.8', true, false],
    ['192.0.0.9', false, true],
    ['192.0.0.10', false, true],
    ['64:ff9b:1::1', true, false],
    ['2001:1::1', false, true],
    ['2001:3::1', false, true],
    ['2001:20::1', false, true],
    ['2001:10::1', true, false],
    ['2002::1', true, false],
    ['3fff::1', true, false],
    ['100.64.0.1', false, false],
  ]
  for (const [s, priv, glob] of rows) {
    const a = ip.parseIpAddress(s)!
    t.equal(ip.isPrivateAddress(a), priv, `${s} is_private`)
    t.equal(ip.isGlobalAddress(a), glob, `${s} is_global`)
  }
})

t.test('CIDR operands: prefix bounds and forms', async (t) => {
  for (const good of ['10.0.0.0/8', '10.0.0.1/8', '1.2.3.4', '::/0', '2001:db8::/128', '10.0.0.0/08'])
    t.ok(ip.parseCidr(good), good)
  for (const bad of [
    '10.0.0.0/33',
    '2001:db8::/129',
    '10.0.0.0/',
    '10.0.0.0/-1',
    '10.0.0.0/255.0.0.0',
    'x/8',
    '',
    '/8',
  ])
    t.equal(ip.parseCidr(bad), null, bad)
})
