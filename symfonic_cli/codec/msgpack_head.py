"""Reading the first bytes of msgpack blobs: a checkpoint's ts and message count, a channel's length,
without decoding the rest."""

from __future__ import annotations

import re

# typing.TYPE_CHECKING without importing typing (the status listing loads this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class NeedMore(Exception):
    """The bytes given end before the head could be read; call again with more."""


def checkpoint_blob_head(data: bytes) -> tuple[str | None, int | None]:
    """``(ts, message count)`` from the first bytes of a msgpack-serialized checkpoint.

    The count is 0 when ``channel_values`` has no ``messages``, None when it is not a plain list
    (e.g. delta-encoded). Raises NeedMore when ``data`` is too short, ValueError when not a map.
    """
    fast = _STANDARD_HEAD.match(data)
    if fast is not None:
        # LangGraph's own layout (v, ts, id, channel_values): jump straight to the channel map.
        r = _Reader(data)
        r.p = fast.end()
        return fast.group(1).decode("ascii"), _messages_count(r)
    r = _Reader(data)
    kind, n = r.head()
    if kind != "map":
        raise ValueError("not a checkpoint map")
    ts: str | None = None
    count: int | None = 0
    seen_ts = seen_values = False
    for _ in range(n):
        k = r.key()
        if k == "ts":
            kind, val = r.head()
            ts = r.text(val) if kind == "str" else None
            if kind != "str":
                r.skip_body(kind, val)
            seen_ts = True
        elif k == "channel_values":
            count = _messages_count(r)
            seen_values = True
        else:
            r.skip()
        if seen_ts and seen_values:
            break
    return ts, count


def encrypted_blob_head(type_: str, data: bytes | None) -> tuple[str | None, int | None]:
    """``checkpoint_blob_head`` of an encrypted checkpoint (the whole blob decrypted), or
    ``(None, None)`` when it cannot be decrypted here (the readers that need it then say why)."""
    from symfonic_cli.codec.cipher import decrypt
    from symfonic_cli.errors import SymfonicError

    try:
        inner, plain = decrypt(type_, data, what="checkpoint")
        return checkpoint_blob_head(plain) if inner == "msgpack" and plain else (None, None)
    except (SymfonicError, NeedMore, ValueError):
        return None, None


# The id: a UUID (36 characters) or, as old LangGraph wrote it, the ts itself (32).
_STANDARD_HEAD = re.compile(rb"[\x84-\x8f]\xa1v[\x00-\x7f]\xa2ts\xd9\x20([\x20-\x7e]{32})\xa2id\xd9(?:\x24[\x20-\x7e]{36}|\x20[\x20-\x7e]{32})\xaechannel_values")


def _messages_count(r: "_Reader") -> int | None:
    """At a ``channel_values`` map: the length of its ``messages`` list (0 when absent)."""
    kind, m = r.head()
    if kind != "map":
        return 0 if kind == "nil" else None
    for _ in range(m):
        if r.b.startswith(b"\xa8messages", r.p):
            r.p += 9
            kind, val = r.head()
            return val if kind == "array" else (0 if kind == "nil" else None)
        r.skip()
        r.skip()
    return 0


def channel_blob_count(data: bytes) -> int | None:
    """The length of a msgpack list from its first bytes (a ``messages`` channel blob); None if not a list."""
    kind, n = _Reader(data).head()
    return n if kind == "array" else None


_FIXED = {0xCA: 4, 0xCB: 8, 0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8, 0xD0: 1, 0xD1: 2, 0xD2: 4, 0xD3: 8,
          0xD4: 2, 0xD5: 3, 0xD6: 5, 0xD7: 9, 0xD8: 17}


# marker -> (kind, width of the length that follows)
_SIZED = {0xC4: ("bytes", 1), 0xC5: ("bytes", 2), 0xC6: ("bytes", 4), 0xC7: ("ext", 1), 0xC8: ("ext", 2),
          0xC9: ("ext", 4), 0xD9: ("str", 1), 0xDA: ("str", 2), 0xDB: ("str", 4), 0xDC: ("array", 2),
          0xDD: ("array", 4), 0xDE: ("map", 2), 0xDF: ("map", 4)}


class _Reader:
    """Just enough msgpack to find a few keys: heads are read, bodies skipped by length."""

    __slots__ = ("b", "p", "n")

    def __init__(self, data: bytes) -> None:
        self.b = data
        self.p = 0
        self.n = len(data)

    def head(self) -> tuple[str, int]:
        b, p = self.b, self.p
        if p >= self.n:
            raise NeedMore
        c = b[p]
        self.p = p + 1
        if c <= 0x7F or c >= 0xE0 or c in (0xC2, 0xC3):
            return "scalar", 0
        if c >= 0xA0 and c <= 0xBF:
            return "str", c & 0x1F
        if c <= 0x8F:
            return "map", c & 0x0F
        if c <= 0x9F:
            return "array", c & 0x0F
        if c == 0xC0:
            return "nil", 0
        if c in _FIXED:
            return "bytes", _FIXED[c]
        sized = _SIZED.get(c)
        if sized is None:
            raise ValueError(f"not msgpack (byte 0x{c:02x})")
        kind, width = sized
        end = p + 1 + width
        if end > self.n:
            raise NeedMore
        size = int.from_bytes(b[p + 1:end], "big")
        self.p = end
        if kind == "ext":
            return "bytes", size + 1
        return kind, size

    def take(self, n: int) -> bytes:
        end = self.p + n
        if end > self.n:
            raise NeedMore
        out = self.b[self.p:end]
        self.p = end
        return out

    def text(self, n: int) -> str:
        return self.take(n).decode("utf-8", "replace")

    def key(self) -> Any:
        kind, n = self.head()
        if kind == "str":
            return self.text(n)
        self.skip_body(kind, n)
        return None

    def skip_body(self, kind: str, n: int) -> None:
        if kind == "str" or kind == "bytes":
            if self.p + n > self.n:
                raise NeedMore
            self.p += n
        elif kind == "array":
            self.p = item_ends(self.b, self.p, n)[-1] if n else self.p
        elif kind == "map":
            self.p = item_ends(self.b, self.p, 2 * n)[-1] if n else self.p

    def skip(self) -> None:
        self.p = item_ends(self.b, self.p, 1)[0]


