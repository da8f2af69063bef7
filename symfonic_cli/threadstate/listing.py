"""``threads list --status``: each thread's status from its latest root checkpoint's version maps
and the per-task flags of its pending writes, both read in the database.

Only the small version maps are decoded: PostgreSQL reads them as JSONB; SQLite hands over the
end of the msgpack blob from the ``channel_versions`` key on (the blob's last fields are
``channel_versions``, ``versions_seen`` and ``updated_channels``), which is parsed and checked to
end exactly where the blob ends; MongoDB the same from the document's blob. The channels that
hold a trigger value are the checkpoint's ``updated_channels``, which LangGraph 1.x records: a
checkpoint without them, with pending Sends, or whose tail does not parse is read whole instead
(lean: no stored class is built).
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Mapping
from typing import Any

from symfonic_cli.threadstate import nexttasks as nt

# One per listed thread: ThreadSummary's fields, the status (None: no root checkpoint), size or None.
ThreadRunState = namedtuple("ThreadRunState", "key checkpoints first_checkpoint_id last_checkpoint_id status size_bytes")

_TAIL_KEYS = ("channel_versions", "versions_seen", "updated_channels")


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

    from symfonic_cli.codec.msgpack_head import NeedMore, _Reader

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


def status_from_tail(
    checkpoint_id: str,
    step: Any,
    type_: str | None,
    head: bytes | None,
    tail: bytes | None,
    length: int | None,
    task_flags: Mapping[str, tuple[str | None, bool, bool, bool]],
    *,
    whole: Callable[[], tuple[str | None, bytes | None, Any] | None],
) -> str:
    parsed = parse_tail(head, tail, length) if type_ == "msgpack" else None
    if parsed is None:
        return status_from_blob(checkpoint_id, whole(), task_flags)
    v = head[3] if head and len(head) >= 4 and head[1:3] == b"\xa1v" and head[3] < 0x80 else 1
    return status_from_maps(
        checkpoint_id, step, v, parsed["channel_versions"], parsed["versions_seen"], parsed.get("updated_channels"),
        task_flags, whole=lambda: status_from_blob(checkpoint_id, whole(), task_flags),
    )


def status_from_maps(
    checkpoint_id: str,
    step: Any,
    v: Any,
    channel_versions: Any,
    versions_seen: Any,
    updated: Any,
    task_flags: Mapping[str, tuple[str | None, bool, bool, bool]],
    *,
    whole: Callable[[], str],
) -> str:
    """The status from the version maps alone; ``whole()`` when they cannot decide (no
    ``updated_channels``, pending Sends, odd shapes)."""
    if not isinstance(updated, list) or nt.TASKS in updated or not isinstance(channel_versions, dict) or not isinstance(versions_seen, dict):
        return whole()
    seen = {k: val for k, val in versions_seen.items() if isinstance(val, dict)}
    due = nt.due_tasks(
        checkpoint_id=checkpoint_id,
        checkpoint_ns="",
        step=(step if isinstance(step, int) and not isinstance(step, bool) else -1) + 1,
        v=v if isinstance(v, int) and not isinstance(v, bool) else 1,
        channel_versions=channel_versions,
        versions_seen=seen,
        available={c for c in updated if isinstance(c, str)},
        sends=[],
    )
    return nt.quick_status(due, task_flags)


def status_from_blob(checkpoint_id: str, row: tuple[str | None, bytes | None, Any] | None, task_flags) -> str:
    """The status from the whole checkpoint (type, blob, metadata as JSON text or a mapping)."""
    import json

    from symfonic_cli.threadstate.rows import lean_from_blob

    if row is None:
        return nt.quick_status([], task_flags)
    type_, blob, meta = row
    if isinstance(meta, (bytes, str)):
        try:
            meta = json.loads(meta)
        except ValueError:
            meta = {}
    cp = lean_from_blob("", checkpoint_id, type_, blob, meta)
    return status_of(cp, task_flags)


def status_of(cp, task_flags) -> str:
    due = nt.due_tasks(
        checkpoint_id=cp.checkpoint_id,
        checkpoint_ns=cp.checkpoint_ns,
        step=(cp.step if cp.step is not None else -1) + 1,
        v=cp.v,
        channel_versions=cp.channel_versions,
        versions_seen=cp.versions_seen,
        available=cp.available,
        sends=cp.sends,
    )
    return nt.quick_status(due, task_flags)


SORTS = ("last-activity", "first-activity", "checkpoints", "size")


def root_status(rows, task_flags=None) -> str | None:
    """The status of a thread from its ``read_run_rows``; None without a root checkpoint."""
    root = next((c for c in rows.latest if c.checkpoint_ns == ""), None)
    if root is None:
        return None
    if task_flags is None:
        flags: dict[str, list] = {}
        for w in rows.writes:
            if w.checkpoint_ns != "" or w.checkpoint_id != root.checkpoint_id:
                continue
            f = flags.setdefault(w.task_id, [w.task_path, False, False, False])
            if w.channel == nt.INTERRUPT:
                f[1] = True
            elif w.channel == nt.ERROR:
                f[2] = True
            elif w.channel not in nt.CONTROL_WRITES:
                f[3] = True
        task_flags = {k: tuple(val) for k, val in flags.items()}
    return status_of(root, task_flags)


def _generic_run_states(store, prefix: str | None, with_size: bool, with_status: bool = True):
    """Thread by thread through ``read_run_rows``: stores without an aggregate ``iter_run_states``."""
    for t in store.list_threads():
        if prefix and not t.key.startswith(prefix):
            continue
        if not (with_size or with_status):
            yield ThreadRunState(t.key, t.checkpoints, t.first_checkpoint_id, t.last_checkpoint_id, None, None)
            continue
        rows = store.read_run_rows(t.key)
        status = None
        size = None
        if rows is not None:
            size = rows.size_bytes
            status = root_status(rows) if with_status else None
        yield ThreadRunState(t.key, t.checkpoints, t.first_checkpoint_id, t.last_checkpoint_id, status, size if with_size else None)


def run_state_rows(
    store,
    *,
    prefix: str | None,
    session: str | None,
    statuses: set[str] | None,
    sort: str,
    reverse: bool,
    with_size: bool,
    limit: int | None,
    window=None,
) -> list[ThreadRunState]:
    """The listed threads, filtered and sorted; only the matching rows are kept in memory."""
    from symfonic_cli.threadkey import parse_key

    need_size = with_size or sort == "size"
    need_status = statuses is not None
    source = getattr(store, "iter_run_states", None)
    if source is not None:
        rows = source(prefix=prefix, with_size=need_size, with_status=need_status)
    else:
        rows = _generic_run_states(store, prefix, need_size, need_status)
    kept = []
    for r in rows:
        if session is not None:
            parts = parse_key(r.key)
            if parts is None or parts.session != session:
                continue
        if statuses is not None and r.status not in statuses:
            continue
        if window is not None and not window.keeps(r.last_checkpoint_id):
            continue  # a retention window (retention/window.py), on the ids already read
        kept.append(r)
    if sort == "last-activity":
        kept.sort(key=lambda r: r.key)
        kept.sort(key=lambda r: r.last_checkpoint_id or "", reverse=True)
    elif sort == "first-activity":
        kept.sort(key=lambda r: r.key)
        kept.sort(key=lambda r: r.first_checkpoint_id or "", reverse=True)
    elif sort == "checkpoints":
        kept.sort(key=lambda r: r.key)
        kept.sort(key=lambda r: r.checkpoints, reverse=True)
    else:
        kept.sort(key=lambda r: r.key)
        kept.sort(key=lambda r: r.size_bytes or 0, reverse=True)
    if reverse:
        kept.reverse()
    if limit is not None:
        kept = kept[:limit]
    return kept
