# panther_detection_helpers.caching with the signatures and return values of Panther's package
# (panther-labs/panther_detection_helpers, panther_detection_helpers/caching.py), over a dict in
# this process instead of DynamoDB. The runner calls _reset() before every test, so the store lives
# for one test; rules that depend on stored state are tested with Mocks, as in Panther.
import json
from collections.abc import Mapping
from datetime import datetime

_COUNT_COL = "intCount"
_STRING_SET_COL = "stringSet"
_DICT_COL = "dictionary"
_TTL_COL = "expiresAt"
_EPOCH_SECONDS_DELTA_DEFAULT = 90 * (60 * 60 * 24)  # 90 days

_STORE = {}


def _reset():
    _STORE.clear()


def kv_table():
    raise RuntimeError("panther_detection_helpers.caching: no key-value table in unit tests (the in-memory store stands in for it)")


def _now():
    return datetime.now().timestamp()


def _item(key):
    return _STORE.setdefault(key, {})


def _live(key):
    """The item if it exists and its TTL (when it has one) is not past."""
    item = _STORE.get(key)
    if item is None:
        return None
    expiration = item.get(_TTL_COL)
    if expiration is not None and float(expiration) < int(_now()):
        return None
    return item


def ttl_expired(response):
    expiration = response.get("Item", {}).get(_TTL_COL, 0)
    return expiration and float(expiration) <= _now()


def _response(key):
    item = _STORE.get(key)
    return {"Item": dict(item)} if item is not None else {}


def _finalize_epoch_seconds(epoch_seconds):
    if isinstance(epoch_seconds, str):
        epoch_seconds = float(epoch_seconds)
    if isinstance(epoch_seconds, float):
        epoch_seconds = int(epoch_seconds)
    if not isinstance(epoch_seconds, int):
        epoch_seconds = int(_now()) + _EPOCH_SECONDS_DELTA_DEFAULT
    if epoch_seconds < 1000000000:
        epoch_seconds = int(_now()) + epoch_seconds
    return epoch_seconds


def get_counter(key, force_ttl_check=False):
    response = _response(key)
    if force_ttl_check and ttl_expired(response):
        return 0
    return response.get("Item", {}).get(_COUNT_COL, 0)


def increment_counter(key, val=1, epoch_seconds=_EPOCH_SECONDS_DELTA_DEFAULT):
    # As Panther: a live key is added to and its new count returned; a missing or expired one
    # (DynamoDB's condition fails) answers `val`.
    live = _live(key) is not None and _TTL_COL in _STORE[key]
    item = _item(key)
    item[_COUNT_COL] = item.get(_COUNT_COL, 0) + val
    if epoch_seconds is not None or live:
        item[_TTL_COL] = _finalize_epoch_seconds(epoch_seconds)
    return item[_COUNT_COL] if live else val


def reset_counter(key):
    _STORE.get(key, {}).pop(_COUNT_COL, None)


def set_key_expiration(key, epoch_seconds):
    _item(key)[_TTL_COL] = _finalize_epoch_seconds(epoch_seconds)


def put_dictionary(key, val, epoch_seconds=None):
    if not isinstance(val, (dict, Mapping)):
        raise TypeError("panther_oss_helpers.put_dictionary: value is not a dictionary")
    try:
        data = json.dumps(val)
    except TypeError as exc:
        raise ValueError(
            "panther_oss_helpers.put_dictionary: value is a dictionary, but it is not JSON serializable") from exc
    # DynamoDB's put_item replaces the whole item.
    _STORE[key] = {_DICT_COL: data, _TTL_COL: _finalize_epoch_seconds(epoch_seconds)}


def get_dictionary(key, force_ttl_check=False):
    response = _response(key)
    item = response.get("Item", {}).get(_DICT_COL, {})
    if not item:
        return {}
    if force_ttl_check and ttl_expired(response):
        return {}
    try:
        return json.loads(item)
    except json.decoder.JSONDecodeError as exc:
        raise ValueError(
            "panther_oss_helpers.get_dictionary: Data found in DynamoDB could not be decoded into JSON") from exc


def get_string_set(key, force_ttl_check=False):
    response = _response(key)
    if force_ttl_check and ttl_expired(response):
        return set()
    return set(response.get("Item", {}).get(_STRING_SET_COL, set()))


def put_string_set(key, val, epoch_seconds=None):
    if not val:
        reset_string_set(key)
    else:
        _STORE[key] = {_STRING_SET_COL: set(val), _TTL_COL: _finalize_epoch_seconds(epoch_seconds)}


def _as_set(val):
    return {val} if isinstance(val, str) else set(val)


def add_to_string_set(key, val, epoch_seconds=_EPOCH_SECONDS_DELTA_DEFAULT):
    items = _as_set(val)
    if not items:
        return get_string_set(key, force_ttl_check=True)
    if _live(key) is None:
        _STORE.pop(key, None)
    item = _item(key)
    item[_STRING_SET_COL] = set(item.get(_STRING_SET_COL, set())) | items
    if epoch_seconds is not None:
        item[_TTL_COL] = _finalize_epoch_seconds(epoch_seconds)
    return set(item[_STRING_SET_COL])


def remove_from_string_set(key, val, epoch_seconds=_EPOCH_SECONDS_DELTA_DEFAULT):
    items = _as_set(val)
    if not items:
        return get_string_set(key, force_ttl_check=True)
    if _live(key) is None:
        reset_string_set(key)
        return set()
    item = _item(key)
    remaining = set(item.get(_STRING_SET_COL, set())) - items
    if remaining:
        item[_STRING_SET_COL] = remaining
    else:
        item.pop(_STRING_SET_COL, None)  # DynamoDB drops an emptied set attribute
    if epoch_seconds is not None:
        item[_TTL_COL] = _finalize_epoch_seconds(epoch_seconds)
    return set(remaining)


def reset_string_set(key):
    _STORE.get(key, {}).pop(_STRING_SET_COL, None)


def evaluate_threshold(key, threshold=10, expiry_seconds=3600):
    hourly_error_count = increment_counter(key, epoch_seconds=expiry_seconds)
    if hourly_error_count >= threshold:
        reset_counter(key)
        return True
    return False


def check_account_age(key):
    if isinstance(key, str) and key != "":
        return bool(get_string_set(key, force_ttl_check=True))
    return False
