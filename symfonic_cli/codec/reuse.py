"""Decoding a thread once: the per-thread decoder cache and serializer reuse (migrate's copy loops)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from symfonic_cli.errors import StoreError


class ThreadDecoder:
    """The strict decoder (``symfonic_cli.codec.strict``) for the values of one thread, each distinct
    stored object decoded once.

    A checkpoint blob holds the whole message list, so a thread of N checkpoints repeats each
    message up to N times; equal stored bytes decode to equal values, so the object is built
    once and shared (nothing here mutates decoded values). Classes the decoder refused are still
    reported for every value that holds them.
    """

    def __init__(self) -> None:
        shared = _shared_cache.get()
        self._cache: dict[tuple[int, bytes], tuple[Any, frozenset[str]]] = shared if shared is not None else {}

    def loads(self, type_: str | None, data: bytes | None, *, what: str) -> Any:
        from symfonic_cli.codec import strict as decoding

        if isinstance(type_, str) and "+" in type_:
            from symfonic_cli.codec.cipher import decrypt

            type_, data = decrypt(type_, data, what=what)
        if type_ != "msgpack" or not data:
            return decoding.loads(type_, data, what=what)
        import ormsgpack

        Blocked = decoding.Blocked
        strict_hook = decoding.strict_hook  # LangGraph's strict hook, ours (codec/exthook.py)
        cache = self._cache

        def hook(code: int, payload: bytes) -> Any:
            hit = cache.get((code, payload))
            if hit is None:
                with Blocked() as blocked:  # this value's refusals, kept with it in the cache
                    value = strict_hook(code, payload)
                hit = cache[(code, payload)] = (value, frozenset(blocked))
            if hit[1]:
                outer = Blocked.active()  # reported again on every use, as a fresh decode would
                if outer is not None:
                    outer.update(hit[1])
            return hit[0]

        try:
            return ormsgpack.unpackb(bytes(data), ext_hook=hook, option=ormsgpack.OPT_NON_STR_KEYS)
        except Exception as exc:  # the bytes are not what they claim
            raise StoreError(f"{what} cannot be decoded ({type(exc).__name__}: {exc})") from None


_shared_cache: ContextVar[dict | None] = ContextVar("symfonic_migrate_decoded", default=None)


@contextmanager
def shared_decoding() -> Iterator[None]:
    """While one thread is migrated, source and target decoders share their objects: bytes the
    target stores exactly as the source did decode to the very same object, so comparing them
    costs an identity check."""
    token = _shared_cache.set({})
    try:
        yield
    finally:
        _shared_cache.reset(token)


class ReusingSerializer:
    """The target saver's own serializer, encoding each decoded object of a thread once.

    Wraps a plain ``JsonPlusSerializer`` (what every saver uses by default): the same msgpack
    ``default`` hook and options, so the bytes are exactly the ones the saver would write; an
    object shared by many checkpoints (a message, see ThreadDecoder) is encoded on first use and
    its encoding reused. Use one per thread copy; decoded values are never mutated meanwhile.
    Any other serializer is used as it is (``reusing`` returns it unchanged).
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self._ext: dict[int, tuple[Any, Any]] = {}

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        import ormsgpack
        from langgraph.checkpoint.serde import jsonplus

        if obj is None or isinstance(obj, (bytes, bytearray)):
            return self.inner.dumps_typed(obj)
        cache = self._ext

        def default(o: Any) -> Any:
            hit = cache.get(id(o))
            if hit is None or hit[0] is not o:
                hit = cache[id(o)] = (o, jsonplus._msgpack_default(o))  # keeps o alive: ids stay unique
            return hit[1]

        try:
            return "msgpack", ormsgpack.packb(obj, default=default, option=jsonplus._option)
        except ormsgpack.MsgpackEncodeError:
            return self.inner.dumps_typed(obj)  # the saver's own fallback path and error

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        return self.inner.loads_typed(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def reusing(serde: Any) -> Any:
    """``serde`` wrapped in a ReusingSerializer when it is a plain JsonPlusSerializer."""
    from langgraph.checkpoint.serde import jsonplus

    if type(serde) is jsonplus.JsonPlusSerializer and hasattr(jsonplus, "_msgpack_default") and hasattr(jsonplus, "_option"):
        return ReusingSerializer(serde)
    return serde


def target_serializer(default: Any) -> Any:
    """The serializer migrate writes a target with: EncryptedSerializer with the source's key when
    the source is encrypted (unless --to-plaintext), else ``default`` (a plain one, reused)."""
    from symfonic_cli.codec import cipher

    if cipher.target_encrypts():
        return cipher.serializer()
    return reusing(default)
