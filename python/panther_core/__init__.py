# panther_core, as far as rules and helpers use it: `PantherEvent` (enriched_event), the immutable
# containers (immutable) and `DataModel` (data_model), each also importable from its submodule like
# Panther's package. Pure standard library; imported once by the warm worker (cold start only).
from .data_model import DataModel
from .enriched_event import PantherEvent
from .immutable import ImmutableCaseInsensitiveDict, ImmutableList

__all__ = ["DataModel", "ImmutableCaseInsensitiveDict", "ImmutableList", "PantherEvent"]
