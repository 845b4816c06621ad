# panther_core.exceptions, as far as rules and helpers meet it: PantherError, what Panther raises for
# a misuse of the event such as `udm_path()` on an event without a data model.

__all__ = ["PantherError"]


class PantherError(Exception):
    """An error of Panther's own event helpers (not of the rule's code)."""
