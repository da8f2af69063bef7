"""Message timestamps in linear time, identical to symfonic-core's ``_checkpoint_ts_by_message_id``.

The reference rule: walk every checkpoint of the thread, every namespace, ``checkpoint_id``
descending; skip a checkpoint whose ``ts`` is missing or unparsable; for each message id in its
``messages`` set ``map[id] = ts``. So the OLDEST checkpoint (with a usable ts) holding an id wins.
Decoding every checkpoint's list is quadratic in the conversation, so instead:

- Each checkpoint's ``ts``, parent, source and message COUNT come cheap (``CheckpointHead``: the
  first bytes of a blob, or SQL), and the thread's ``messages`` writes hold only new messages.
- LangGraph stores every write it applies on the checkpoint the writing task ran on, and builds
  the checkpoint one step later (the step is in the checkpoint id) from the parent plus those
  writes. Such a checkpoint C, the only child of its parent P, is a *proven append* when
  P's writes contain only plain messages (no RemoveMessage, nothing else) and
  ``count(C) == count(P) + len(writes at P)``: ``add_messages`` appends each element or shrinks the
  count, so equality means every element was appended. Then ``ids(P) == ids(C)[:count(P)]``.
  Writes are matched by position, never by id (human and tool messages are written without one).
- Walking newest to oldest, a checkpoint inherits the id list ("anchor") of a child it is a proven
  append of; only checkpoints without such a child (the latest one, a rewritten history, a
  subgraph run's last state, a fork) are decoded, ids only. Every checkpoint's ids are then a
  prefix of its anchor, and one oldest-first pass gives each id its first ts.
- A store without the optional head/write methods, or any inconsistency, takes the exact walk.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from symfonic_cli.transcript import rows as tx

# typing.TYPE_CHECKING without importing typing; the store protocol and rows only annotate here
# (thread show's restart line imports this module: 2 ms less a process).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.model.checkpoint import CheckpointHead, MessageState, MessageWrite
    from symfonic_cli.stores.protocol import Store

_STEP_MASK = 0x3FFF


def step_of(checkpoint_id: str) -> int:
    """The step LangGraph encodes in a checkpoint id (``uuid6(clock_seq=step)``), modulo 2**14."""
    try:  # the clock_seq: the 4th group of the uuid, below its two variant bits
        return int(checkpoint_id[19:23], 16) & _STEP_MASK
    except (ValueError, TypeError):
        return -1


def resolve(
    store: Store,
    key: str,
    *,
    known: dict[tuple[str, str], list[str | None]] | None = None,
    wanted: Iterable[str] | None = None,
    report: Resolution | None = None,
) -> dict[str, datetime]:
    """``{message id: ts}`` by the reference rule (ids in ``wanted`` at least, when given).

    ``known`` maps ``(checkpoint_ns, checkpoint_id)`` to id lists already decoded by the caller;
    ``report``, when given, is filled in with how the answer was found.
    """
    report = report if report is not None else Resolution()
    want = None if wanted is None else {w for w in wanted if w}
    if want is not None and not want:
        return {}
    fast = _linear(store, key, known or {}, want, report)
    if fast is not None:
        report.path = "linear"
        return fast
    report.path, report.decoded = "exact", None
    return exact(store, key)


class Resolution:
    """How one ``resolve`` went (for tests and benchmarks): ``path`` "linear" or "exact" (None:
    nothing to resolve), and ``decoded``, the checkpoints the linear path decoded (None: exact)."""

    __slots__ = ("path", "decoded")

    def __init__(self) -> None:
        self.path: str | None = None
        self.decoded: int | None = None

    def __repr__(self) -> str:
        return f"Resolution(path={self.path!r}, decoded={self.decoded!r})"


# -- the exact walk (reference order; each distinct stored value decoded once)


def exact(store: Store, key: str) -> dict[str, datetime]:
    return tx.oldest_ts_by_id(_walk(store, key))


def _state_ids(state: MessageState) -> tuple[datetime | None, list[str | None]]:
    from symfonic_cli.codec.strict import lean_loads, lean_message_ids

    value = lean_loads(state.payload_type, state.payload)
    ts = state.ts
    if state.encoding == "checkpoint":
        if not isinstance(value, dict):
            return None, []
        if ts is None:
            ts = value.get("ts")
        value = (value.get("channel_values") or {}).get("messages")
    return tx.parse_checkpoint_ts(ts), lean_message_ids(value)


def _walk(store: Store, key: str) -> Iterator[tuple[datetime | None, list[str | None]]]:
    cache: dict[object, list[str | None]] = {}
    for state in store.iter_message_states(key):
        if state.encoding == "channel" and state.version in cache:
            yield tx.parse_checkpoint_ts(state.ts), cache[state.version]
            continue
        ts, ids = _state_ids(state)
        if state.encoding == "channel":
            cache[state.version] = ids
        yield ts, ids


# -- the linear path


class _Unproven(Exception):
    """The store's contents do not let the linear path prove its answer; take the exact walk."""


def _linear(
    store: Store, key: str, known: dict[tuple[str, str], list[str | None]], want: set[str] | None, report: Resolution
) -> dict[str, datetime] | None:
    try:
        heads = list(store.iter_checkpoint_heads(key))
        if any(h.message_count is None for h in heads):
            return None
        added = _added_by_writes(store.iter_message_writes(key))
        anchors = _anchors(store, key, heads, added, known, report)
    except _Unproven:
        return None
    return _first_ts(heads, anchors, want)


