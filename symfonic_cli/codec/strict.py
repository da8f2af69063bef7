"""Strict decoding of stored values: LangGraph's own decoding, allow-listed types only.

Nothing stored is ever executed: no pickle, and a msgpack value that names a class outside
LangGraph's safe list comes back as its raw serialized fields. The names of such classes are
collected so the command can warn about them. msgpack (every value the savers write) is decoded
by ``codec.exthook``, LangGraph's strict hook without its serializer's imports; the legacy
``json`` form alone goes through LangGraph's ``JsonPlusSerializer``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from symfonic_cli.codec.exthook import Blocked, hook, strict_hook
from symfonic_cli.errors import StoreError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.codec.exthook import View
    from collections.abc import Mapping
    from langgraph.checkpoint.serde.event_hooks import SerdeEvent

__all__ = ["Blocked", "LeanObject", "collect_blocked", "lean_loads", "lean_message_ids", "loads", "strict_hook"]

_serde = None


def _serializer():
    """LangGraph's strict serializer, for the legacy ``json`` form (its reviver is langchain_core's)."""
    global _serde
    if _serde is None:
        from langgraph.checkpoint.serde.event_hooks import register_serde_event_listener
        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

        import logging

        # LangGraph logs blocked types itself; we report them our own way.
        for name in ("langgraph.checkpoint.serde.jsonplus", "langgraph.checkpoint.serde"):
            logging.getLogger(name).addHandler(logging.NullHandler())
            logging.getLogger(name).propagate = False
        register_serde_event_listener(_on_event)
        _serde = JsonPlusSerializer(pickle_fallback=False, allowed_msgpack_modules=None)
    return _serde


def _on_event(event: SerdeEvent) -> None:
    collector = Blocked.active()
    if collector is not None and event.get("kind", "").endswith("blocked"):
        name = f"{event.get('module')}.{event.get('name')}"
        if event.get("method"):
            name += f".{event['method']}"
        collector.add(name)


def collect_blocked() -> Blocked:
    """A new collector: ``with collect_blocked() as blocked: loads(...)``."""
    return Blocked()


_viewing: ContextVar[Mapping[tuple[str, str], View] | None] = ContextVar("symfonic_views", default=None)


@contextmanager
def viewing(views: Mapping[tuple[str, str], View]) -> Iterator[None]:
    """Within it, ``loads`` reads these classes through their views (``exthook.hook``): a store's
    ``read_checkpoint`` decodes with them without a parameter of its own."""
    token = _viewing.set(views)
    try:
        yield
    finally:
        _viewing.reset(token)


def loads(type_: str | None, data: bytes | None, *, what: str,
          views: Mapping[tuple[str, str], View] | None = None) -> Any:
    """Decode one stored ``(type, bytes)`` pair; an undecodable value is a StoreError naming ``what``.
    ``views`` (else those of ``viewing``): classes read from their fields instead of built."""
    views = views if views is not None else _viewing.get()
    if type_ is None:
        type_ = "null" if data is None else "msgpack"
    if "+" in type_:
        from symfonic_cli.codec.cipher import decrypt

        type_, data = decrypt(type_, data, what=what)
    if type_ == "pickle":
        raise StoreError(f"{what} is stored as pickle; symfonic never unpickles stored data")
    data = b"" if data is None else bytes(data)
    if type_ in ("null", "bytes", "bytearray"):
        return None if type_ == "null" else data if type_ == "bytes" else bytearray(data)
    if type_ not in ("msgpack", "json"):
        raise StoreError(f"{what} has an unknown serialization type {type_!r}")
    try:
        if type_ == "json":
            return _serializer().loads_typed((type_, data))
        import ormsgpack

        return ormsgpack.unpackb(data, ext_hook=hook(views) if views else strict_hook, option=ormsgpack.OPT_NON_STR_KEYS)
    except Exception as exc:  # ormsgpack / json errors: the bytes are not what they claim
        raise StoreError(f"{what} cannot be decoded ({type(exc).__name__}: {exc})") from None


class LeanObject(tuple):
    """A stored object seen without building it: ``(module, name, fields)``."""

    __slots__ = ()

    @property
    def fields(self) -> Any:
        return self[2]


def _lean_hook(code: int, data: bytes) -> Any:
    import ormsgpack

    try:
        tup = ormsgpack.unpackb(data, ext_hook=_lean_hook, option=ormsgpack.OPT_NON_STR_KEYS)
    except Exception:
        return None
    if isinstance(tup, list) and len(tup) >= 3:
        return LeanObject((tup[0], tup[1], tup[2]))
    return tup


def lean_loads(type_: str | None, data: bytes | None, *, what: str = "a stored value") -> Any:
    """Unpack msgpack without importing or constructing any stored class (ids, counts, ts only)."""
    if isinstance(type_, str) and "+" in type_:
        from symfonic_cli.codec.cipher import decrypt

        type_, data = decrypt(type_, data, what=what)
    if type_ != "msgpack" or not data:
        if type_ in (None, "null") or not data:
            return None
        return loads(type_, data, what=what)
    import ormsgpack

    return ormsgpack.unpackb(bytes(data), ext_hook=_lean_hook, option=ormsgpack.OPT_NON_STR_KEYS)


def lean_message_ids(messages: Any) -> list[str | None]:
    if not isinstance(messages, list):
        return []
    out: list[str | None] = []
    for m in messages:
        fields = m.fields if isinstance(m, LeanObject) else m
        mid = fields.get("id") if isinstance(fields, dict) else None
        out.append(mid if isinstance(mid, str) else None)  # a stored list or dict is no id
    return out
