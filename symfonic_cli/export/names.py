"""Safe, unique file names for thread keys (keys are untrusted: any string a store holds)."""

from __future__ import annotations

import hashlib

# Characters kept as they are in a name; every other one becomes "_". No separator, no dot run,
# no control, nothing a file system on any platform treats specially.
_KEEP = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
_MAX_STEM = 60  # the readable part; the digest keeps the name unique


def safe_stem(key: str) -> str:
    """A file name stem for ``key``: a readable part (the key's safe characters, ':' and every
    other character as '_', at most 60) and the first 16 hex digits of the key's SHA-256.

    The digest is lowercase hex, so two keys that differ only in case (or in characters a file
    system folds or normalises) still get names that differ after folding. The readable part
    never starts with '.' or '-' and is never empty."""
    readable = "".join(c if c in _KEEP else "_" for c in key[:_MAX_STEM]).lstrip("-") or "thread"
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{readable}-{digest}"


class UniqueNames:
    """Hands out one stem per key, unique even under case folding (a digest collision of 64 bits
    between two keys of one export is not expected, but is still handled: a counter is added)."""

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def stem(self, key: str) -> str:
        base = safe_stem(key)
        stem, n = base, 1
        while stem.casefold() in self._taken:
            n += 1
            stem = f"{base}-{n}"
        self._taken.add(stem.casefold())
        return stem