def _added_by_writes(writes: Iterable[MessageWrite]) -> dict[tuple[str, str], tuple[int, set[str]] | None]:
    """Per ``(ns, checkpoint id)``: how many messages its writes append and their non-null ids.

    None marks a checkpoint whose writes do something other than append plain messages.
    """
    from symfonic_cli.codec.strict import lean_loads

    out: dict[tuple[str, str], tuple[int, set[str]] | None] = {}
    for w in writes:
        where = (w.checkpoint_ns, w.checkpoint_id)
        if where in out and out[where] is None:
            continue
        try:
            value = lean_loads(w.payload_type, w.payload)
        except Exception:
            out[where] = None
            continue
        items = value if isinstance(value, list) else [value]
        ids: set[str] = set()
        ok = True
        for item in items:
            mid = _plain_message_id(item)
            if mid is False:
                ok = False
                break
            if isinstance(mid, str) and mid:
                ids.add(mid)
        if not ok:
            out[where] = None
            continue
        n, seen = out.get(where) or (0, set())
        out[where] = (n + len(items), seen | ids)
    return out


def _plain_message_id(item: Any) -> str | None | bool:
    """The id of a message ``add_messages`` would append (None: none yet); False for anything else."""
    from symfonic_cli.codec.strict import LeanObject

    if isinstance(item, LeanObject):
        module, name = item[0], item[1]
        if not (isinstance(module, str) and module.startswith("langchain_core.messages")):
            return False
        if name == "RemoveMessage" or not isinstance(item.fields, dict):
            return False
        mid = item.fields.get("id")
        return mid if isinstance(mid, str) else None
    return False


def _anchors(
    store: Store,
    key: str,
    heads: list[CheckpointHead],
    added: dict[tuple[str, str], tuple[int, set[str]] | None],
    known: dict[tuple[str, str], list[str | None]],
    report: Resolution | None = None,
) -> dict[tuple[str, str], list[str | None]]:
    """Each checkpoint's anchor: an id list whose first ``message_count`` entries are its ids
    (``report.decoded``: how many checkpoints were decoded for it)."""
    by_key = {(h.checkpoint_ns, h.checkpoint_id): h for h in heads}
    children: dict[tuple[str, str | None], int] = {}
    for h in heads:
        children[(h.checkpoint_ns, h.parent_checkpoint_id)] = children.get((h.checkpoint_ns, h.parent_checkpoint_id), 0) + 1
    anchors: dict[tuple[str, str], list[str | None]] = {}
    decoded = 0
    for h in reversed(heads):  # newest first: children before parents
        here = (h.checkpoint_ns, h.checkpoint_id)
        anchor = anchors.get(here)
        if anchor is None:
            anchor = known.get(here)
            if anchor is None and h.message_count:
                anchor = _decode_ids(store, key, h)
                decoded += 1
            elif anchor is None:
                anchor = []
            if len(anchor) != h.message_count:
                raise _Unproven
            anchors[here] = anchor
        parent = by_key.get((h.checkpoint_ns, h.parent_checkpoint_id)) if h.parent_checkpoint_id else None
        if parent is None or (parent.checkpoint_ns, parent.checkpoint_id) in anchors:
            continue
        if children[(h.checkpoint_ns, h.parent_checkpoint_id)] != 1:
            continue  # a fork: the parent's writes explain at most one of its children
        if _proven_append(parent, h, added.get((parent.checkpoint_ns, parent.checkpoint_id), (0, set())), anchor):
            anchors[(parent.checkpoint_ns, parent.checkpoint_id)] = anchor
    if report is not None:
        report.decoded = decoded
    return anchors


def _proven_append(parent: CheckpointHead, child: CheckpointHead, writes, anchor: list[str | None]) -> bool:
    if writes is None or child.source == "fork":
        return False
    # One step apart: a run that saved only its last checkpoint (durability "exit") applied
    # writes that were never stored.
    if step_of(child.checkpoint_id) != (step_of(parent.checkpoint_id) + 1) & _STEP_MASK:
        return False
    n, ids = writes
    lo, hi = parent.message_count or 0, child.message_count or 0
    if hi != lo + n:
        return False
    # Ids the writes carried must sit in the appended range (a cheap second proof).
    return not ids or ids <= set(anchor[lo:hi])


def _decode_ids(store: Store, key: str, head: CheckpointHead) -> list[str | None]:
    from symfonic_cli.codec.plain import MESSAGE_VIEWS
    from symfonic_cli.codec.strict import viewing

    with viewing(MESSAGE_VIEWS):  # ids from the stored fields: no message built (langchain_core: 0.5 s to import)
        record = store.read_checkpoint(
            key, checkpoint_ns=head.checkpoint_ns, checkpoint_id=head.checkpoint_id, channels=("messages",)
        )
    messages = record.channel_values.get("messages") if record is not None else None
    if not isinstance(messages, list):
        raise _Unproven
    return [tx.message_id_of(m) for m in messages]


def _first_ts(
    heads: list[CheckpointHead], anchors: dict[tuple[str, str], list[str | None]], want: set[str] | None
) -> dict[str, datetime]:
    """Oldest first, each id takes the ts of the first checkpoint (with a usable ts) holding it."""
    out: dict[str, datetime] = {}
    done: dict[int, int] = {}  # anchor -> prefix already seen by an older checkpoint with a ts
    missing = None if want is None else set(want)
    for h in heads:
        ts = tx.parse_checkpoint_ts(h.ts)
        if ts is None:
            continue
        anchor = anchors[(h.checkpoint_ns, h.checkpoint_id)]
        start, end = done.get(id(anchor), 0), h.message_count or 0
        if end <= start:
            continue
        for mid in anchor[start:end]:
            if mid and mid not in out:
                out[mid] = ts
                if missing is not None:
                    missing.discard(mid)
        done[id(anchor)] = end
        if missing is not None and not missing:
            break
    return out


# -- reading heads from stored bytes (shared by backends)


