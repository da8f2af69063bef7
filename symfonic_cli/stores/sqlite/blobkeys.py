"""SQLite stores holding keys as BLOBs of their UTF-8 bytes (another writer's form): a key's text
and BLOB rows are one thread, ordered and merged here."""

from __future__ import annotations

from symfonic_cli.clock import NEVER, is_ordered_id, ordered_id_time
from symfonic_cli.model.listing import ThreadSummary

# typing without importing it (quick commands load this module through stores/sqlite/read.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any


def _key_text(value: Any) -> str:
    # A thread_id stored as a BLOB of the key's UTF-8 bytes is that key (see _key_match).
    if type(value) is str:
        return value
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value.decode("utf-8", "backslashreplace")
    return str(value)


def _key_bytes(key: Any) -> bytes:
    return _utf8(key) if type(key) is str else bytes(key) if isinstance(key, bytes) else str(key).encode()


def _utf8(key: str) -> bytes:
    return key.encode("utf-8", "surrogateescape")


def _merged_by_key(rows: Iterable[tuple[Any, ...]], limit: int | None) -> list[ThreadSummary]:
    """Listing rows of a store holding BLOB keys: a key's text and BLOB groups as one thread,
    odd ones first, then newest activity first, then key (the order of the SQL listing).

    Activity is an instant (clock.py), never a string: a group whose ids are all ordered is dated
    by them; a thread with any other id is ``odd``, dated checkpoint by checkpoint over both
    forms of its key (stores/activity.py, ``_every_form_heads``). ``first_checkpoint_id`` and
    ``last_checkpoint_id`` stay the least and greatest ids as stored, as SQL's min and max give them."""
    merged: dict[str, list] = {}
    for raw, n, first, last, odd in rows:
        key = _key_text(raw)
        odd = bool(odd) or not (is_ordered_id(first) and is_ordered_id(last))
        m = merged.get(key)
        if m is None:
            merged[key] = [n, first, last, odd]
            continue
        m[0] += n
        m[3] = m[3] or odd
        if m[3]:  # the ids' own min and max, for the record; the times come from the checkpoints
            m[1] = min(m[1], first, key=_id_order)
            m[2] = max(m[2], last, key=_id_order)
        else:
            m[1] = min(m[1], first, key=ordered_id_time)
            m[2] = max(m[2], last, key=ordered_id_time)
    out = []
    for k, (n, first, last, odd) in merged.items():
        at = (None, None) if odd else (ordered_id_time(first), ordered_id_time(last))
        out.append(ThreadSummary(k, n, first, last, odd, *at))
    out.sort(key=lambda t: t.key)
    out.sort(key=lambda t: t.last_at or NEVER, reverse=True)
    out.sort(key=lambda t: t.odd, reverse=True)
    return out if limit is None else out[:limit]


def _id_order(cid: Any) -> str:
    return cid if type(cid) is str else ""  # an id of another type (a crafted file) never raises
