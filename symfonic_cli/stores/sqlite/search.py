"""SQLite stores: the threads whose latest root checkpoint may hold a text (threads search).

The byte test runs inside the query, on each thread's latest root checkpoint only: no blob
leaves SQLite unless its thread is a candidate."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from symfonic_cli.stores.sqlite._common import SqliteSection, _translate_iter
from symfonic_cli.threadkey import tenant_prefix

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class SqliteSearch(SqliteSection):
    """``search_candidates`` (stores/protocol.py, SearchProtocol)."""

    @_translate_iter
    def search_candidates(self, prefilter: Any, *, tenant: str | None = None, sub_tenant: str | None = None) -> Iterator[str]:
        from symfonic_cli.stores.sqlite.blobkeys import _key_text

        where = ""
        params: list[Any] = []
        if tenant is not None:
            cond, params = self._prefix_where(tenant_prefix(tenant, sub_tenant))
            where = "AND " + cond
        # One function of the connection makes the whole byte test: Python's bytes search is
        # faster than instr() here (benchmarks/bench_search.py), and the markers need a regex.
        stopped: list[BaseException] = []

        def may_match(blob: bytes) -> bool:
            try:
                return bool(prefilter.may_match("msgpack", blob, whole_checkpoint=True))
            except KeyboardInterrupt as exc:  # SQLite reports it as "user-defined function raised exception"
                stopped.append(exc)
                raise

        self.conn.create_function("symfonic_may_match", 1, may_match, deterministic=True)
        # The latest root checkpoint of each thread by the primary key; its blob tested only there.
        sql = (
            "SELECT m.thread_id FROM (SELECT thread_id, max(checkpoint_id) AS cid FROM checkpoints "
            f"WHERE checkpoint_ns = '' {where} GROUP BY thread_id COLLATE BINARY) m "
            f"JOIN checkpoints c ON {self._key_is('c.thread_id', 'm.thread_id')} AND c.checkpoint_ns = '' AND c.checkpoint_id = m.cid "
            "WHERE c.type IS NOT 'msgpack' OR symfonic_may_match(c.checkpoint)"
        )
        try:
            for (key,) in self.conn.execute(sql, params):
                yield _key_text(key)
        except sqlite3.Error:
            if stopped:  # Ctrl-C inside the byte test: an interruption (exit 130), not a store error
                raise KeyboardInterrupt from None
            raise
