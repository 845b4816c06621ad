# The JSONPath a data model's `Path` is written in, read as Panther reads it (jsonpath_ng.ext's
# `parse`, panther_core/data_model.py) without depending on jsonpath_ng: a bare key path (`a.b`), `$`,
# `.key`, `."quoted.key"`, `['key']`, `[n]`, `[*]`, `.*`, `..key` (recursive descent) and filters
# `[?(@.a.b == "x")]` (==, !=, <, <=, >, >=, =~, `&`). Keys match exactly (case-sensitively), on the
# raw event; anything else is a JSONPathError naming the path. `find_paths` also gives each match's
# full path written as jsonpath_ng writes it (`a.b`, `a.[0].b`, a key holding a JSONPath character
# in single quotes): what `event.udm_path()` answers.
import re

__all__ = ["JSONPathError", "compile_path", "find", "find_paths"]


class JSONPathError(ValueError):
    pass


_IDENT = re.compile(r"[A-Za-z0-9_@\-]+")
_NUMBER = re.compile(r"-?\d+(\.\d+)?")
_OPS = ("==", "!=", "<=", ">=", "=~", "<", ">", "=")


class _Reader:
    def __init__(self, text):
        self.text = text
        self.i = 0

    def peek(self, s):
        return self.text.startswith(s, self.i)

    def eat(self, s):
        if self.peek(s):
            self.i += len(s)
            return True
        return False

    def skip_ws(self):
        while self.i < len(self.text) and self.text[self.i] == " ":
            self.i += 1

    def done(self):
        return self.i >= len(self.text)

    def fail(self, what):
        raise JSONPathError("%s at character %d of JSONPath %r" % (what, self.i + 1, self.text))

    def quoted(self):
        quote = self.text[self.i]
        end = self.text.find(quote, self.i + 1)
        if end < 0:
            self.fail("an unclosed quote")
        value = self.text[self.i + 1:end]
        self.i = end + 1
        return value

    def name(self):
        """A key after `.`, `..` or at the start: an identifier, `*`, or a quoted key."""
        if self.eat("*"):
            return ("wild",)
        if self.peek('"') or self.peek("'"):
            return ("field", self.quoted())
        m = _IDENT.match(self.text, self.i)
        if not m:
            self.fail("a key expected")
        self.i = m.end()
        return ("field", m.group(0))


def _steps(r, stop=None):
    steps = []
    if r.eat("$"):
        pass
    elif r.eat("@"):
        pass
    else:
        steps.append(r.name())
    while not r.done() and not (stop and stop(r)):
        if r.eat(".."):
            key = r.name()
            steps.append(("descend", key))
        elif r.eat("."):
            steps.append(r.name())
        elif r.eat("["):
            steps.append(_bracket(r))
        else:
            r.fail("unexpected %r" % r.text[r.i])
    return steps


def _bracket(r):
    r.skip_ws()
    if r.eat("*"):
        step = ("all",)
    elif r.peek('"') or r.peek("'"):
        step = ("field", r.quoted())
    elif r.eat("?"):
        r.skip_ws()
        if not r.eat("("):
            r.fail("'(' expected after '?'")
        step = ("filter", _conjunction(r))
        r.skip_ws()
        if not r.eat(")"):
            r.fail("')' expected")
    else:
        m = re.compile(r"(-?\d*)\s*(:\s*(-?\d*))?").match(r.text, r.i)
        if not m or m.end() == r.i:
            r.fail("an index, '*', a quoted key or a filter expected")
        r.i = m.end()
        if m.group(2):
            start = int(m.group(1)) if m.group(1) not in ("", "-") else None
            end = int(m.group(3)) if m.group(3) not in ("", "-") else None
            step = ("slice", start, end)
        else:
            step = ("index", int(m.group(1)))
    r.skip_ws()
    if not r.eat("]"):
        r.fail("']' expected")
    return step


def _conjunction(r):
    terms = [_comparison(r)]
    r.skip_ws()
    while r.eat("&"):
        r.skip_ws()
        terms.append(_comparison(r))
        r.skip_ws()
    return terms


def _comparison(r):
    r.skip_ws()
    if not r.peek("@"):
        r.fail("a filter starts with '@'")
    target = _steps(r, stop=lambda rr: rr.peek(" ") or rr.peek(")") or rr.peek("&")
                    or any(rr.peek(op) for op in _OPS))
    r.skip_ws()
    op = next((o for o in _OPS if r.eat(o)), None)
    if op is None:
        return (target, None, None)
    r.skip_ws()
    if r.peek('"') or r.peek("'"):
        value = r.quoted()
    else:
        m = _NUMBER.match(r.text, r.i)
        if m:
            r.i = m.end()
            value = float(m.group(0)) if m.group(1) else int(m.group(0))
        elif r.eat("true"):
            value = True
        elif r.eat("false"):
            value = False
        elif r.eat("null"):
            value = None
        else:
            r.fail("a value expected after %s" % op)
    return (target, "==" if op == "=" else op, value)


