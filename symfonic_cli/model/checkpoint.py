"""What the stores hand back when a thread's checkpoints are read for a transcript."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple


@dataclass(frozen=True)
class CheckpointRecord:
    """One checkpoint, decoded strictly. ``channel_values`` holds only the channels asked for."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    ts: str | None
    metadata: dict[str, Any]
    channel_values: dict[str, Any]
    channel_versions: dict[str, Any]
    blocked: frozenset[str] = frozenset()  # classes the strict decoder refused to build


class MessageState(NamedTuple):  # a tuple: one is made per checkpoint a prune's dry run reads
    """A thread checkpoint's ``messages`` list, in the form the backend stores it.

    ``encoding`` says how ``payload`` is to be read:
    - ``"checkpoint"``: the whole serialized checkpoint (SQLite, MongoDB); messages sit in
      ``channel_values["messages"]`` and ``ts`` may be None (then read it from the payload).
    - ``"channel"``: the serialized messages value alone (PostgreSQL blobs); ``ts`` is set.
    ``version`` identifies the stored value: states with equal versions hold equal lists, so a
    reader decodes each version once. ``payload`` None means the checkpoint has no messages.
    """

    checkpoint_ns: str
    checkpoint_id: str
    ts: str | None
    version: Any
    encoding: str
    payload_type: str | None
    payload: bytes | None
    parent_checkpoint_id: str | None = None  # set by iter_message_states (DeltaChannel rebuilds)


class CheckpointHead(NamedTuple):  # a tuple: thousands are made per transcript
    """One checkpoint as the timestamp resolver needs it, read WITHOUT decoding its messages.

    - ``ts``: the checkpoint's own ``ts`` string exactly as stored (None when absent).
    - ``source``: ``metadata["source"]`` ("input", "loop", "update", "fork") where it is cheap
      to read (PostgreSQL, MongoDB), else None; only "fork" is used (never proven an append).
      SQLite leaves it None: its metadata sits after the blob in the row, and reaching it reads
      the whole blob. (The step is not needed: LangGraph puts it in the checkpoint id.)
    - ``message_count``: ``len(channel_values["messages"])`` of this checkpoint; 0 when the
      checkpoint has no ``messages`` value; None when it cannot be told cheaply or is not a
      plain list (e.g. delta-encoded) -- the resolver then takes the exact walk.
    """

    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    ts: str | None
    source: str | None
    message_count: int | None
    step: int | None = None  # metadata["step"] if read; informational, the resolver uses the id's step


class MessageWrite(NamedTuple):
    """One stored pending write to the ``messages`` channel: a row of the writes table.

    ``checkpoint_id`` is the checkpoint the writing task ran ON (the parent of the checkpoint
    the write produced). ``payload_type``/``payload`` are the stored ``(type, bytes)`` pair.
    """

    checkpoint_ns: str
    checkpoint_id: str
    task_id: str
    idx: int | None  # None: not an integer in the store (MongoDB holds any BSON there)
    payload_type: str | None
    payload: bytes | None
    task_path: str = ""  # writes_sort_key order (task_path, task_id, idx); "" when not stored
