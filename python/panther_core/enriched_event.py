# panther_core.enriched_event: PantherEvent, the event handed to every rule function. A read-only
# case-insensitive mapping (panther_core.immutable) with the methods of Panther's own PantherEvent
# (panther_core/enriched_event.py; docs/python-rules.md lists each case): `udm()` (the data model of
# the event's log type, then p_udm, then the event), `udm_path()`, `deep_get`, `deep_walk` (over
# the raw event: exact keys, plain values), `lookup()`, `event_time_epoch()`, `to_dict`.
import copy
from collections.abc import Mapping, Sequence

from .data_model import E_NO_DATA_MODEL_FOUND
from .exceptions import PantherError
from .immutable import ImmutableCaseInsensitiveDict, _slot_dict, _wrap, json_encoder

__all__ = ["PantherEvent"]


class PantherEvent(ImmutableCaseInsensitiveDict):
    """The event handed to every rule function; `data_model` is the one of its log type, if any."""

    _repr_name = "PantherEvent"

    __slots__ = ("_model", "_plain", "_paths")

    def __init__(self, event, data_model=None):
        super().__init__(event)
        object.__setattr__(self, "_model", data_model)
        object.__setattr__(self, "_plain", None)  # the view a Method mapping is given
        object.__setattr__(self, "_paths", None)  # a mapped name -> what its Path matches here

    @property
    def data_model(self):
        return self._model

    def udm(self, *key, default=None):
        model = self._model
        if len(key) == 1 and model:
            name = key[0]
            if name in model.paths:
                # A Path's matches depend on the record alone: found once per event, however many
                # rules ask (the wrapped value too, read-only like the rest of the event).
                paths = _slot_dict(self, "_paths")
                found = paths.get(name)
                if found is None:
                    matches = model.matches(name, self._data)
                    found = paths[name] = (len(matches), _wrap(matches[0]) if matches else None)
                if found[0] > 1:
                    raise Exception(  # noqa: TRY002 - Panther raises exactly this
                        "JSONPath [%s] in DataModel [%s], matched multiple fields." % (model.paths[name], model.data_model_id))
                if found[0]:
                    return found[1]
            method = model.methods.get(name)
            if callable(method):
                # A Method is the data model's code: called every time (its answer is not kept).
                plain = self._plain
                if plain is None:
                    plain = ImmutableCaseInsensitiveDict(self._data)
                    object.__setattr__(self, "_plain", plain)
                return _wrap(method(plain))
            # A name the data model maps, with nothing found: the default, without the fallbacks.
            if name in model.paths or name in model.methods:
                return default
        if key:
            result = self.deep_get("p_udm", *key)
            if not result:
                result = self.deep_get(*key)
            if result:
                return result
        return default

    def udm_path(self, key):
        """As Panther: the full path the mapping of `key` matched in this event (`a.b`, not the Path
        as written), else the name of the Method mapped to it, else None; an event without a data
        model raises PantherError."""
        model = self._model
        if not model:
            raise PantherError(E_NO_DATA_MODEL_FOUND, self._data.get("p_log_type"))
        if key in model.paths:
            matches = model.match_paths(key, self._data)
            if len(matches) > 1:
                raise Exception(  # noqa: TRY002 - Panther raises exactly this
                    "JSONPath [%s] in DataModel [%s], matched multiple fields." % (model.paths[key], model.data_model_id))
            if matches:
                return matches[0][1]
        method = model.methods.get(key)
        return getattr(method, "__name__", repr(method)) if callable(method) else None

    def deep_walk(self, *keys, default=None, return_val="all"):
        """Panther's PantherEvent.deep_walk: the walk of panther_base_helpers.deep_walk over the raw
        event, so what it returns is plain Python (a list, a dict), not the event's read-only
        containers. Keys match as the event's do (an exact key first, else ignoring case: detections.md
        §3.1), where Panther's walk over the raw event matches them exactly."""
        return _raw_deep_walk(self._data, keys, default, return_val)

    def lookup(self, lookup_name, lookup_key):
        """Panther's lookup without a lookup table: the test data under `_mocked_lookup_data_`."""
        return self.deep_get("_mocked_lookup_data_", lookup_name, lookup_key)

    def event_time_epoch(self, force_utc=True):
        """Epoch seconds of `p_event_time` (read as UTC unless force_utc is False), 0 if unreadable."""
        text = self.get("p_event_time") or ""
        return _epoch(text if isinstance(text, str) else "", force_utc)

    json_encoder = staticmethod(json_encoder)


def _empty_list(value):
    return isinstance(value, Sequence) and not isinstance(value, str) and all(_empty_list(v) for v in value)


def _get_ignoring_case(data, key, default):
    if key in data:
        return data[key]
    if isinstance(key, str):
        lower = key.lower()
        for k in data:
            if isinstance(k, str) and k.lower() == lower:
                return data[k]
    return default


def _raw_deep_walk(obj, keys, default, return_val):
    if not keys:
        if obj is None or _empty_list(obj):
            return default
        # a deep copy: the caller may change it, never the record other rules read
        return copy.deepcopy(obj) if isinstance(obj, (dict, list)) else obj
    if isinstance(obj, Mapping):
        return _raw_deep_walk(_get_ignoring_case(obj, keys[0], default), keys[1:], default, return_val)
    found = {}
    if isinstance(obj, Sequence) and not isinstance(obj, str):
        for item in obj:
            value = _raw_deep_walk(item, keys, default, return_val)
            if value is not None:
                if isinstance(value, Sequence) and not isinstance(value, str):
                    for sub in value:
                        found[sub] = None
                else:
                    found[value] = None
    values = list(found)
    if not values:
        return default
    return {"first": values[0], "last": values[-1], "all": values[0] if len(values) == 1 else values}.get(return_val, "all")


def _epoch(text, force_utc):
    try:
        from dateutil import parser  # Panther's reader, when the interpreter has it
    except ImportError:
        parser = None
    if parser is not None:
        try:
            return int(parser.parse(text + " UTC" if force_utc else text).timestamp())
        except (ValueError, OverflowError):
            return 0
    import datetime

    # Panther's p_event_time: "2024-01-02 03:04:05.123456789" (nanoseconds); ISO forms too.
    cleaned = text.strip().replace("T", " ").rstrip("Z")
    try:
        when = datetime.datetime.strptime(cleaned.partition(".")[0], "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return 0
    return int(when.replace(tzinfo=datetime.timezone.utc).timestamp())
