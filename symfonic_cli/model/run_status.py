"""A thread's run status (``threads list --status``, ``thread show``) from its latest root
checkpoint's version maps and the per-task flags of its pending writes: pure logic over rows the
stores read (see model/run_state.py); the stores call these helpers, so they sit on this floor."""

from __future__ import annotations

from ormsgpack import packb as _packb, unpackb as _unpackb

from symfonic_cli.codec.msgpack_head import VERSIONS_KEY as _VERSIONS_KEY, parse_blob_end
from symfonic_cli.model import triggers as tr

# typing.TYPE_CHECKING without importing typing (the status listing loads this module; the
# task machinery of ``nexttasks`` is loaded only for threads whose writes must be matched).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, TypeVar

    _Whole = TypeVar("_Whole")  # what whole() gives when the maps cannot decide

    from symfonic_cli.model.run_state import LeanCheckpoint, ThreadRunRows

    from symfonic_cli.model import nexttasks as nt

# The blob's head marker (a map of 6 to 15 fields) -> the marker of a map of its fields after
# v, ts, id and channel_values: what ``parse_tail`` frames the tail with.
_FRAMES = {m: bytes((0x80 | ((m & 0x0F) - 4),)) for m in range(0x86, 0x90)}


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
    more: Callable[[int], bytes | None] | None = None,
) -> str:
    """The status from the blob's ``tail`` (its last bytes, the trailing fields among them) and
    the pending writes' flags; ``whole()`` reads the checkpoint when the tail cannot decide.
    ``step`` (the metadata's) may be a callable giving it: only task ids need it."""
    if task_flags:
        flags = [f for tid, f in task_flags.items() if tid != tr.NULL_TASK_ID]
        if any(f[2] for f in flags) and not any(f[1] for f in flags):
            return "error"  # an error write and no interrupt: no task's state can change that
    parsed = parse_blob_end(head, tail, length, more) if type_ == "msgpack" else None
    if parsed is None:
        return status_from_blob(checkpoint_id, whole(), task_flags)
    v = head[3] if head and len(head) >= 4 and head[1:3] == b"\xa1v" and head[3] < 0x80 else 1
    return status_from_maps(
        checkpoint_id, step, v, parsed["channel_versions"], parsed["versions_seen"], parsed.get("updated_channels"),
        task_flags, whole=lambda: status_from_blob(checkpoint_id, whole(), task_flags),
    )


def status_without_writes(head: bytes | None, tail: bytes | None, length: int | None) -> str | None:
    """``status_from_tail`` for a msgpack checkpoint WITHOUT pending writes, in its common case:
    the last ``channel_versions`` key in ``tail`` starts the blob's last fields (proven as in
    ``parse_tail``, by re-encoding), ``updated_channels`` is a list without pending Sends; then
    whether a task is due decides. None when anything else holds: ``status_from_tail`` decides.

    Runs once per listed thread: no objects, one decode, one encode."""
    frame = _FRAMES.get(head[0]) if isinstance(head, bytes) and head else None
    if frame is None or not isinstance(tail, bytes) or not isinstance(length, int):
        return None
    pos = tail.rfind(_VERSIONS_KEY)
    if pos < 0 or len(tail) - pos >= length:
        return None
    framed = frame + tail[pos:]
    try:
        fields = _unpackb(framed)
        if not isinstance(fields, dict) or _packb(fields) != framed:
            return None
    except Exception:
        return None
    channel_versions = fields.get("channel_versions")
    versions_seen = fields.get("versions_seen")
    updated = fields.get("updated_channels")
    if (
        not isinstance(channel_versions, dict) or not isinstance(versions_seen, dict)
        or not isinstance(updated, list) or tr.TASKS in updated
    ):
        return None
    return "pending" if _any_due(channel_versions, versions_seen, updated) else "done"


def status_from_maps(
    checkpoint_id: str,
    step: Any,
    v: Any,
    channel_versions: Any,
    versions_seen: Any,
    updated: Any,
    task_flags: Mapping[str, tuple[str | None, bool, bool, bool]],
    *,
    whole: Callable[[], _Whole],
) -> str | _Whole:
    """The status from the version maps alone; ``whole()`` when they cannot decide (no
    ``updated_channels``, pending Sends, odd shapes)."""
    if not isinstance(updated, list) or tr.TASKS in updated or not isinstance(channel_versions, dict) or not isinstance(versions_seen, dict):
        return whole()
    if not any(tid != tr.NULL_TASK_ID for tid in task_flags):
        # No writes to match to tasks: whether any task is due decides, and needs no task ids.
        return "pending" if _any_due(channel_versions, versions_seen, updated) else "done"
    from symfonic_cli.model import nexttasks as nt

    seen = {k: val for k, val in versions_seen.items() if isinstance(val, dict)}
    if callable(step):
        step = step()
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


def _any_due(channel_versions: Mapping[str, Any], versions_seen: Mapping[str, Any], updated: list[Any]) -> bool:
    """Whether ``nt.due_tasks`` would return a task (no pending Sends), without the task ids: a
    trigger channel among the updated ones (a few) newer than its node has seen."""
    for chan in updated:
        if not isinstance(chan, str) or chan not in channel_versions:
            continue
        node = tr.trigger_node(chan)
        if node is None:
            continue
        seen = versions_seen.get(node)
        if not isinstance(seen, dict) or tr.newer(channel_versions[chan], seen.get(chan)):
            return True
    return False


def status_from_blob(checkpoint_id: str, row: tuple[str | None, bytes | None, Any] | None,
                     task_flags: Mapping[str, tuple[str | None, bool, bool, bool]]) -> str:
    """The status from the whole checkpoint (type, blob, metadata as JSON text or a mapping)."""
    import json

    from symfonic_cli.model import nexttasks as nt
    from symfonic_cli.model.run_state import lean_from_blob

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


def due_of(cp: LeanCheckpoint) -> list[nt.Task]:
    """The tasks due after a lean checkpoint (LeanCheckpoint): LangGraph's next-task rules."""
    from symfonic_cli.model import nexttasks as nt

    return nt.due_tasks(
        checkpoint_id=cp.checkpoint_id,
        checkpoint_ns=cp.checkpoint_ns,
        step=(cp.step if cp.step is not None else -1) + 1,
        v=cp.v,
        channel_versions=cp.channel_versions,
        versions_seen=cp.versions_seen,
        available=cp.available,
        sends=cp.sends,
    )


def status_of(cp: LeanCheckpoint, task_flags: Mapping[str, tuple[str | None, bool, bool, bool]]) -> str:
    from symfonic_cli.model import nexttasks as nt

    due = due_of(cp)
    return nt.quick_status(due, task_flags)


def root_status(rows: ThreadRunRows, task_flags: Mapping[str, tuple[str | None, bool, bool, bool]] | None = None) -> str | None:
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
            if w.channel == tr.INTERRUPT:
                f[1] = True
            elif w.channel == tr.ERROR:
                f[2] = True
            elif w.channel not in tr.CONTROL_WRITES:
                f[3] = True
        task_flags = {k: tuple(val) for k, val in flags.items()}
    return status_of(root, task_flags)
