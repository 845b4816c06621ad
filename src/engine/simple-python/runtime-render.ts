// The rendering half of the Python runtime helpers: titles, dedup keys and numbers written exactly
// as the TypeScript evaluator writes them (JavaScript's String(number) and JSON.stringify: shortest
// round-trip digits, integer-like object keys first, lone surrogates escaped). Standard library only.

export const RENDER_HELPERS = String.raw`
def _js_number(x):
    # JavaScript's String(number): shortest round-trip digits, exponent past 1e21 / below 1e-6.
    try:
        x = float(x)
    except OverflowError:
        return "Infinity" if x > 0 else "-Infinity"
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    # repr gives the shortest round-trip digits, as JavaScript does; only the layout differs.
    mantissa, _, exp = repr(abs(x)).partition("e")
    whole, _, frac = mantissa.partition(".")
    all_digits = whole + frac
    digits = all_digits.lstrip("0")
    # value = 0.<digits> * 10 ** point
    point = len(whole) + int(exp or 0) - (len(all_digits) - len(digits))
    digits = digits.rstrip("0")
    k = len(digits)
    if k <= point <= 21:
        return sign + digits + "0" * (point - k)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * (-point) + digits
    e = point - 1
    e_text = ("+" if e >= 0 else "-") + str(abs(e))
    if k == 1:
        return sign + digits + "e" + e_text
    return sign + digits[0] + "." + digits[1:] + "e" + e_text


_LONE_SURROGATE = _re.compile("[\ud800-\udfff]")
_ARRAY_INDEX = _re.compile(r"0|[1-9][0-9]{0,9}")


def _js_string(s):
    text = _json.dumps(s, ensure_ascii=False)
    return _LONE_SURROGATE.sub(lambda m: "\\u%04x" % ord(m.group()), text)


def _js_keys(d):
    # JavaScript orders integer-like keys first, ascending, then the others as inserted.
    ints = sorted((k for k in d if _ARRAY_INDEX.fullmatch(k) and int(k) < 4294967295), key=int)
    seen = set(ints)
    return ints + [k for k in d if k not in seen]


def _js_json(v):
    """Compact JSON exactly as JavaScript's JSON.stringify writes it."""
    if v is None or v is MISSING:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, float)):
        text = _js_number(v)
        return "null" if text in ("NaN", "Infinity", "-Infinity") else text
    if isinstance(v, str):
        return _js_string(v)
    if isinstance(v, list):
        return "[" + ",".join(_js_json(e) for e in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(_js_string(k) + ":" + _js_json(v[k]) for k in _js_keys(v)) + "}"
    return _js_string(str(v))


def _render(v):
    """A title placeholder: missing and null as '', numbers and booleans as JavaScript writes
    them, lists and objects as compact JSON."""
    if v is MISSING or v is None:
        return ""
    if isinstance(v, str):
        return v
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, float)):
        return _js_number(v)
    return _js_json(v)


def _title(parts):
    return "".join(parts)[:1000]
`
