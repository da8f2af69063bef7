"""SQLite stores: thread history and diff: checkpoint metadata and write channels, no value decoded."""

from __future__ import annotations

from collections.abc import Iterator

from symfonic_cli.errors import StoreError
from symfonic_cli.stores.sqlite._common import (
    SqliteSection,
    _json_metadata,
    _translate_errors,
    _translate_iter,
)

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.model.checkpoint import MessageState
    from symfonic_cli.model.history import CheckpointFacts, WriteChannel


class SqliteHistory(SqliteSection):
    """Thread history and diff: checkpoint metadata and write channels, no value decoded."""

    # -- history (protocol docstrings in stores/protocol.py): metadata and write channels, no value decoded

    @_translate_iter
    def iter_checkpoint_facts(self, key: str) -> Iterator["CheckpointFacts"]:
        # The metadata sits after the checkpoint blob in the row: reading it walks the blob's
        # overflow pages, but decodes nothing (benchmarks/bench_history.py measures it).
        from symfonic_cli.model.history import CheckpointFacts

        cur = self.conn.execute(
            f"SELECT checkpoint_ns, checkpoint_id, metadata FROM checkpoints WHERE {self._key_is()} ORDER BY checkpoint_id",
            self._key_args(key),
        )
        for ns, cid, raw in cur:
            try:
                meta = _json_metadata(raw, cid)
            except StoreError:
                meta = {}
            source, step = meta.get("source"), meta.get("step")
            yield CheckpointFacts(
                ns, cid, source if isinstance(source, str) else None,
                step if isinstance(step, int) and not isinstance(step, bool) else None, meta.get("writes"),
            )

    @_translate_iter
    def iter_write_channels(self, key: str) -> Iterator["WriteChannel"]:
        from symfonic_cli.model.history import WriteChannel

        path = "task_path" if self.has_task_path else "''"
        cur = self.conn.execute(
            f"SELECT checkpoint_ns, checkpoint_id, task_id, {path}, idx, channel FROM writes WHERE {self._key_is()}",
            self._key_args(key),
        )
        for ns, cid, task_id, task_path, idx, channel in cur:
            yield WriteChannel(ns, cid, task_id, task_path or "", idx, channel)

    @_translate_errors
    def checkpoint_ids(self, key: str) -> list[tuple[str, str]]:
        return [tuple(r) for r in self.conn.execute(
            f"SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE {self._key_is()}", self._key_args(key)
        )]

    @_translate_errors
    def read_messages_as_stored(self, key: str, *, checkpoint_ns: str, checkpoint_id: str) -> MessageState | None:
        from symfonic_cli.model.checkpoint import MessageState

        row = self.conn.execute(
            f"SELECT type, checkpoint FROM checkpoints WHERE {self._key_is()} AND checkpoint_ns = ? AND checkpoint_id = ?",
            (*self._key_args(key), checkpoint_ns, checkpoint_id),
        ).fetchone()
        if row is None:
            return None
        return MessageState(checkpoint_ns, checkpoint_id, None, checkpoint_id, "checkpoint", row[0], row[1])
