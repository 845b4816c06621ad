// IP address parsing and classification for the IP conditions, with Python `ipaddress` semantics
// (strict dotted quads, IPv6 with an optional `%scope`, `ip_network(strict=False)` for CIDRs) so the
// generated Python agrees with this evaluator. The special-purpose tables are data below; they are
// CPython 3.13's `ipaddress` tables (the post-CVE-2024-4032 ones), exported for the transpiler.
import ipaddr from 'ipaddr.js'

export interface IpAddress {
  version: 4 | 6
  bytes: Uint8Array
}

export interface IpNetwork extends IpAddress {
  prefix: number
}

// Python rejects leading zeros and anything but four decimal octets (no `127.1`, no hex).
const IPV4 =
  /^(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])$/
const IPV6_CHARS = /^[0-9a-fA-F:.]+$/
const TRAILING_V4 = /[:]([^:]*\.[^:]*)$/

function parseIpv4(text: string): IpAddress | null {
  const m = IPV4.exec(text)
  if (m === null) return null
  return { version: 4, bytes: Uint8Array.of(+m[1]!, +m[2]!, +m[3]!, +m[4]!) }
}

function parseIpv6(text: string): IpAddress | null {
  // Python: an optional scope id after '%', non-empty and without another '%'.
  const pct = text.indexOf('%')
  let addr = text
  if (pct >= 0) {
    const scope = text.slice(pct + 1)
    if (scope === '' || scope.includes('%')) return null
    addr = text.slice(0, pct)
  }
  // Python refuses a '/' anywhere, the scope id included ('fe80::1%a/b').
  if (text.includes('/') || !IPV6_CHARS.test(addr) || !addr.includes(':')) return null
  if (addr.includes('.')) {
    const tail = TRAILING_V4.exec(addr)
    const v4 = tail === null ? null : parseIpv4(tail[1]!)
    if (v4 === null) return null
    // Written as two hextets before ipaddr.js sees it: ipaddr.js reads '::1.2.3.4' as the mapped
    // '::ffff:1.2.3.4', Python as '::102:304' (the embedded address is just the low 32 bits).
    const b = v4.bytes
    const hex = (hi: number, lo: number) => ((hi << 8) | lo).toString(16)
    addr = `${addr.slice(0, addr.length - tail![1]!.length)}${hex(b[0]!, b[1]!)}:${hex(b[2]!, b[3]!)}`
  }
  if (!ipaddr.IPv6.isValid(addr)) return null
  return { version: 6, bytes: Uint8Array.from(ipaddr.IPv6.parse(addr).toByteArray()) }
}

export function parseIpAddress(text: string): IpAddress | null {
  return text.includes(':') ? parseIpv6(text) : parseIpv4(text)
}

/** `addr/prefix` or a bare address (a host network); host bits may be set (strict=False). */
export function parseCidr(text: string): IpNetwork | null {
  const slash = text.indexOf('/')
  const addrText = slash < 0 ? text : text.slice(0, slash)
  const address = parseIpAddress(addrText)
  if (address === null) return null
  const max = address.version === 4 ? 32 : 128
  let prefix = max
  if (slash >= 0) {
    const p = text.slice(slash + 1)
    if (!/^[0-9]{1,3}$/.test(p) || Number(p) > max) return null
    prefix = Number(p)
  }
  return { ...address, prefix }
}

/** Whether the address lies in the network; never across families (as Python's `in`). */
export function inNetwork(address: IpAddress, network: IpNetwork): boolean {
  if (address.version !== network.version) return false
  const full = network.prefix >> 3
  for (let i = 0; i < full; i++) if (address.bytes[i] !== network.bytes[i]) return false
  const rest = network.prefix & 7
  if (rest === 0) return true
  const mask = (0xff << (8 - rest)) & 0xff
  return (address.bytes[full]! & mask) === (network.bytes[full]! & mask)
}

// IANA IPv4 Special-Purpose Address Registry
// (https://www.iana.org/assignments/iana-ipv4-special-registry/), as CPython 3.13 encodes it in
// `_IPv4Constants._private_networks`: the entries that are not "globally reachable".
export const IPV4_PRIVATE_NETWORKS: readonly string[] = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.0.170/31',
  '192.0.2.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '240.0.0.0/4',
  '255.255.255.255/32',
]
/** Inside 192.0.0.0/24 but globally reachable per the registry (PCP and TURN anycast). */
export const IPV4_PRIVATE_EXCEPTIONS: readonly string[] = ['192.0.0.9/32', '192.0.0.10/32']
/** Shared address space (RFC 6598): neither private nor global, as in Python. */
export const IPV4_SHARED_NETWORK = '100.64.0.0/10'

// IANA IPv6 Special-Purpose Address Registry
// (https://www.iana.org/assignments/iana-ipv6-special-registry/), as CPython 3.13 encodes it in
// `_IPv6Constants._private_networks` (2002::/16 is "N/A" there and counted private, as Python does;
// 3fff::/20 is RFC 9637 documentation space).
export const IPV6_PRIVATE_NETWORKS: readonly string[] = [
  '::1/128',
  '::/128',
  '::ffff:0:0/96',
  '64:ff9b:1::/48',
  '100::/64',
  '2001::/23',
  '2001:db8::/32',
  '2002::/16',
  '3fff::/20',
  'fc00::/7',
  'fe80::/10',
]
export const IPV6_PRIVATE_EXCEPTIONS: readonly string[] = [
  '2001:1::1/128',
  '2001:1::2/128',
  '2001:3::/32',
  '2001:4:112::/48',
  '2001:20::/28',
  '2001:30::/28',
]

const nets = (list: readonly string[]): IpNetwork[] => list.map((c) => parseCidr(c)!)
const V4_PRIVATE = nets(IPV4_PRIVATE_NETWORKS)
const V4_EXCEPTIONS = nets(IPV4_PRIVATE_EXCEPTIONS)
const V4_SHARED = parseCidr(IPV4_SHARED_NETWORK)!
const V6_PRIVATE = nets(IPV6_PRIVATE_NETWORKS)
const V6_EXCEPTIONS = nets(IPV6_PRIVATE_EXCEPTIONS)

/** `ipv4_mapped` of Python: ::ffff:a.b.c.d → a.b.c.d. */
function ipv4Mapped(address: IpAddress): IpAddress | null {
  const b = address.bytes
  if (address.version !== 6) return null
  for (let i = 0; i < 10; i++) if (b[i] !== 0) return null
  if (b[10] !== 0xff || b[11] !== 0xff) return null
  return { version: 4, bytes: b.slice(12) }
}

/** Python `is_private`. */
export function isPrivateAddress(address: IpAddress): boolean {
  const mapped = ipv4Mapped(address)
  if (mapped !== null) return isPrivateAddress(mapped)
  const [priv, exc] = address.version === 4 ? [V4_PRIVATE, V4_EXCEPTIONS] : [V6_PRIVATE, V6_EXCEPTIONS]
  return priv.some((n) => inNetwork(address, n)) && !exc.some((n) => inNetwork(address, n))
}

/** Python `is_global`. */
export function isGlobalAddress(address: IpAddress): boolean {
  const mapped = ipv4Mapped(address)
  if (mapped !== null) return isGlobalAddress(mapped)
  if (address.version === 4 && inNetwork(address, V4_SHARED)) return false
  return !isPrivateAddress(address)
}