_CACHE = {}


def compile_path(text):
    """The steps of a JSONPath (cached per text); JSONPathError when it is not one this reads."""
    steps = _CACHE.get(text)
    if steps is None:
        if not isinstance(text, str) or text.strip() == "":
            raise JSONPathError("an empty JSONPath")
        r = _Reader(text.strip())
        steps = _steps(r)
        _CACHE[text] = steps
    return steps


def _children(value):
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, list):
        return list(value)
    return []


def _apply(step, value):
    kind = step[0]
    if kind == "field":
        return [value[step[1]]] if isinstance(value, dict) and step[1] in value else []
    if kind == "wild":
        return _children(value) if isinstance(value, dict) else []
    if kind == "all":
        # jsonpath_ng reads `[*]` of anything but a list as a one-element list.
        return list(value) if isinstance(value, list) else [value]
    if kind == "index":
        if isinstance(value, list) and -len(value) <= step[1] < len(value):
            return [value[step[1]]]
        return []
    if kind == "slice":
        return list(value[step[1]:step[2]]) if isinstance(value, list) else []
    if kind == "descend":
        out = []
        stack = [value]
        while stack:
            node = stack.pop()
            out.extend(_apply(step[1], node))
            stack.extend(reversed(_children(node)))
        return out
    if kind == "filter":
        items = value if isinstance(value, list) else []
        return [item for item in items if all(_holds(term, item) for term in step[1])]
    raise JSONPathError("unknown step %r" % (kind,))


def _holds(term, item):
    target, op, expected = term
    found = _find(target, item)
    if op is None:
        return bool(found)
    for value in found:
        if isinstance(expected, bool) or expected is None:
            pass
        elif isinstance(expected, (int, float)) and not isinstance(value, bool):
            try:
                value = type(expected)(value)
            except (TypeError, ValueError):
                continue
        try:
            if op == "==" and value == expected:
                return True
            if op == "!=" and value != expected:
                return True
            if op == "<" and value < expected:
                return True
            if op == "<=" and value <= expected:
                return True
            if op == ">" and value > expected:
                return True
            if op == ">=" and value >= expected:
                return True
            if op == "=~" and isinstance(value, str) and re.search(str(expected), value):
                return True
        except TypeError:
            continue
    return False


def _find(steps, data):
    current = [data]
    for step in steps:
        nxt = []
        for value in current:
            nxt.extend(_apply(step, value))
        current = nxt
    return current


def find(path, data):
    """Every value the JSONPath matches in `data` (plain JSON values), in document order."""
    return _find(compile_path(path), data)


# The characters jsonpath_ng quotes a key for when it writes a path (its lexer's literals).
_LITERALS = "*.[]()$,:|&~"


def _key_text(key):
    return "'%s'" % key if any(c in key for c in _LITERALS) else key


def _child(path, part):
    return part if path is None else "%s.%s" % (path, part)


def _list_items(step, value):
    """The indexes a list step selects in a list (the step's own index as written, as jsonpath_ng)."""
    kind = step[0]
    if kind == "all":
        return [(i, i) for i in range(len(value))]
    if kind == "index":
        return [(step[1], step[1])] if -len(value) <= step[1] < len(value) else []
    if kind == "slice":
        return [(i, i) for i in range(len(value))[step[1]:step[2]]]
    return [(i, i) for i, item in enumerate(value) if all(_holds(term, item) for term in step[1])]


def _apply_paths(step, value, path):
    kind = step[0]
    if kind == "field":
        if isinstance(value, dict) and step[1] in value:
            return [(value[step[1]], _child(path, _key_text(step[1])))]
        return []
    if kind == "wild":
        return [(v, _child(path, _key_text(k))) for k, v in value.items()] if isinstance(value, dict) else []
    if kind in ("all", "index", "slice", "filter"):
        if isinstance(value, list):
            return [(value[i], _child(path, "[%d]" % shown)) for i, shown in _list_items(step, value)]
        return [(value, path)] if kind == "all" else []
    if kind == "descend":
        out = []
        stack = [(value, path)]
        while stack:
            node, at = stack.pop()
            out.extend(_apply_paths(step[1], node, at))
            if isinstance(node, dict):
                stack.extend(reversed([(v, _child(at, _key_text(k))) for k, v in node.items()]))
            elif isinstance(node, list):
                stack.extend(reversed([(v, _child(at, "[%d]" % i)) for i, v in enumerate(node)]))
        return out
    raise JSONPathError("unknown step %r" % (kind,))


def find_paths(path, data):
    """(value, full path) of every match of the JSONPath in `data`, in document order."""
    current = [(data, None)]
    for step in compile_path(path):
        nxt = []
        for value, at in current:
            nxt.extend(_apply_paths(step, value, at))
        current = nxt
    return [(value, "$" if at is None else at) for value, at in current]
