# panther_core.immutable (as in Panther's panther_core): the read-only containers the event is made of.
# A JSON object is an ImmutableCaseInsensitiveDict (string keys match case-insensitively, an exact
# match wins), a JSON array an ImmutableList; nested values are wrapped on access. `copy()` gives a
# mutable deep copy; both compare equal to the plain dict / list / tuple they hold. Like Panther's,
# they print as `ImmutableList((…))` / `ImmutableCaseInsensitiveDict({…})` and a slice of a list is
# a plain tuple (of copies). A container keeps the wrappers of its children once made: one event is
# read by many rules in a warm worker, and nothing reachable through these methods is writable.
import copy as _copy
from collections.abc import Mapping, Sequence

__all__ = ["ImmutableCaseInsensitiveDict", "ImmutableList", "json_encoder"]

_ABSENT = object()


def _slot_dict(owner, name):
    """The dict kept in one of `owner`'s slots, made on first use (the wrappers are read-only)."""
    found = getattr(owner, name)
    if found is None:
        found = {}
        object.__setattr__(owner, name, found)
    return found


def _child(owner, key, value):
    """The wrapper of a nested object or list, made once per container (not once per access)."""
    kids = _slot_dict(owner, "_kids")
    wrapped = kids.get(key)
    if wrapped is None:
        wrapped = kids[key] = _wrap(value)
    return wrapped


def _wrap(value):
    # Nested objects and lists are wrapped on access, so nothing reachable from the event is writable.
    if isinstance(value, dict):
        return ImmutableCaseInsensitiveDict(value)
    if isinstance(value, list):
        return ImmutableList(value)
    return value


class ImmutableList(Sequence):
    """A read-only view of a JSON array; elements are wrapped like the event's values."""

    __slots__ = ("_items", "_kids")

    def __init__(self, items):
        if isinstance(items, ImmutableList):
            items = items._items
        elif not isinstance(items, list):
            items = list(items)
        object.__setattr__(self, "_items", items)
        object.__setattr__(self, "_kids", None)

    def __getitem__(self, index):
        if isinstance(index, slice):
            # Panther's list holds a tuple and slices it as it is; copies, so no rule can change the
            # record another rule reads through a slice's objects.
            return tuple(_copy.deepcopy(self._items[index]))
        value = self._items[index]
        if isinstance(value, (dict, list)):
            return _child(self, index if index >= 0 else index + len(self._items), value)
        return value

    def __len__(self):
        return len(self._items)

    def __eq__(self, other):
        if isinstance(other, ImmutableList):
            return self._items == other._items
        if isinstance(other, (list, tuple)):
            return self._items == list(other)
        return NotImplemented

    def __hash__(self):
        raise TypeError("unhashable type: 'ImmutableList'")

    def __setattr__(self, name, value):
        raise TypeError("the event is read-only")

    def __repr__(self):
        return "ImmutableList(%s)" % (tuple(self._items),)

    def copy(self):
        """A mutable deep copy (a plain list), as Panther's ImmutableList.copy()."""
        return _copy.deepcopy(self._items)

    as_list = copy
    to_list = copy


