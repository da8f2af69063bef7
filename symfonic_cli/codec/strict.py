"""Strict decoding of stored values: LangGraph's own serializer, allow-listed types only.

Nothing stored is ever executed: no pickle, and a msgpack value that names a class outside
LangGraph's safe list comes back as its raw serialized fields. The names of such classes are
collected so the command can warn about them.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from typing import Any

from symfonic_cli.errors import StoreError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn
    from langgraph.checkpoint.serde.event_hooks import SerdeEvent

_serde = None


def _serializer():
    global _serde
    if _serde is None:
        from langgraph.checkpoint.serde.event_hooks import register_serde_event_listener
        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

        # LangGraph logs blocked types itself; we report them our own way.
        for name in ("langgraph.checkpoint.serde.jsonplus", "langgraph.checkpoint.serde"):
            logging.getLogger(name).addHandler(logging.NullHandler())
            logging.getLogger(name).propagate = False
        register_serde_event_listener(_on_event)
        _serde = JsonPlusSerializer(pickle_fallback=False, allowed_msgpack_modules=None)
    return _serde


def _on_event(event: SerdeEvent) -> None:
    collector = _collecting.get()
    if collector is not None and event.get("kind", "").endswith("blocked"):
        name = f"{event.get('module')}.{event.get('name')}"
        if event.get("method"):
            name += f".{event['method']}"
        collector.add(name)


class Blocked(set):
    """The class names the strict decoder refused while this collector was active.

    The caller creates one and decodes inside ``with`` it; it is a set of names afterwards.
    LangGraph reports refusals to one process-wide listener (``_on_event``), so the listener
    finds the active collector through a context variable: collectors nest (the innermost one
    collects) and threads or tasks do not see each other's.
    """

    __slots__ = ("_token",)

    def __enter__(self) -> Blocked:
        self._token = _collecting.set(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _collecting.reset(self._token)

    @staticmethod
    def active() -> Blocked | None:
        """The collector the current decode reports to, if any (for decoders that cache values)."""
        return _collecting.get()


_collecting: ContextVar[Blocked | None] = ContextVar("symfonic_blocked", default=None)


def collect_blocked() -> Blocked:
    """A new collector: ``with collect_blocked() as blocked: loads(...)``."""
    return Blocked()


def loads(type_: str | None, data: bytes | None, *, what: str) -> Any:
    """Decode one stored ``(type, bytes)`` pair; an undecodable value is a StoreError naming ``what``."""
    if type_ is None:
        type_ = "null" if data is None else "msgpack"
    if "+" in type_:
        from symfonic_cli.codec.cipher import decrypt

        type_, data = decrypt(type_, data, what=what)
    if type_ == "pickle":
        raise StoreError(f"{what} is stored as pickle; symfonic never unpickles stored data")
    data = b"" if data is None else bytes(data)
    if type_ == "msgpack":
        value = _without_objects(data)
        if value is not _OBJECTS:
            return value
    elif type_ in ("null", "bytes"):
        return None if type_ == "null" else data
    try:
        return _serializer().loads_typed((type_, data))
    except NotImplementedError:
        raise StoreError(f"{what} has an unknown serialization type {type_!r}") from None
    except Exception as exc:  # ormsgpack / json errors: the bytes are not what they claim
        raise StoreError(f"{what} cannot be decoded ({type(exc).__name__}: {exc})") from None


_OBJECTS = object()


def _without_objects(data: bytes) -> Any:
    """A msgpack value that holds no object (strings, numbers, lists, maps: most metadata leaves),
    decoded as LangGraph's serializer decodes it, without importing it (0.2 s a process); else
    ``_OBJECTS``, and the serializer decodes it (objects, blocked names, errors as always)."""
    import ormsgpack

    try:
        return ormsgpack.unpackb(data, ext_hook=_has_object, option=ormsgpack.OPT_NON_STR_KEYS)
    except ValueError:
        return _OBJECTS


def _has_object(code: int, ext: bytes) -> NoReturn:
    raise LookupError  # ormsgpack reports it as a ValueError


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
