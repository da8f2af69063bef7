"""A real saver wrapper that writes as an older writer or clock would: the demo, the benchmarks and
the tests share it.

``EnvelopeSaver`` wraps any real LangGraph saver (SQLite, PostgreSQL, MongoDB) and merges
``envelope`` into the metadata of every checkpoint it puts, additively, under the envelope key
(``NO_ENVELOPE``: a legacy writer, nothing put); ``clock_offset`` writes as if the clock were that
far off (checkpoint ids carry their creation time; with ``ts_too`` the ``ts`` moves as well, as a
saver running then wrote it), so a store can hold old threads without sleeping. Everything else is
the real saver. The settings live in ``control``, shared with ``with_allowlist()`` clones, so a
writer can change them between turns.
"""

from __future__ import annotations

import copy
import uuid
from datetime import datetime, timedelta
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from symfonic_cli.compat.envelope import DEFAULT_ENVELOPE_KEY, StateEnvelope

NO_ENVELOPE: Any = object()  # put nothing under the key: a legacy writer


def migrated(**fields: Any) -> dict[str, Any]:
    """The metadata form of a valid migrated envelope (format 1), with ``fields`` overriding."""
    env = StateEnvelope(format_version=1, writer_line="migrated", package_version="9.12.0").to_metadata()
    env.update(fields)
    return env


def shifted_id(checkpoint_id: str, offset: timedelta) -> str:
    """A UUIDv6 id made ``offset`` later (earlier when negative): its 60 time bits of 100 ns ticks
    moved, the rest (sequence, node) kept."""
    n = uuid.UUID(checkpoint_id).int
    ticks = ((n >> 96) << 28) | (((n >> 80) & 0xFFFF) << 12) | ((n >> 64) & 0x0FFF)
    ticks += offset // timedelta(microseconds=1) * 10
    rest = n & ((1 << 64) - 1)
    return str(uuid.UUID(int=((ticks >> 28) << 96) | (((ticks >> 12) & 0xFFFF) << 80) | (0x6 << 76) | ((ticks & 0x0FFF) << 64) | rest))


class EnvelopeSaver(BaseCheckpointSaver):
    def __init__(self, inner: Any, *, key: str = DEFAULT_ENVELOPE_KEY, ts_too: bool = False) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner
        self.control: dict[str, Any] = {"envelope": NO_ENVELOPE, "key": key, "clock_offset": None, "ts_too": ts_too}

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
            checkpoint = {**checkpoint, "id": shifted_id(checkpoint["id"], offset)}
            if self.control["ts_too"]:
                checkpoint["ts"] = (datetime.fromisoformat(checkpoint["ts"]) + offset).isoformat()
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

