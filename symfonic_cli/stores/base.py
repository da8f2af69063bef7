"""The one small protocol every backend implements.

Everything backend-specific lives in ``stores/<kind>.py``; the commands and the pure logic
only see these types.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol

from symfonic_cli.location import StoreLocation
from symfonic_cli.threadkey import KeyParts, parse_key

_UUID_EPOCH = datetime(1582, 10, 15, tzinfo=timezone.utc)


def checkpoint_id_time(checkpoint_id: str | None) -> datetime | None:
    """The creation time LangGraph encodes in a checkpoint id (a UUIDv6), or None.

    Lets listings show activity without decoding a single checkpoint blob.
    """
    if not checkpoint_id:
        return None
    try:
        u = uuid.UUID(checkpoint_id)
    except ValueError:
        return None
    if u.version != 6:
        return None
    n = u.int
    ticks = ((n >> 96) << 28) | (((n >> 80) & 0xFFFF) << 12) | ((n >> 64) & 0x0FFF)
    return _UUID_EPOCH + timedelta(microseconds=ticks // 10)


@dataclass(frozen=True)
class ThreadSummary:
    key: str
    checkpoints: int
    first_checkpoint_id: str | None
    last_checkpoint_id: str | None

    @property
    def parts(self) -> KeyParts | None:
        return parse_key(self.key)

    @property
    def first_activity(self) -> datetime | None:
        return checkpoint_id_time(self.first_checkpoint_id)

    @property
    def last_activity(self) -> datetime | None:
        return checkpoint_id_time(self.last_checkpoint_id)


@dataclass(frozen=True)
class StoreInfo:
    kind: str
    location: str  # masked
    threads: int
    checkpoints: int
    writes: int
    details: dict[str, Any] = field(default_factory=dict)  # backend-specific, printable


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


@dataclass(frozen=True)
class MessageState:
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


class Store(Protocol):
    location: StoreLocation

    @property
    def kind(self) -> str: ...

    def close(self) -> None: ...

    # -- what is in the store (aggregated in the database, no blob decoding)
    def list_threads(
        self,
        *,
        tenant: str | None = None,
        sub_tenant: str | None = None,
        limit: int | None = None,
    ) -> Iterator[ThreadSummary]:
        """Threads newest activity first; ``tenant``/``sub_tenant`` filter on the key prefix."""
        ...

    def thread_summary(self, key: str) -> ThreadSummary | None: ...

    def info(self) -> StoreInfo: ...

    # -- one thread
    def read_checkpoint(
        self,
        key: str,
        *,
        checkpoint_ns: str = "",
        checkpoint_id: str | None = None,
        channels: tuple[str, ...] = ("messages",),
    ) -> CheckpointRecord | None:
        """The latest checkpoint of a namespace (or the given id), strictly decoded."""
        ...

    def iter_message_states(self, key: str) -> Iterator[MessageState]:
        """Every checkpoint of the thread in every namespace, ``checkpoint_id`` descending."""
        ...


class SupportsWith:
    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()  # type: ignore[attr-defined]