class ImmutableCaseInsensitiveDict(Mapping):
    """A read-only mapping whose string keys match case-insensitively (an exact match wins)."""

    __slots__ = ("_data", "_lower", "_kids")

    def __init__(self, data):
        if isinstance(data, ImmutableCaseInsensitiveDict):
            data = data._data
        elif not isinstance(data, dict):
            data = dict(data)
        object.__setattr__(self, "_data", data)
        object.__setattr__(self, "_lower", None)
        object.__setattr__(self, "_kids", None)

    def _lowered(self):
        # Built on the first miss only: most lookups hit the exact key. The first key in document
        # order wins when two keys differ only by case.
        lower = {}
        for k in self._data:
            if isinstance(k, str):
                lower.setdefault(k.lower(), k)
        object.__setattr__(self, "_lower", lower)
        return lower

    def _find(self, key):
        if key in self._data:
            return key
        if not isinstance(key, str):
            raise KeyError(key)
        found = (self._lower or self._lowered()).get(key.lower())
        if found is None:
            raise KeyError(key)
        return found

    def __getitem__(self, key):
        key = self._find(key)
        value = self._data[key]
        return _child(self, key, value) if isinstance(value, (dict, list)) else value

    def __contains__(self, key):
        try:
            self._find(key)
            return True
        except KeyError:
            return False

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)

    def __setitem__(self, key, value):
        raise TypeError("the event is read-only")

    def __delitem__(self, key):
        raise TypeError("the event is read-only")

    def __setattr__(self, name, value):
        raise TypeError("the event is read-only")

    _repr_name = "ImmutableCaseInsensitiveDict"

    def __repr__(self):
        return "%s(%s)" % (self._repr_name, self._data)

    def get(self, key, default=None):
        # self[key] without raising on a miss (rules ask for absent keys all the time); the
        # child's wrapper inline (this is the call rules make most)
        data = self._data
        value = data.get(key, _ABSENT)
        if value is _ABSENT:
            if not isinstance(key, str):
                return default
            key = (self._lower or self._lowered()).get(key.lower(), _ABSENT)
            if key is _ABSENT:
                return default
            value = data[key]
        if isinstance(value, (dict, list)):
            kids = self._kids
            if kids is None:
                kids = {}
                object.__setattr__(self, "_kids", kids)
            wrapped = kids.get(key)
            if wrapped is None:
                wrapped = kids[key] = _wrap(value)
            return wrapped
        return value

    def copy(self):
        """A mutable deep copy (a plain dict), as Panther's ImmutableCaseInsensitiveDict.copy()."""
        return _copy.deepcopy(self._data)

    to_dict = copy

    # Panther's event helpers; kept on every object of the event (a superset of Panther, where only
    # the top-level event has them) so helpers written either way work.
    def deep_get(self, *keys, default=None):
        return deep_get(self, *keys, default=default)

    def deep_walk(self, *keys, default=None, return_val="all"):
        return deep_walk(self, *keys, default=default, return_val=return_val)


def json_encoder(obj):
    """json.dumps(default=...) for the immutable containers, as Panther's json_encoder."""
    if isinstance(obj, ImmutableCaseInsensitiveDict):
        return obj._data
    if isinstance(obj, ImmutableList):
        return obj._items
    raise TypeError("object of type %s is not JSON serializable" % type(obj))


def deep_get(obj, *keys, default=None):
    """panther_base_helpers.deep_get: walks mappings by key; `default` when a step is missing, not a
    mapping, or the value found is None."""
    current = obj
    for key in keys:
        # the event's own containers and None first: isinstance(x, Mapping) is the ABC's slow check
        if isinstance(current, ImmutableCaseInsensitiveDict):
            current = current.get(key, default)
        elif current is None:
            current = default
        else:
            current = current.get(key, default) if isinstance(current, Mapping) else default
    return default if current is None else current


def _empty_list(value):
    return isinstance(value, Sequence) and not isinstance(value, str) and all(_empty_list(v) for v in value)


def deep_walk(obj, *keys, default=None, return_val="all"):
    """panther_base_helpers.deep_walk, step for step (panther-labs/panther-analysis,
    global_helpers/panther_base_helpers.py): a mapping is walked by key; a list maps the walk over
    its items and collects their results (a list result adds its items, one level), unique, in order;
    past the last key the value is returned as it is (a list too), `default` for a list of empty
    lists. "all" returns one value alone and several as a list; "first" / "last" pick one."""
    if not keys:
        return default if _empty_list(obj) else obj
    if isinstance(obj, Mapping):
        nxt = obj.get(keys[0], None)
        return deep_walk(nxt, *keys[1:], default=default, return_val=return_val) if nxt is not None else default
    found = {}
    if isinstance(obj, Sequence) and not isinstance(obj, str):
        for item in obj:
            value = deep_walk(item, *keys, default=default, return_val=return_val)
            if value is not None:
                if isinstance(value, Sequence) and not isinstance(value, str):
                    for sub in value:
                        found[sub] = None
                else:
                    found[value] = None
    values = list(found)
    if not values:
        return default
    # Panther answers the string "all" for an unknown return_val; kept as it is.
    return {"first": values[0], "last": values[-1], "all": values[0] if len(values) == 1 else values}.get(return_val, "all")
