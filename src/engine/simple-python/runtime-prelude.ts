// The Python helpers every generated module ends with: key-specifier walks, the conditions under
// their YAML names, comprehension and combinator helpers, IP parsing with the special-purpose
// tables embedded as data (CPython 3.13's, from ip.ts, never the runtime's `is_private`), and
// JavaScript-identical rendering for titles and dedup keys. Standard library only, Python 3.9+.
import { CONDITIONS, CONDITION_NAMES, ip } from '../simple/index.js'
import { pyLiteral } from './py-literal.js'
import { RENDER_HELPERS } from './runtime-render.js'

const HELPERS = String.raw`
import ipaddress as _ipaddress
import json as _json
import re as _re
from functools import lru_cache as _lru_cache


class _Missing(object):
    """A field that is not in the event at all (JSON null is None)."""
    __slots__ = ()

    def __repr__(self):
        return "MISSING"


class _Star(object):
    """A [*] step of a KeyPath."""
    __slots__ = ()

    def __repr__(self):
        return "[*]"


MISSING = _Missing()
STAR = _Star()


def _raw(event):
    # The YAML semantics read the original keys exactly (case-sensitive), so walk the plain data,
    # not the case-insensitive PantherEvent.
    to_dict = getattr(event, "to_dict", None)
    return to_dict() if callable(to_dict) else event


def _at(node, *path):
    """Resolves a key specifier: str = object field, int = array index, STAR = every element.
    Returns MISSING when a step does not exist or indexes the wrong type."""
    return _walk(node, path, 0)


def _walk(node, path, i):
    n = len(path)
    while i < n:
        step = path[i]
        if step is STAR:
            if not isinstance(node, list):
                return MISSING
            nested = any(s is STAR for s in path[i + 1:])
            out = []
            for element in node:
                v = _walk(element, path, i + 1)
                if v is MISSING or v is None:
                    continue  # a [*] drops elements where the rest is missing or null
                if nested:
                    out.extend(v)
                else:
                    out.append(v)
            return out
        if isinstance(step, str):
            if not isinstance(node, dict) or step not in node:
                return MISSING
        elif not isinstance(node, list) or step >= len(node):
            return MISSING
        node = node[step]
        i += 1
    return node


def _value(v):
    return None if v is MISSING else v


def _is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_scalar(v):
    return isinstance(v, (str, int, float))  # bool is an int


def _same(v, op):
    """Typed equality: no string/number coercion, a bool is not a number, 1 == 1.0."""
    if isinstance(op, bool):
        return isinstance(v, bool) and v == op
    if isinstance(op, str):
        return isinstance(v, str) and v == op
    if _is_num(op):
        return _is_num(v) and v == op
    return False


def Equals(v, op):
    return _same(v, op)


def IEquals(v, op):
    if isinstance(op, str):
        return isinstance(v, str) and v.lower() == op.lower()
    return _same(v, op)


def Contains(v, op):
    if isinstance(op, str):
        if isinstance(v, str):
            return op in v
        return isinstance(v, list) and any(isinstance(e, str) and op in e for e in v)
    return isinstance(v, list) and any(_same(e, op) for e in v)


def IContains(v, op):
    if isinstance(op, str):
        op = op.lower()
        if isinstance(v, str):
            return op in v.lower()
        return isinstance(v, list) and any(isinstance(e, str) and op in e.lower() for e in v)
    return Contains(v, op)


def StartsWith(v, op):
    return isinstance(op, str) and isinstance(v, str) and v.startswith(op)


def IStartsWith(v, op):
    return isinstance(op, str) and isinstance(v, str) and v.lower().startswith(op.lower())


def EndsWith(v, op):
    return isinstance(op, str) and isinstance(v, str) and v.endswith(op)


def IEndsWith(v, op):
    return isinstance(op, str) and isinstance(v, str) and v.lower().endswith(op.lower())


def IsGreaterThan(v, op):
    return _is_num(op) and _is_num(v) and v > op


def IsGreaterThanOrEquals(v, op):
    return _is_num(op) and _is_num(v) and v >= op


def IsLessThan(v, op):
    return _is_num(op) and _is_num(v) and v < op


def IsLessThanOrEquals(v, op):
    return _is_num(op) and _is_num(v) and v <= op


def IsIn(v, ops):
    # ops: the Values list, or (multi-key) whatever the right-hand field holds: a list counts by
    # its scalar elements, a scalar as a one-element list, anything else as an empty list.
    if isinstance(ops, list):
        ops = [o for o in ops if _is_scalar(o)]
    elif _is_scalar(ops):
        ops = [ops]
    else:
        return False
    if isinstance(v, list):
        return any(_same(e, o) for e in v for o in ops)
    return any(_same(v, o) for o in ops)


def Exists(v):
    return v is not MISSING


def IsNull(v):
    return v is MISSING or v is None


def IsNullOrEmpty(v):
    return v is MISSING or v is None or (isinstance(v, (str, list, dict)) and len(v) == 0)


def _ip(v):
    """(version, integer) of an address in Python's strict syntax, else None. Only the parsing of
    ipaddress is used; the classification tables are embedded below."""
    if not isinstance(v, str):
        return None
    # Python before 3.9.5 accepted IPv4 octets with leading zeros ('01.1.1.1'); refuse them here
    # so every 3.9+ runtime parses alike.
    tail = v.split("%", 1)[0].rsplit(":", 1)[-1]
    if "." in tail and _V4_LEADING_ZERO.search(tail):
        return None
    try:
        a = _ipaddress.ip_address(v)
    except ValueError:
        return None
    return (a.version, int(a))


_PREFIX = _re.compile(r"[0-9]{1,3}")
_V4_LEADING_ZERO = _re.compile(r"(?:^|\.)0[0-9]")


def _cidr(text):
    """(version, network integer, prefix) of 'address/prefix' or a bare address; host bits may
    be set (strict=False); the netmask form is refused. None when it does not parse."""
    return _parse_cidr(text) if isinstance(text, str) else None


@_lru_cache(maxsize=1024)
def _parse_cidr(text):
    address, slash, prefix = text.partition("/")
    a = _ip(address)
    if a is None:
        return None
    bits = 32 if a[0] == 4 else 128
    if slash:
        if _PREFIX.fullmatch(prefix) is None or int(prefix) > bits:
            return None
        length = int(prefix)
    else:
        length = bits
    return (a[0], a[1] >> (bits - length), length)


def _in(a, net):
    if net is None or a[0] != net[0]:
        return False
    bits = 32 if a[0] == 4 else 128
    return a[1] >> (bits - net[2]) == net[1]


def _any_in(a, cidrs):
    return any(_in(a, _cidr(c)) for c in cidrs)


def _mapped(a):
    # ::ffff:a.b.c.d is classified as a.b.c.d (CPython 3.13)
    if a[0] == 6 and a[1] >> 32 == 0xFFFF:
        return (4, a[1] & 0xFFFFFFFF)
    return a


def _is_private(a):
    a = _mapped(a)
    tables = _PRIVATE_V4 if a[0] == 4 else _PRIVATE_V6
    return _any_in(a, tables[0]) and not _any_in(a, tables[1])


def _is_global(a):
    a = _mapped(a)
    if a[0] == 4 and _in(a, _cidr(_SHARED_V4)):
        return False
    return not _is_private(a)


def IsIPAddress(v):
    return _ip(v) is not None


def IsIPv4Address(v):
    a = _ip(v)
    return a is not None and a[0] == 4


def IsIPv6Address(v):
    a = _ip(v)
    return a is not None and a[0] == 6


def IsIPAddressPublic(v):
    a = _ip(v)
    return a is not None and _is_global(a)


def IsIPAddressPrivate(v):
    a = _ip(v)
    return a is not None and _is_private(a)


def IsIPAddressInCIDR(v, op):
    net = _cidr(op)
    a = _ip(v)
    return net is not None and a is not None and _in(a, net)


def CIDRContainsIPAddresses(v, op):
    if isinstance(v, list):
        return any(IsIPAddressInCIDR(e, op) for e in v)
    return IsIPAddressInCIDR(v, op)


def AnyElement(v, each):
    return isinstance(v, list) and any(each(e) for e in v)


def AllElements(v, each):
    return isinstance(v, list) and len(v) > 0 and all(each(e) for e in v)


def OnlyOneElement(v, each):
    return isinstance(v, list) and sum(1 for e in v if each(e)) == 1


def NoElement(v, each):
    return not isinstance(v, list) or not any(each(e) for e in v)


def OnlyOne(*holds):
    return sum(1 for h in holds if h) == 1


def _filter(v, condition, *operand):
    """An InlineFilters leaf: a missing field passes whatever the condition."""
    return v is MISSING or condition(v, *operand)
`

