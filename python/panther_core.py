# The event type scheduled rules see (detections.md §3.1): a read-only mapping with case-insensitive
# keys, read-only nested values, and Panther's helpers `get`, `deep_get`, `deep_walk`, `to_dict`.
# Named `panther_core` so existing rules that `from panther_core import PantherEvent` load unchanged.
# Pure standard library; imported once by the warm worker, so its cost is paid at cold start only.
import copy
from collections.abc import Mapping, Sequence

__all__ = ["PantherEvent", "ImmutableCaseInsensitiveDict", "ImmutableList"]


def _wrap(value):
    # Nested objects and lists are wrapped on access, so nothing reachable from the event is writable.
    if isinstance(value, dict):
        return ImmutableCaseInsensitiveDict(value)
    if isinstance(value, list):
        return ImmutableList(value)
    return value


def _unwrap(value):
    if isinstance(value, ImmutableCaseInsensitiveDict):
        return value.to_dict()
    if isinstance(value, ImmutableList):
        return value.to_list()
    return copy.deepcopy(value)


class ImmutableList(Sequence):
    """A read-only view of a JSON array; elements are wrapped like the event's values."""

    __slots__ = ("_items",)

    def __init__(self, items):
        object.__setattr__(self, "_items", items)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return ImmutableList(self._items[index])
        return _wrap(self._items[index])

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
        return repr(self._items)

    def to_list(self):
        return copy.deepcopy(self._items)


class ImmutableCaseInsensitiveDict(Mapping):
    """A read-only mapping whose string keys match case-insensitively (an exact match wins)."""

    __slots__ = ("_data", "_lower")

    def __init__(self, data):
        object.__setattr__(self, "_data", data)
        object.__setattr__(self, "_lower", None)

    def _find(self, key):
        if key in self._data:
            return key
        if not isinstance(key, str):
            raise KeyError(key)
        lower = self._lower
        if lower is None:
            # Built on the first miss only: most lookups hit the exact key. The first key in document
            # order wins when two keys differ only by case.
            lower = {}
            for k in self._data:
                if isinstance(k, str):
                    lower.setdefault(k.lower(), k)
            object.__setattr__(self, "_lower", lower)
        found = lower.get(key.lower())
        if found is None:
            raise KeyError(key)
        return found

    def __getitem__(self, key):
        return _wrap(self._data[self._find(key)])

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

    def __repr__(self):
        return repr(self._data)

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default

    def to_dict(self):
        """A mutable deep copy of the underlying data."""
        return copy.deepcopy(self._data)

    def deep_get(self, *keys, default=None):
        """Walks nested objects by key; `default` when a step is missing, not an object, or null."""
        current = self
        for key in keys:
            if not isinstance(current, Mapping):
                return default
            current = current.get(key, None)
            if current is None:
                return default
        return current

    def deep_walk(self, *keys, default=None, return_val="all"):
        """Like deep_get, but maps over lists on the way; collects unique leaf values in order.

        return_val: "all" (one value alone, else the list), "first" or "last".
        """
        found = []
        _walk(self, keys, found)
        if not found:
            return default
        if return_val == "first":
            return found[0]
        if return_val == "last":
            return found[-1]
        return found[0] if len(found) == 1 else found


def _is_list(value):
    return isinstance(value, (list, tuple, ImmutableList))


def _walk(obj, keys, found):
    if obj is None:
        return
    if not keys:
        if _is_list(obj):
            for item in obj:
                _walk(item, keys, found)
            return
        if obj not in found:
            found.append(obj)
        return
    if isinstance(obj, Mapping):
        _walk(obj.get(keys[0], None), keys[1:], found)
    elif _is_list(obj):
        for item in obj:
            _walk(item, keys, found)


class PantherEvent(ImmutableCaseInsensitiveDict):
    """The event handed to every rule function."""

    __slots__ = ()
