"""What the MongoDB backend's sections share: errors, constants and small helpers."""

from __future__ import annotations

from typing import Any

from symfonic_cli.codec.metadata_json import MetadataError
from symfonic_cli.errors import StoreError, UsageError
from symfonic_cli.location import StoreLocation, scrub
from symfonic_cli.stores._common import error_translators
from symfonic_cli.threadkey import prefix_upper_bound

PASSWORD_ENV = "SYMFONIC_MONGO_PASSWORD"


def _string_literal(value: Any, what: str = "identifier") -> str:
    # A str is always a literal in a query document; anything else could become an operator.
    if not isinstance(value, str):
        raise UsageError(f"{what} must be a string, got {type(value).__name__}")
    return value


def _error(location: StoreLocation, exc: BaseException, timeout: float | None = None) -> StoreError:
    from pymongo import errors

    where = location.display
    if isinstance(exc, errors.OperationFailure):
        code = exc.code
        if code == 18:
            return StoreError(f"authentication failed for {where}", hint=f"check the user and the password (URL or {PASSWORD_ENV})")
        if code == 13:
            return StoreError(scrub(f"not authorized on {where}: {exc.details.get('errmsg') if exc.details else exc}", location))
        msg = exc.details.get("errmsg") if exc.details else str(exc)
        return StoreError(scrub(f"MongoDB error on {where}: {msg} (code {code})", location))
    if isinstance(exc, (errors.ServerSelectionTimeoutError, errors.ConnectionFailure)):
        within = f" within {timeout:g}s" if timeout else ""
        return StoreError(f"cannot reach the MongoDB server of {where}{within}", hint="check host, port and network; --connect-timeout sets the wait")
    if isinstance(exc, (errors.ConfigurationError, errors.InvalidURI, ValueError, TypeError)):
        return StoreError(scrub(f"bad MongoDB URL {where}: {exc}", location))
    return StoreError(scrub(f"MongoDB error on {where}: {exc}", location))


def _pymongo_errors() -> tuple[type[BaseException], ...]:
    from pymongo.errors import PyMongoError

    return (PyMongoError,)


# pymongo errors become one-line store errors, the password scrubbed.
_driver_errors, _driver_errors_iter = error_translators(
    _pymongo_errors, lambda store, exc: _error(store.location, exc, store.connect_timeout)
)


def _leaf(value: Any, cid: str) -> Any:
    """One metadata value as the saver stores it (a serialized pair, or a dict of them), decoded."""
    if value is None:
        return None
    return _loads_metadata(value, cid)


def _key_field(doc: dict, name: str) -> str:
    value = doc.get(name, "" if name == "checkpoint_ns" else None)
    if isinstance(value, str):
        return value
    raise StoreError(
        f"a checkpoint document has an unexpected shape: '{name}' is {type(value).__name__} "
        f"({_short(value)}), not a string"
    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# Strings compare by their UTF-8 bytes under the simple collation, which queries that select
# threads ask for: a collection's own default collation (case-insensitive, say) would make a key
# range or an equality reach other keys.
BINARY = {"locale": "simple"}


def _prefix_range(prefix: str) -> dict[str, str]:
    """Exactly the string keys starting with ``prefix``, under the simple collation (byte order).
    A string bound keeps the comparison to strings (BSON compares within a type bracket)."""
    hi = prefix_upper_bound(prefix)
    return {"$gte": prefix} if hi is None else {"$gte": prefix, "$lt": hi}


def _field(doc: dict, name: str, kind: type, cid: str | None) -> Any:
    value = doc.get(name)
    if kind is bytes and isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if not isinstance(value, kind):
        what = f"checkpoint {cid}" if cid else "a checkpoint document"
        raise StoreError(f"{what} has an unexpected shape: '{name}' is {type(value).__name__}, not {kind.__name__}")
    return value


def _loads_metadata(value: Any, cid: str) -> Any:
    """As the saver's ``loads_metadata``: dicts key by key, leaves are ``[type, bytes]`` pairs."""
    try:
        return _decode_stored(value)
    except MetadataError as exc:
        raise StoreError(f"metadata of checkpoint {cid}: {exc.reason}") from None


def _decode_stored(value: Any) -> Any:
    from symfonic_cli.codec.strict import loads

    if value is None:
        return {}
    if isinstance(value, dict):
        return {k: _decode_stored(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], (bytes, bytearray)):
        try:
            return loads(value[0], bytes(value[1]), what="the value")
        except StoreError as exc:
            raise MetadataError(exc.message) from None
    raise MetadataError(f"a value of an unexpected shape ({type(value).__name__})")
