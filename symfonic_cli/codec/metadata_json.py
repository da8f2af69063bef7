"""Checkpoint metadata decoded exactly as the application's saver decodes it, within stated limits.

``SqliteSaver`` reads metadata with ``json.loads(bytes)``: duplicate keys keep the LAST value,
``NaN``/``Infinity``/``-Infinity`` are floats, the bytes' encoding is detected (UTF-8/16/32) and
lone surrogates pass. Here the same decoder runs, and what it cannot read is a finding on that
row (``MetadataError``), never an unexpected error. Limits (README "Limits"):

- integers of up to MAX_INT_DIGITS digits are values (Python's own default stops at 4,300);
- values nested deeper than MAX_DEPTH levels (as deep as SQLite reads JSON) are not read;
- duplicate keys where the envelope is read (the envelope key at the top level, a field at the
  envelope's top level) are reported, the last one read, as Python does.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import Any

from symfonic_cli.limits import MAX_INT_DIGITS  # read here by the codecs and render
MAX_DEPTH = 2000  # SQLite 3.40 reads 2,000 levels (newer releases 1,000): all of them read alike
DUPLICATE_KEYS = "duplicate keys"


class MetadataError(ValueError):
    """Metadata the saver's decoder cannot read; ``reason`` is one line for the report."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Object(dict):
    """A decoded JSON object that remembers which keys it held more than once."""

    duplicates: tuple[str, ...]

    __slots__ = ("duplicates",)


def _pairs(pairs: list[tuple[str, Any]]) -> dict:
    obj = _Object(pairs)  # the last value of a repeated key wins, as in json.loads
    obj.duplicates = () if len(obj) == len(pairs) else _repeated(pairs)
    return obj


def _repeated(pairs: list[tuple[str, Any]]) -> tuple[str, ...]:
    seen: set[str] = set()
    out: list[str] = []
    for k, _ in pairs:
        if k in seen and k not in out:
            out.append(k)
        seen.add(k)
    return tuple(out)


class int_digits:
    """Integers up to MAX_INT_DIGITS digits convert to and from text while the block runs."""

    def __enter__(self) -> None:
        self.saved = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else None
        if self.saved is not None and 0 < self.saved < MAX_INT_DIGITS:
            sys.set_int_max_str_digits(MAX_INT_DIGITS)

    def __exit__(self, *exc: Any) -> None:
        if self.saved is not None:
            sys.set_int_max_str_digits(self.saved)


class deep:
    """Room for values nested MAX_DEPTH levels (decoding and encoding recurse per level)."""

    def __enter__(self) -> None:
        self.saved = sys.getrecursionlimit()
        sys.setrecursionlimit(max(self.saved, 4 * MAX_DEPTH + 1000))

    def __exit__(self, *exc: Any) -> None:
        sys.setrecursionlimit(self.saved)


def loads(raw: Any, *, track_duplicates: bool = False) -> Any:
    """``json.loads`` as the saver calls it (bytes or text), limits applied; MetadataError else."""
    if isinstance(raw, memoryview):
        raw = bytes(raw)
    hook = _pairs if track_duplicates else None
    try:
        with int_digits(), deep():
            value = json.loads(raw, object_pairs_hook=hook)
    except RecursionError:
        raise MetadataError(f"metadata nested deeper than {MAX_DEPTH:,} levels") from None
    except UnicodeDecodeError as exc:
        raise MetadataError(f"metadata is not text in a JSON encoding ({exc.reason} at byte {exc.start})") from None
    except ValueError as exc:
        text = str(exc)
        if "integer string conversion" in text or "digits" in text:
            raise MetadataError(f"metadata holds an integer of more than {MAX_INT_DIGITS:,} digits") from None
        raise MetadataError(f"metadata is not JSON ({text})") from None
    except TypeError as exc:
        raise MetadataError(f"metadata is not JSON text ({exc})") from None
    if depth_exceeds(value, MAX_DEPTH):
        raise MetadataError(f"metadata nested deeper than {MAX_DEPTH:,} levels")
    return value


def depth_exceeds(value: Any, limit: int) -> bool:
    """True when ``value`` nests containers more than ``limit`` levels deep (iterative)."""
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        children: Iterable[Any]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if level > limit:
            return True
        stack.extend((c, level + 1) for c in children if isinstance(c, (dict, list, tuple)))
    return False


def envelope_duplicates(metadata: Any, key: str) -> list[str]:
    """Duplicate keys that decide what is read as the envelope: ``key`` itself at the top level,
    and the envelope's own top-level fields. The anomaly text names them."""
    out = []
    if isinstance(metadata, _Object) and key in metadata.duplicates:
        out.append(key)
    env = metadata.get(key) if isinstance(metadata, dict) else None
    if isinstance(env, _Object):
        out.extend(f"{key}.{k}" for k in env.duplicates)
    return out


def duplicates_anomaly(names: list[str]) -> str:
    """One anomaly per checkpoint: the store-wide report counts checkpoints by this text."""
    return f"{DUPLICATE_KEYS} in metadata: {', '.join(_quoted(n) for n in names)} (the last one is read, as the saver's json does)"


def _quoted(name: str) -> str:
    text = repr(name)
    return text if len(text) <= 60 else text[:57] + "..."
