"""PostgreSQL stores: thread rewind's write (stores/_rewind.py), through PostgresSaver's own put."""

from __future__ import annotations

from collections.abc import Callable

from symfonic_cli.errors import HeadMoved, NotFoundError, StoreError
from symfonic_cli.stores.postgres._common import PostgresSection, _translate_errors

TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.model.run_state import LeanCheckpoint


class PostgresRewind(PostgresSection):
    """thread rewind (see RewindProtocol in stores/protocol_changes.py)."""

    @_translate_errors
    def rewind_target(self, key: str, checkpoint_id: str) -> LeanCheckpoint | None:
        from symfonic_cli.codec.strict import lean_loads
        from symfonic_cli.model.run_state import lean_from_mapping

        c = self.conn
        row = c.execute(f"SELECT checkpoint, metadata FROM checkpoints WHERE {self._key_is()} AND checkpoint_ns = '' "
                        "AND checkpoint_id = %s", (*self._key_args(key), checkpoint_id)).fetchone()
        if row is None:
            return None
        cp, meta = row
        versions = cp.get("channel_versions") if isinstance(cp, dict) and isinstance(cp.get("channel_versions"), dict) else {}
        extra: dict[str, object] = {}
        if versions:  # the channels holding a value; the tasks' and joins' values themselves (as read_run_rows)
            chans, vers = list(versions), [str(v) for v in versions.values()]
            for ch, type_, blob in c.execute(
                "SELECT b.channel, b.type, CASE WHEN b.channel = '__pregel_tasks' OR b.channel LIKE 'join:%%' THEN b.blob END "
                "FROM checkpoint_blobs b JOIN unnest(%s::text[], %s::text[]) AS w(ch, ver) ON b.channel = w.ch AND b.version = w.ver "
                f"WHERE {self._key_is('b.thread_id')} AND b.checkpoint_ns = ''", (chans, vers, *self._key_args(key))):
                if type_ != "empty":
                    extra[ch] = lean_loads(type_, bytes(blob)) if blob is not None else None
        return lean_from_mapping("", checkpoint_id, cp, meta, extra_values=extra)

    @_translate_errors
    def rewind_thread(self, key: str, target_id: str, head_id: str, *,
                      before_commit: Callable[[], None] | None = None) -> str:
        from langgraph.checkpoint.postgres import PostgresSaver

        from symfonic_cli.stores._rewind import copy_as_langgraph, moved, rewind_serializer

        if not self.writable:
            raise StoreError(f"{self.location.display} was opened read-only")
        c = self.conn
        with c.transaction():
            # No checkpoint of any thread is inserted from the check to the commit (milliseconds;
            # a wait for the lock is bounded by --lock-timeout): the check holds at the commit.
            c.execute("LOCK TABLE checkpoints IN SHARE ROW EXCLUSIVE MODE")
            row = c.execute(
                f"SELECT checkpoint_id FROM checkpoints WHERE {self._key_is()} AND checkpoint_ns = '' "
                'ORDER BY checkpoint_id COLLATE "C" DESC LIMIT 1', self._key_args(key)).fetchone()
            if row is None or row[0] != head_id:
                raise HeadMoved(moved(key, head_id, row[0] if row else None))
            found = c.execute(
                "SELECT coalesce(bool_or(b.type LIKE %s), false) FROM checkpoints c "
                "LEFT JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') v ON true "
                "LEFT JOIN checkpoint_blobs b ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns "
                "AND b.channel = v.key AND b.version = v.value "
                f"WHERE {self._key_is('c.thread_id')} AND c.checkpoint_ns = '' AND c.checkpoint_id = %s GROUP BY c.checkpoint_id",
                ("%+%", *self._key_args(key), target_id)).fetchone()
            if found is None:
                raise NotFoundError(f"thread '{key}' has no checkpoint '{target_id}' in the root namespace")
            # put writes the checkpoint row alone (no channel moved: no blob), with the saver's SQL.
            saver = PostgresSaver(c)
            saver.serde = rewind_serializer(bool(found[0]))
            new_id = copy_as_langgraph(saver, key, target_id)
            if before_commit is not None:
                before_commit()
        return new_id
