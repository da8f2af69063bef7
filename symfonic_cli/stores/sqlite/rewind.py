"""SQLite stores: thread rewind's write (stores/_rewind.py), through SqliteSaver's own put."""

from __future__ import annotations

from collections.abc import Callable

from symfonic_cli.errors import HeadMoved, NotFoundError, StoreError
from symfonic_cli.stores.sqlite._common import SqliteSection, _json_metadata, _translate_errors

TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.model.run_state import LeanCheckpoint


class SqliteRewind(SqliteSection):
    """thread rewind (see RewindProtocol in stores/protocol_changes.py)."""

    @_translate_errors
    def rewind_target(self, key: str, checkpoint_id: str) -> LeanCheckpoint | None:
        from symfonic_cli.model.run_state import lean_from_blob

        row = self.conn.execute(
            f"SELECT type, checkpoint, metadata FROM checkpoints WHERE {self._key_is()} AND checkpoint_ns = '' AND checkpoint_id = ?",
            (*self._key_args(key), checkpoint_id)).fetchone()
        return None if row is None else lean_from_blob("", checkpoint_id, row[0], row[1], _json_metadata(row[2], checkpoint_id))

    @_translate_errors
    def rewind_thread(self, key: str, target_id: str, head_id: str, *,
                      before_commit: Callable[[], None] | None = None) -> str:
        from langgraph.checkpoint.sqlite import SqliteSaver

        from symfonic_cli.codec.cipher import is_encrypted
        from symfonic_cli.stores._rewind import copy_as_langgraph, moved, rewind_serializer
        from symfonic_cli.stores.sqlite.copy import _HeldTransaction

        if not self.writable:
            raise StoreError(f"{self.location.path} was opened read-only")
        # BEGIN IMMEDIATE: the file's one write lock, held from the check to the commit, so no
        # application can write the thread in between.
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            row = self.conn.execute(
                f"SELECT checkpoint_id FROM checkpoints WHERE {self._key_is()} AND checkpoint_ns = '' "
                "ORDER BY checkpoint_id DESC LIMIT 1", self._key_args(key)).fetchone()
            if row is None or row[0] != head_id:
                raise HeadMoved(moved(key, head_id, row[0] if row else None))
            target = self.conn.execute(
                f"SELECT type FROM checkpoints WHERE {self._key_is()} AND checkpoint_ns = '' AND checkpoint_id = ?",
                (*self._key_args(key), target_id)).fetchone()
            if target is None:
                raise NotFoundError(f"thread '{key}' has no checkpoint '{target_id}' in the root namespace")
            # The saver commits after every put; held, its insert joins our one transaction.
            saver = SqliteSaver(_HeldTransaction(self.conn))  # type: ignore[arg-type]
            saver.serde = rewind_serializer(is_encrypted(target[0]))
            saver.is_setup = True  # tables checked at open; setup() would commit (executescript)
            new_id = copy_as_langgraph(saver, key, target_id)
            if before_commit is not None:
                before_commit()
            self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        return new_id