/** `name = (networks, exceptions)` as Python data. */
function table(name: string, networks: readonly string[], exceptions: readonly string[]): string {
  return `${name} = (\n    ${pyLiteral([...networks])},\n    ${pyLiteral([...exceptions])},\n)`
}

function negations(): string {
  const out: string[] = []
  for (const name of CONDITION_NAMES) {
    const positive = CONDITIONS[name].negates
    if (positive === undefined) continue
    const unary = CONDITIONS[name].operand === 'none'
    out.push(
      unary
        ? `def ${name}(v):\n    return not ${positive}(v)\n`
        : `def ${name}(v, op):\n    return not ${positive}(v, op)\n`,
    )
  }
  return out.join('\n\n')
}

/** The helper section, built once (the same bytes in every module). */
export const RUNTIME_PRELUDE: string = [
  '# ---- runtime helpers: generated by rulekeeper, identical in every module ----',
  HELPERS.trim(),
  '',
  '',
  RENDER_HELPERS.trim(),
  '',
  '',
  '# Negated conditions: exactly "not" of their positive form (true on a missing field).',
  negations().trim(),
  '',
  '',
  '# Special-purpose address tables of CPython 3.13 ipaddress (networks, then exceptions).',
  table('_PRIVATE_V4', ip.IPV4_PRIVATE_NETWORKS, ip.IPV4_PRIVATE_EXCEPTIONS),
  table('_PRIVATE_V6', ip.IPV6_PRIVATE_NETWORKS, ip.IPV6_PRIVATE_EXCEPTIONS),
  `_SHARED_V4 = ${pyLiteral(ip.IPV4_SHARED_NETWORK)}`,
  '',
].join('\n')
