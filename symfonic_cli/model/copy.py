"""A thread as raw stored rows and as decoded values: what ``symfonic migrate`` moves and compares."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig



def saver_config(key: str, checkpoint_ns: str, checkpoint_id: str | None) -> RunnableConfig:
    """The config a saver's ``put`` (parent id) or ``put_writes`` (the checkpoint's id) takes."""
    return {"configurable": {"thread_id": key, "checkpoint_ns": checkpoint_ns, "checkpoint_id": checkpoint_id}}

@dataclass(frozen=True)
class RawRow:
    """One stored row (document) of a thread, exactly as the store holds it.

    ``table`` is the backend's own table/collection role name (SQLite: ``"checkpoints"``,
    ``"writes"``; PostgreSQL: ``"checkpoints"``, ``"checkpoint_blobs"``, ``"checkpoint_writes"``;
    MongoDB: ``"checkpoints"``, ``"writes"``), never a user-configured name, so an export from one
    store imports into another of the same kind whatever its schema/collection options.
    ``key`` is the row's primary key WITHOUT the thread id, as a tuple of plain values
    (checkpoints: ``(ns, checkpoint_id)``; writes: ``(ns, checkpoint_id, task_id, idx)``;
    PostgreSQL blobs: ``(ns, channel, version)``). ``data`` holds every other stored column as
    plain, ``==``-comparable Python values: ``bytes`` (never memoryview), ``str``, numbers, None,
    and for JSONB/BSON documents the decoded dict/list as stored (no value decoding beyond that;
    MongoDB: the document minus ``_id``, ``thread_id`` and the key fields; drop ``created_at`` TTL
    fields, they are re-stamped on import when the target has a TTL). Two rows with equal
    ``(table, key)`` and equal ``data`` are the same stored content. Whether a row already in the
    target is the same content (skip) or not (conflict) is decided on the decoded values, where a
    NaN equals a NaN (``symfonic_cli.migrate.copy._Equal``), never by ``==`` on raw rows.
    """

    table: str
    key: tuple
    data: tuple | dict


@dataclass(frozen=True)
class ThreadExport:
    """Every stored row of one thread (all namespaces, every table), for a same-kind copy."""

    kind: str
    key: str  # the thread id
    rows: list[RawRow]


@dataclass(frozen=True)
class DecodedCheckpoint:
    """One checkpoint as the saver's own ``get_tuple()`` would return it, decoded strictly.

    ``checkpoint`` is the whole Checkpoint mapping (``v``, ``id``, ``ts``, ``channel_values``,
    ``channel_versions``, ``versions_seen``, ``updated_channels``, ... whatever is stored), with
    ``channel_values`` rebuilt the way the saver rebuilds them (PostgreSQL: inline values plus the
    blobs named by ``channel_versions``). ``metadata`` is the decoded metadata mapping (MongoDB:
    each value through the serializer, as ``loads_metadata`` does). Values decoded through
    ``symfonic_cli.codec.strict.loads`` inside ``collect_blocked()``.
    """

    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    checkpoint: dict[str, Any]
    metadata: dict[str, Any]


@dataclass(frozen=True)
class DecodedWrite:
    """One pending write, decoded strictly; ``idx`` as stored (negative for special channels)."""

    checkpoint_ns: str
    checkpoint_id: str
    task_id: str
    task_path: str  # "" when the store has no task_path column
    idx: int
    channel: str
    value: Any

    @property
    def key(self) -> tuple:
        return (self.checkpoint_ns, self.checkpoint_id, self.task_id, self.idx)


@dataclass
class DecodedThread:
    """A whole thread decoded: what a cross-kind copy writes and what verification compares.

    ``checkpoints`` ascending by ``checkpoint_id`` (parents before children) over every
    namespace; ``writes`` ordered by ``(checkpoint_ns, checkpoint_id, task_path, task_id, idx)``.
    ``blocked`` maps a description of each value the strict decoder could not rebuild exactly
    (e.g. ``"checkpoint 1f0..., ns '', channel 'messages'"`` or ``"write 1f0.../task/0 channel
    'x'"``) to the sorted class names it refused; empty when everything decoded exactly.
    """

    key: str
    checkpoints: list[DecodedCheckpoint]
    writes: list[DecodedWrite]
    blocked: dict[str, list[str]] = field(default_factory=dict)


def unwritable(thread: DecodedThread, *, identity: bool = True) -> str | None:
    """Why ``thread``'s rows cannot be planned and written as stored, or None.

    Keys must be what a saver writes: strings, an integer ``idx``, a string or no parent. With
    ``identity``, each checkpoint's stored id must be the id inside its blob: a saver's ``put``
    writes a checkpoint under its blob's id, so a row stored under another id would be planned
    as new and then written over the checkpoint of the blob's id."""
    for cp in thread.checkpoints:
        where = f"checkpoint {_shown(cp.checkpoint_id)} (ns {_shown(cp.checkpoint_ns)})"
        if not isinstance(cp.checkpoint_ns, str) or not isinstance(cp.checkpoint_id, str):
            return f"{where} has a key that is not a string"
        if cp.parent_checkpoint_id is not None and not isinstance(cp.parent_checkpoint_id, str):
            return f"{where} has a parent id that is not a string ({_shown(cp.parent_checkpoint_id)})"
        inner = cp.checkpoint.get("id")
        if identity and inner != cp.checkpoint_id:
            return f"{where} is stored under another id than the one in its blob ({_shown(inner)})"
    for w in thread.writes:
        if not all(isinstance(v, str) for v in (w.checkpoint_ns, w.checkpoint_id, w.task_id, w.channel)):
            return f"write {_shown(w.checkpoint_id)}/{_shown(w.task_id)}/{_shown(w.idx)} has a key or channel that is not a string"
        if type(w.idx) is not int:
            return f"write {w.checkpoint_id}/{w.task_id}/{_shown(w.idx)} has an index that is not an integer"
    return None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class MigrationConflict(Exception):
    """Raised by an import when a row/checkpoint/write it was asked to add already exists.

    The import's transaction is rolled back: the target thread is left exactly as it was.
    ``symfonic_cli.migrate.copy`` reports the thread as a conflict (never shown as a traceback).
    """


def new_versions_in_order(checkpoints: list[DecodedCheckpoint]) -> list[dict[str, Any]]:
    """For each checkpoint (ascending order), the ``new_versions`` to hand to ``saver.put``:
    the channel versions not already named by an earlier checkpoint of the same namespace.

    PostgreSQL keeps channel values apart, one blob per (channel, version); a version seen
    before was stored with that earlier checkpoint (written now or already in the target).
    """
    seen: dict[str, set[tuple[str, str]]] = {}
    out = []
    for cp in checkpoints:
        known = seen.setdefault(cp.checkpoint_ns, set())
        versions = cp.checkpoint.get("channel_versions") or {}
        new = {ch: v for ch, v in versions.items() if (ch, str(v)) not in known}
        known.update((ch, str(v)) for ch, v in versions.items())
        out.append(new)
    return out


def migrate_fault_point(tag: str) -> None:
    """Test hook: kill this process (SIGKILL) at the Nth call with ``tag`` when
    ``SYMFONIC_TEST_MIGRATE_KILL=tag:N`` is set. Imports call it with ``"before-commit"`` after
    every row of a thread is written and before the commit, so tests can prove a killed copy
    leaves each target thread whole or absent. ``tag:N:stall`` stops there instead (sleeps,
    transaction open), so a test can kill the parent of a parallel copy mid-thread. No effect when
    the variable is unset.
    """
    import os

    spec = os.environ.get("SYMFONIC_TEST_MIGRATE_KILL")
    if not spec or not spec.startswith(tag + ":"):
        return
    _fault_counts[tag] = _fault_counts.get(tag, 0) + 1
    count, _, action = spec[len(tag) + 1:].partition(":")
    if _fault_counts[tag] >= int(count):
        if action == "stall":
            import time

            while True:
                time.sleep(1)
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


_fault_counts: dict[str, int] = {}


class UnrebuildableWrites(Exception):
    """Pending writes whose stored indexes ``put_writes`` cannot reproduce."""


def write_batches(writes: Iterable[DecodedWrite]) -> list[tuple[str, str, str, str, list[tuple[str, Any]]]]:
    """Group writes into ``(ns, checkpoint_id, task_id, task_path, [(channel, value), ...])``
    calls of ``put_writes``, each list ordered so that the saver's
    ``WRITES_IDX_MAP.get(channel, position)`` gives back every stored ``idx``.

    Regular writes sit at their own index; special channels (errors, interrupts, ...) get a
    fixed negative index whatever their position, so they fill the gaps, then go last. A gap no
    special write can fill cannot be reproduced: UnrebuildableWrites.
    """
    from langgraph.checkpoint.base import WRITES_IDX_MAP

    groups: dict[tuple[str, str, str, str], list[DecodedWrite]] = {}
    for w in writes:
        groups.setdefault((w.checkpoint_ns, w.checkpoint_id, w.task_id, w.task_path), []).append(w)
    out = []
    for (ns, cid, task_id, task_path), ws in groups.items():
        special = [w for w in ws if w.channel in WRITES_IDX_MAP]
        for w in special:
            if WRITES_IDX_MAP[w.channel] != w.idx:
                raise UnrebuildableWrites(
                    f"write {cid}/{task_id}/{w.idx} on channel '{w.channel}' is stored at an index its saver never gives it"
                )
        regular = {}
        for w in ws:
            if w.channel in WRITES_IDX_MAP:
                continue
            if w.idx < 0 or w.idx in regular:
                raise UnrebuildableWrites(f"write {cid}/{task_id}/{w.idx} has an index put_writes cannot reproduce")
            regular[w.idx] = w
        size = max(regular) + 1 if regular else 0
        fillers = list(special)
        batch: list[tuple[str, Any]] = []
        for i in range(size):
            if i in regular:
                batch.append((regular[i].channel, regular[i].value))
            elif fillers:
                f = fillers.pop(0)
                batch.append((f.channel, f.value))
            else:
                raise UnrebuildableWrites(
                    f"writes of task {task_id} at checkpoint {cid} skip index {i}; put_writes cannot reproduce that"
                )
        batch.extend((f.channel, f.value) for f in fillers)
        out.append((ns, cid, task_id, task_path, batch))
    return out
