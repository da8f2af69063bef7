"""A serialized checkpoint's version and the names of the channels it holds a value for, without
building any stored object (``thread prune`` reads them for its keep rules)."""

from __future__ import annotations


def _skip_ext(code: int, data: bytes) -> None:
    return None


def checkpoint_outline(type_: str | None, data: bytes | None) -> tuple[int | None, frozenset[str]] | None:
    """``(v, channel names in channel_values)`` of a checkpoint as SqliteSaver/MongoDBSaver store it,
    decrypted with this run's key where it is encrypted; None when it cannot be read (encrypted
    without the right key, an unknown type)."""
    if not data:
        return None
    from symfonic_cli.codec.cipher import decrypt, is_encrypted

    if is_encrypted(type_):
        from symfonic_cli.errors import SymfonicError

        try:
            type_, data = decrypt(type_, bytes(data), what="checkpoint")
        except SymfonicError:
            return None
        if not data:
            return None
    if type_ == "msgpack":
        import ormsgpack

        try:
            value = ormsgpack.unpackb(bytes(data), ext_hook=_skip_ext, option=ormsgpack.OPT_NON_STR_KEYS)
        except Exception:
            return None
    elif type_ == "json":
        import json

        try:
            value = json.loads(bytes(data))
        except ValueError:
            return None
    else:
        return None
    if not isinstance(value, dict):
        return None
    v = value.get("v")
    values = value.get("channel_values")
    names = frozenset(k for k in values if isinstance(k, str)) if isinstance(values, dict) else frozenset()
    return (v if isinstance(v, int) and not isinstance(v, bool) else None), names
