"""PostgreSQL stores: thread history and diff: checkpoint metadata and write channels, no value decoded."""

from __future__ import annotations

from collections.abc import Iterator

from symfonic_cli.stores.postgres._common import PostgresSection, _translate_errors, _translate_iter

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.model.checkpoint import MessageState
    from symfonic_cli.model.history import CheckpointFacts, WriteChannel


class PostgresHistory(PostgresSection):
    """Thread history and diff: checkpoint metadata and write channels, no value decoded."""

    # -- history (protocol docstrings in stores/protocol.py): metadata and write channels, no value decoded

    @_translate_iter
    def iter_checkpoint_facts(self, key: str) -> Iterator["CheckpointFacts"]:
        from symfonic_cli.model.history import CheckpointFacts

        sql = (
            "SELECT checkpoint_ns, checkpoint_id, metadata -> 'source', metadata -> 'step', metadata -> 'writes' "
            f"FROM checkpoints WHERE {self._key_is()} ORDER BY checkpoint_id, checkpoint_ns"
        )
        for ns, cid, source, step, writes in self._stream(sql, self._key_args(key)):
            yield CheckpointFacts(
                ns, cid, source if isinstance(source, str) else None,
                step if isinstance(step, int) and not isinstance(step, bool) else None, writes,
            )

    @_translate_iter
    def iter_write_channels(self, key: str) -> Iterator["WriteChannel"]:
        from symfonic_cli.model.history import WriteChannel

        path = "task_path" if self.has_task_path else "''"
        sql = f"SELECT checkpoint_ns, checkpoint_id, task_id, {path}, idx, channel FROM checkpoint_writes WHERE {self._key_is()}"
        for ns, cid, task_id, task_path, idx, channel in self._stream(sql, self._key_args(key)):
            yield WriteChannel(ns, cid, task_id, task_path or "", idx, channel)

    @_translate_errors
    def checkpoint_ids(self, key: str) -> list[tuple[str, str]]:
        rows = self.conn.execute(f"SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE {self._key_is()}", self._key_args(key)).fetchall()
        return [(ns, cid) for ns, cid in rows]

    @_translate_errors
    def read_messages_as_stored(self, key: str, *, checkpoint_ns: str, checkpoint_id: str) -> MessageState | None:
        from symfonic_cli.model.checkpoint import MessageState

        row = self.conn.execute(
            "SELECT c.checkpoint ->> 'ts', c.checkpoint -> 'channel_versions' ->> 'messages', "
            "c.checkpoint -> 'channel_values' ? 'messages', b.type, b.blob "
            f"FROM checkpoints c LEFT JOIN checkpoint_blobs b ON {self._key_is('b.thread_id', 'c.thread_id')} "
            "AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = 'messages' "
            "AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages' "
            f"WHERE {self._key_is('c.thread_id')} AND c.checkpoint_ns = %s AND c.checkpoint_id = %s",
            (*self._key_args(key), checkpoint_ns, checkpoint_id),
        ).fetchone()
        if row is None:
            return None
        ts, version, inline, type_, blob = row
        if inline or type_ != "msgpack" or blob is None:
            return MessageState(checkpoint_ns, checkpoint_id, ts, version, "channel", None, None)
        return MessageState(checkpoint_ns, checkpoint_id, ts, version, "channel", type_, bytes(blob))