def item_ends(b: Any, p: int, count: int) -> list[int]:
    """Where each of ``count`` msgpack items starting at ``p`` ends: one loop counting the items
    still to skip (no call per nested item: a prune's quick pass skips every latest message).
    NeedMore when the bytes end first, ValueError at a byte that starts no msgpack item."""
    end = len(b)
    ends = []
    for _ in range(count):
        todo = 1
        while todo:
            if p >= end:
                raise NeedMore
            c = b[p]
            p += 1
            todo -= 1
            if c <= 0x7F or c >= 0xE0 or c == 0xC0 or c == 0xC2 or c == 0xC3:
                continue
            if 0xA0 <= c <= 0xBF:
                p += c & 0x1F
            elif c <= 0x8F:
                todo += 2 * (c & 0x0F)
            elif c <= 0x9F:
                todo += c & 0x0F
            elif c in _FIXED:
                p += _FIXED[c]
            else:
                sized = _SIZED.get(c)
                if sized is None:
                    raise ValueError(f"not msgpack (byte 0x{c:02x})")
                kind, width = sized
                q = p + width
                if q > end:
                    raise NeedMore
                size = int.from_bytes(b[p:q], "big")
                p = q
                if kind == "array":
                    todo += size
                elif kind == "map":
                    todo += 2 * size
                else:
                    p += size + 1 if kind == "ext" else size
            if p > end:
                raise NeedMore
        ends.append(p)
    return ends


# The checkpoint's last fields, read for `threads list --status` (see model/run_status.py).
_TAIL_KEYS = ("channel_versions", "versions_seen", "updated_channels")


VERSIONS_KEY = b"\xb0channel_versions"


def parse_blob_end(
    head: bytes | None, end: bytes | None, length: int | None, more: Callable[[int], bytes | None] | None = None
) -> dict[str, Any] | None:
    """The checkpoint's last fields from ``end``, the blob's last bytes (``more(n)``: its last
    ``n`` bytes, to look further back), or None when they cannot be proven."""
    if not isinstance(head, bytes) or not head or not isinstance(end, bytes) or not isinstance(length, int):
        return None
    stop = len(end)  # key occurrences starting before this offset are untried
    while True:
        pos = end.rfind(VERSIONS_KEY, 0, stop)
        while pos >= 0:
            got = parse_tail(head, end[pos:], length)
            if got is not None:
                return got
            pos = end.rfind(VERSIONS_KEY, 0, pos + len(VERSIONS_KEY) - 1)
        if more is None or len(end) >= length:
            return None
        wider = more(min(length, max(len(end) * 4, 4096)))
        if not isinstance(wider, bytes) or len(wider) <= len(end) or not wider.endswith(end):
            return None
        stop = len(wider) - len(end) + len(VERSIONS_KEY) - 1
        end = wider


def parse_tail(head: bytes | None, tail: bytes | None, length: int | None) -> dict[str, Any] | None:
    """The checkpoint's last fields from its msgpack tail, or None when they cannot be proven."""
    import ormsgpack

    if not head or not tail or length is None or len(tail) >= length:
        return None
    if not tail.startswith(b"\xb0channel_versions"):
        return None
    marker = head[0]
    if not 0x84 <= marker <= 0x8F:
        return None
    remaining = (marker & 0x0F) - 4  # v, ts, id and channel_values come first
    if remaining < 2:
        return None
    tail = bytes(tail)
    framed = bytes((0x80 | remaining,)) + tail
    # Fast proof: the fields re-encode to exactly these bytes, so they end where the blob ends
    # (ormsgpack writes the shortest forms, as it did when LangGraph stored them).
    try:
        out = ormsgpack.unpackb(framed)
        exact = isinstance(out, dict) and ormsgpack.packb(out) == framed
    except Exception:
        out, exact = None, False
    if not exact:
        out = _parse_tail_slow(tail, remaining)
        if out is None:
            return None
    if not isinstance(out.get("channel_versions"), dict) or not isinstance(out.get("versions_seen"), dict):
        return None
    return out


def _parse_tail_slow(tail: bytes, remaining: int) -> dict[str, Any] | None:
    """Field by field, for bytes in forms ormsgpack would not have chosen."""
    import ormsgpack

    r = _Reader(tail)
    try:
        spans = []
        for _ in range(remaining):
            k = r.key()
            start = r.p
            r.skip()
            spans.append((k, start, r.p))
    except (NeedMore, ValueError, IndexError, TypeError):
        return None
    if r.p != len(tail):
        return None  # not the blob's real end: a look-alike inside a value
    out: dict[str, Any] = {}
    for k, start, end in spans:
        if k in _TAIL_KEYS:
            try:
                out[k] = ormsgpack.unpackb(tail[start:end])
            except Exception:
                return None
    return out
