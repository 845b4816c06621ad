# panther_core.enriched_event: PantherEvent, the event handed to every rule function. A read-only
# case-insensitive mapping (panther_core.immutable) with `deep_get`, `deep_walk`, `to_dict`, and
# `udm()`, whose behaviour follows Panther's own PantherEvent.udm (panther_core/enriched_event.py;
# docs/python-rules.md lists each case): the data model of the event's log type first, then p_udm,
# then the event itself.
from .immutable import ImmutableCaseInsensitiveDict, _wrap

__all__ = ["PantherEvent"]


class PantherEvent(ImmutableCaseInsensitiveDict):
    """The event handed to every rule function; `data_model` is the one of its log type, if any."""

    __slots__ = ("_model",)

    def __init__(self, event, data_model=None):
        super().__init__(event)
        object.__setattr__(self, "_model", data_model)

    @property
    def data_model(self):
        return self._model

    def udm(self, *key, default=None):
        model = self._model
        if len(key) == 1 and model:
            name = key[0]
            if name in model.paths:
                matches = model.matches(name, self._data)
                if len(matches) > 1:
                    raise Exception(  # noqa: TRY002 - Panther raises exactly this
                        "JSONPath [%s] in DataModel [%s], matched multiple fields." % (model.paths[name], model.data_model_id))
                if matches:
                    return _wrap(matches[0])
            method = model.methods.get(name)
            if callable(method):
                return _wrap(method(ImmutableCaseInsensitiveDict(self._data)))
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
        """The Path or Method name mapped to `key`, None when the data model has none."""
        model = self._model
        if not model:
            return None
        if key in model.paths:
            return model.paths[key]
        method = model.methods.get(key)
        return getattr(method, "__name__", repr(method)) if method else None
