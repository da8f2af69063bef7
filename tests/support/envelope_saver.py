"""A real saver wrapper that writes envelopes the way a migrated symfonic-core writer does.

It wraps whichever real LangGraph saver tests.support.backends hands out (SQLite, PostgreSQL, MongoDB)
and merges ``envelope`` into the metadata of every checkpoint it puts, additively, under the
envelope key; everything else is the real saver. ``clock_offset`` writes the thread as if the
clock were that far off (checkpoint ids carry their creation time), so a test can hold writes
older than ``--grace`` without sleeping.
"""

from __future__ import annotations

import copy
import uuid
from datetime import timedelta
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from symfonic_cli.compat.envelope import DEFAULT_ENVELOPE_KEY, StateEnvelope

NO_ENVELOPE: Any = object()  # put nothing under the key: a legacy writer


def migrated(**fields: Any) -> dict[str, Any]:
    """The metadata form of a valid migrated envelope (format 1), with ``fields`` overriding."""
    env = StateEnvelope(format_version=1, writer_line="migrated", package_version="9.12.0").to_metadata()
    env.update(fields)
    return env


def _shift(checkpoint_id: str, offset: timedelta) -> str:
    # UUIDv6: 60 bits of 100 ns ticks, most significant first; the rest (seq, node) is kept.
    u = uuid.UUID(checkpoint_id)
    n = u.int
    ticks = ((n >> 96) << 28) | (((n >> 80) & 0xFFFF) << 12) | ((n >> 64) & 0x0FFF)
    ticks += int(offset.total_seconds() * 10_000_000)
    rest = n & ((1 << 64) - 1)
    return str(uuid.UUID(int=((ticks >> 28) << 96) | (((ticks >> 12) & 0xFFFF) << 80) | (0x6 << 76) | ((ticks & 0x0FFF) << 64) | rest))


class EnvelopeSaver(BaseCheckpointSaver):
    def __init__(self, inner: BaseCheckpointSaver, *, key: str = DEFAULT_ENVELOPE_KEY) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner
        # Shared with with_allowlist() clones, so a test can change it between turns.
        self.control: dict[str, Any] = {"envelope": NO_ENVELOPE, "key": key, "clock_offset": None}

    @property
    def envelope(self) -> Any:
        return self.control["envelope"]

    @envelope.setter
    def envelope(self, value: Any) -> None:
        self.control["envelope"] = value

    @property
    def clock_offset(self) -> timedelta | None:
        return self.control["clock_offset"]

    @clock_offset.setter
    def clock_offset(self, value: timedelta | None) -> None:
        self.control["clock_offset"] = value

    def put(self, config, checkpoint, metadata, new_versions):
        env = self.control["envelope"]
        if env is not NO_ENVELOPE:
            metadata = {**metadata, self.control["key"]: copy.deepcopy(env)}
        offset = self.control["clock_offset"]
        if offset:
            checkpoint = {**checkpoint, "id": _shift(checkpoint["id"], offset)}
        return self.inner.put(config, checkpoint, metadata, new_versions)

    def put_writes(self, config, writes, task_id, task_path=""):
        return self.inner.put_writes(config, writes, task_id, task_path)

    def get_tuple(self, config):
        return self.inner.get_tuple(config)

    def list(self, config, *, filter=None, before=None, limit=None):
        return self.inner.list(config, filter=filter, before=before, limit=limit)

    def delete_thread(self, thread_id):
        return self.inner.delete_thread(thread_id)

    def get_next_version(self, current, channel):
        return self.inner.get_next_version(current, channel)

    def with_allowlist(self, extra_allowlist):
        clone = copy.copy(self)
        clone.inner = self.inner.with_allowlist(extra_allowlist)
        clone.serde = clone.inner.serde
        return clone
