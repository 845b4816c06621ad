# The reference of test/rules/pyyaml-differential.test.ts: reads YAML texts as JSON lines on stdin
# and answers one JSON line each: PyYAML's verdict (yaml.safe_load), and the value read once this
# project's decisions are applied (plain scalars resolve by the YAML 1.2 core schema: `yes`, `on`,
# `1_000`, `2024-01-01` stay strings; `!!timestamp` is its text), by PyYAML's Python scanner and by
# its libyaml one (the scanner of PAT's ruamel.yaml safe loader), which differ on tabs.
import json
import math
import re
import sys

import yaml


class Core12(yaml.SafeLoader):
    """PyYAML's safe loader with the YAML 1.2 core schema's implicit resolvers (spec 10.3.2)."""


class CCore12(yaml.CSafeLoader):
    """The same on libyaml's scanner and parser."""


Core12.yaml_implicit_resolvers = {}
CCore12.yaml_implicit_resolvers = {}
for tag, pattern, first in [
    ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    ("int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", list("-+0123456789")),
    (
        "float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        list("-+0123456789."),
    ),
    ("merge", r"^(?:<<)$", ["<"]),
]:
    for loader in (Core12, CCore12):
        loader.add_implicit_resolver("tag:yaml.org,2002:" + tag, re.compile(pattern), first)


def core_int(loader, node):
    text = loader.construct_scalar(node)
    if re.fullmatch(r"[-+]?[0-9]+", text):
        return int(text)
    if re.fullmatch(r"0o[0-7]+", text):
        return int(text[2:], 8)
    if re.fullmatch(r"0x[0-9a-fA-F]+", text):
        return int(text[2:], 16)
    raise yaml.constructor.ConstructorError(None, None, "not a YAML 1.2 integer: %r" % text, node.start_mark)


def timestamp_text(loader, node):
    # The text as written, once PyYAML's own constructor has accepted it (it refuses `2024-02-30`).
    yaml.constructor.SafeConstructor.construct_yaml_timestamp(loader, node)
    return loader.construct_scalar(node)


for loader in (Core12, CCore12):
    loader.add_constructor("tag:yaml.org,2002:int", core_int)
    loader.add_constructor("tag:yaml.org,2002:timestamp", timestamp_text)


class PythonOnly(Exception):
    """A value JSON cannot hold (bytes, a set, a tuple): rulekeeper refuses such tags."""


def plain(v):
    """The value as JSON can hold it; floats that JSON cannot are spelled out."""
    if isinstance(v, bool) or v is None or isinstance(v, (int, str)):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return {"$float": "nan"}
        if math.isinf(v):
            return {"$float": "inf" if v > 0 else "-inf"}
        return v
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if isinstance(k, bool):
                k = "true" if k else "false"
            elif k is None:
                k = "null"
            elif isinstance(k, (int, float)):
                k = json.dumps(k)
            elif not isinstance(k, str):
                raise PythonOnly(type(k).__name__)
            out[k] = plain(x)
        return out
    raise PythonOnly(type(v).__name__)


def verdict(load):
    try:
        return {"value": plain(load())}
    except PythonOnly as err:
        return {"pythonOnly": str(err)}
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = {"line": mark.line + 1, "column": mark.column + 1} if mark else {}
        return {"error": str(err).split("\n")[0], "problem": getattr(err, "problem", None), **where}
    except Exception as err:  # PyYAML's own constructors raise plain exceptions on bad tagged values
        return {"error": "%s: %s" % (type(err).__name__, err)}


for line in sys.stdin:
    text = json.loads(line)
    safe = verdict(lambda: yaml.safe_load(text))
    core = verdict(lambda: yaml.load(text, Loader=Core12))
    libyaml = verdict(lambda: yaml.load(text, Loader=CCore12))
    sys.stdout.write(json.dumps({"safe": safe, "core": core, "libyaml": libyaml}) + "\n")
