"""LangGraph's strict msgpack ext hook, ours: what ``JsonPlusSerializer(allowed_msgpack_modules=None)``
decodes, value for value (the same ext codes, safe list, constructors and fallbacks), without
importing LangGraph's serializer module: that import takes ``langchain_core.load``, its tracers and
``langsmith`` (1 to 3 s a process). A stored class's module is imported only when a value of it
is met (``langchain_core.messages.ai`` for an AIMessage), as LangGraph's hook does.

The safe list is LangGraph's own (``langgraph.checkpoint.serde._msgpack``, which imports nothing
else); a class off it comes back as its raw serialized fields and is named to the active
``Blocked`` collector (LangGraph reports it to its event listeners; a strict decode here never
warns or logs). ``tests/stores/test_exthook.py`` decodes every ext type the savers write both ways.
"""

from __future__ import annotations

from contextvars import ContextVar
from importlib import import_module

# typing.TYPE_CHECKING without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    # A view of one class's stored fields and ext bytes (see ``hook``): the value, or NotImplemented to build it.
    View = Callable[[Any, bytes], Any]

# langgraph.checkpoint.serde.jsonplus's ext codes.
EXT_CONSTRUCTOR_SINGLE_ARG = 0
EXT_CONSTRUCTOR_POS_ARGS = 1
EXT_CONSTRUCTOR_KW_ARGS = 2
EXT_METHOD_SINGLE_ARG = 3
EXT_PYDANTIC_V1 = 4
EXT_PYDANTIC_V2 = 5
EXT_NUMPY_ARRAY = 6
EXT_DELTA_SNAPSHOT = 7


class Blocked(set):
    """The class names the strict decoder refused while this collector was active.

    The caller creates one and decodes inside ``with`` it; it is a set of names afterwards. The
    hook finds the active collector through a context variable: collectors nest (the innermost
    one collects) and threads or tasks do not see each other's.
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


def _refused(name: str) -> None:
    collector = _collecting.get()
    if collector is not None:
        collector.add(name)


_safe: tuple[frozenset, frozenset] | None = None


def _safe_lists() -> tuple[frozenset, frozenset]:
    global _safe
    if _safe is None:
        from langgraph.checkpoint.serde._msgpack import SAFE_MSGPACK_METHODS, SAFE_MSGPACK_TYPES

        _safe = (SAFE_MSGPACK_TYPES, SAFE_MSGPACK_METHODS)
    return _safe


def _allowed(module: Any, name: Any) -> bool:
    if (module, name) in _safe_lists()[0]:  # an unhashable name raises: the fallback, as upstream
        return True
    _refused(f"{module}.{name}")
    return False


def _method_allowed(module: Any, name: Any, method: Any) -> bool:
    if (module, name, method) in _safe_lists()[1]:
        return True
    _refused(f"{module}.{name}.{method}")
    return False


def _fallback(tup: Any) -> Any:
    """jsonplus._reconstruction_fallback: the serialized payload of an object not rebuilt."""
    try:
        _ = (tup[0], tup[1])
        return tup[2]
    except Exception:
        return None


def _send(args: Any) -> Any:
    from langgraph.types import Send

    if len(args) == 2:
        return Send(*args)
    return Send(args[0], args[1], timeout=args[2])


_UNSET = object()


def hook(views: Mapping[tuple[str, str], View] | None = None) -> Callable[[int, bytes], Any]:
    """The strict ext hook. ``views`` maps a safe class built from keyword fields (a dataclass, a
    pydantic model) to a function of those fields and the ext's bytes that stands in for building
    it (a command that reads two attributes of an Interrupt need not import ``langgraph.types``);
    it returns NotImplemented to build it after all."""
    import ormsgpack

    option = ormsgpack.OPT_NON_STR_KEYS

    def ext_hook(code: int, data: bytes) -> Any:
        if code == EXT_DELTA_SNAPSHOT:
            from langgraph.checkpoint.serde.types import _DeltaSnapshot

            return _DeltaSnapshot(ormsgpack.unpackb(data, ext_hook=ext_hook, option=option))
        if code in (EXT_CONSTRUCTOR_SINGLE_ARG, EXT_CONSTRUCTOR_POS_ARGS, EXT_CONSTRUCTOR_KW_ARGS, EXT_METHOD_SINGLE_ARG):
            tup = None
            try:
                tup = ormsgpack.unpackb(data, ext_hook=ext_hook, option=option)
                if code == EXT_METHOD_SINGLE_ARG:
                    if not _method_allowed(tup[0], tup[1], tup[3]):
                        return tup[2]
                    return getattr(getattr(import_module(tup[0]), tup[1]), tup[3])(tup[2])
                if not _allowed(tup[0], tup[1]):
                    return tup[2]
                if code == EXT_CONSTRUCTOR_SINGLE_ARG:
                    return getattr(import_module(tup[0]), tup[1])(tup[2])
                if code == EXT_CONSTRUCTOR_POS_ARGS:
                    if tup[0] == "langgraph.types" and tup[1] == "Send":
                        return _send(tup[2])
                    return getattr(import_module(tup[0]), tup[1])(*tup[2])
                view = views.get((tup[0], tup[1])) if views else None
                if view is not None and (value := view(tup[2], data)) is not NotImplemented:
                    return value
                return getattr(import_module(tup[0]), tup[1])(**tup[2])
            except Exception:
                return _fallback(tup)
        if code in (EXT_PYDANTIC_V1, EXT_PYDANTIC_V2):
            tup = _UNSET
            try:
                tup = ormsgpack.unpackb(data, ext_hook=ext_hook, option=option)
                if not _allowed(tup[0], tup[1]):
                    return tup[2]
                view = views.get((tup[0], tup[1])) if views and code == EXT_PYDANTIC_V2 else None
                if view is not None and (value := view(tup[2], data)) is not NotImplemented:
                    return value
                cls = getattr(import_module(tup[0]), tup[1])
                try:
                    return cls(**tup[2])
                except Exception:
                    return cls.construct(**tup[2]) if code == EXT_PYDANTIC_V1 else cls.model_construct(**tup[2])
            except Exception:
                # Upstream returns the fields, or None when the bytes did not unpack.
                return None if tup is _UNSET else tup[2]  # type: ignore[index]
        if code == EXT_NUMPY_ARRAY:
            try:
                import numpy as _np

                dtype_str, shape, order, buf = ormsgpack.unpackb(data, ext_hook=ext_hook, option=option)
                arr = _np.frombuffer(buf, dtype=_np.dtype(dtype_str))
                return arr.reshape(shape, order=order)
            except Exception:
                return None
        return None

    return ext_hook


strict_hook = hook()
