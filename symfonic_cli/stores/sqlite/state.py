"""SQLite stores: run state (thread show, threads list --status/--with-size): latest checkpoints, pending writes, sizes."""

from __future__ import annotations

from collections.abc import Iterator

from symfonic_cli.clock import joined_ordered

from symfonic_cli.stores.sqlite._common import (
    SqliteSection,
    _json_metadata,
    _plain,
    _translate_errors,
    _translate_iter,
)

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from symfonic_cli.model.run_state import ThreadRunState
    from symfonic_cli.model.run_state import ThreadRunRows


class SqliteState(SqliteSection):
    """Run state (thread show, threads list --status/--with-size): latest checkpoints, pending writes, sizes."""

    # -- run state (``thread show``, ``threads list --status/--with-size``; see stores/protocol.py)

    _RUN_LATEST = (
        "SELECT c.checkpoint_ns, c.checkpoint_id, c.type, c.checkpoint, c.metadata FROM checkpoints c "
        "WHERE {key} AND c.checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints "
        "WHERE {same} AND checkpoint_ns = c.checkpoint_ns) ORDER BY c.checkpoint_ns"
    )

    @_translate_errors
    def read_run_rows(self, key: str) -> "ThreadRunRows | None":
        from symfonic_cli.model.run_state import (
            RawWrite,
            ThreadRunRows,
            lean_from_blob,
        )

        n, namespaces, first, last, size = self.conn.execute(
            "SELECT count(*), count(DISTINCT checkpoint_ns), min(checkpoint_id), max(checkpoint_id), "
            f"coalesce(sum(length(checkpoint) + coalesce(length(metadata), 0)), 0) FROM checkpoints WHERE {self._key_is()}",
            self._key_args(key),
        ).fetchone()
        if not n:
            return None
        size += self.conn.execute(
            f"SELECT coalesce(sum(length(value)), 0) FROM writes WHERE {self._key_is()}", self._key_args(key)
        ).fetchone()[0]
        latest = [
            lean_from_blob(ns, cid, type_, blob, _json_metadata(meta, cid))
            for ns, cid, type_, blob, meta in self.conn.execute(
                self._RUN_LATEST.format(key=self._key_is("c.thread_id"), same=self._key_is("thread_id", "c.thread_id")), self._key_args(key))
        ]
        latest.sort(key=lambda c: (c.checkpoint_ns != "", c.checkpoint_ns))
        wanted = {(c.checkpoint_ns, c.checkpoint_id) for c in latest}
        writes = [
            RawWrite(ns, cid, task_id, task_path, idx, channel, type_, _plain(value))
            for ns, cid, task_id, idx, task_path, channel, type_, value in self.conn.execute(
                f"SELECT checkpoint_ns, checkpoint_id, task_id, idx, {self._writes_columns()} FROM writes "
                f"WHERE {self._key_is()} ORDER BY checkpoint_ns, checkpoint_id, task_id, idx",
                self._key_args(key),
            )
            if (ns, cid) in wanted
        ]
        return ThreadRunRows(latest, writes, n, namespaces, size, first, last)

    # Thread by thread, in key order, by index seeks (no pass over every checkpoint): the
    # latest root checkpoint by rowid with only the END of its blob (the version maps are the
    # blob's last fields), the number of its pending writes, their flags only when it has some.
    # A thread's totals (count, first and last id, size) are read only once its status is kept.
    _TAIL_BYTES = 1024
    _FLAGS = (
        "SELECT task_id, {path}, max(channel = '__interrupt__'), max(channel = '__error__'), "
        "max(channel NOT IN ('__interrupt__', '__error__', '__resume__', '__error_source_node__')) "
        "FROM writes WHERE {key} AND checkpoint_ns = '' AND checkpoint_id = ? GROUP BY task_id"
    )

    @_translate_iter
    def iter_run_states(
        self,
        *,
        prefix: str | None = None,
        with_size: bool = False,
        with_status: bool = True,
        statuses: "set[str] | None" = None,
        keys: "list[str] | None" = None,
        totals: bool = True,
    ) -> Iterator["ThreadRunState"]:
        where = ""
        params: list[Any] = []
        if keys is not None:
            if not keys:
                return
            # A listing's page (at most a few hundred keys): only those threads are read.
            # In bytes: the column's own "=" finds them, COLLATE BINARY keeps the exact keys (_key_is).
            cond = f"thread_id IN ({', '.join('?' * len(keys))})"
            if self.keys_folded:
                cond = f"{cond} AND thread_id COLLATE BINARY IN ({', '.join('?' * len(keys))})"
            params = list(keys) * (2 if self.keys_folded else 1)
            where = f"AND {cond}"
        elif prefix:
            cond, params = self._prefix_where(prefix)
            where = f"AND {cond}"
        if not with_status:
            summary = self.conn.execute(
                "SELECT thread_id, count(*), min(checkpoint_id), max(checkpoint_id), group_concat(checkpoint_id, ','), "
                + ("sum(length(checkpoint) + coalesce(length(metadata), 0)) " if with_size else "0 ")
                + f"FROM checkpoints WHERE 1 {where} GROUP BY thread_id COLLATE BINARY ORDER BY thread_id COLLATE BINARY",
                params,
            )
            write_sizes = None
            if with_size:
                write_sizes = self.conn.cursor().execute(
                    f"SELECT thread_id, sum(length(value)) FROM writes WHERE 1 {where} GROUP BY thread_id COLLATE BINARY "
                    "ORDER BY thread_id COLLATE BINARY", params
                )
            nxt_size = next(write_sizes, None) if write_sizes is not None else None
            for key, n, first, last, joined, size in summary:
                if write_sizes is not None:
                    while nxt_size is not None and nxt_size[0] < key:
                        nxt_size = next(write_sizes, None)
                    if nxt_size is not None and nxt_size[0] == key:
                        size += nxt_size[1] or 0
                        nxt_size = next(write_sizes, None)
                yield _run_state(key, n, first, last, joined, None, size if with_size else None)
            return
        from symfonic_cli.model.run_status import status_without_writes

        if keys is not None:
            threads = f"t(tid) AS (VALUES {', '.join(['(?)'] * len(keys))})"
            params = list(keys)  # each key once (the CTE's join compares them in bytes)
        elif prefix or self.keys_folded:
            # The key range (or the non-UTF-8 test) in one ordered pass over the index; every key of
            # a file whose collation folds keys (its index's order is not byte order).
            threads = (f"t(tid) AS (SELECT thread_id FROM checkpoints WHERE {cond if prefix else 1} "
                       "GROUP BY thread_id COLLATE BINARY ORDER BY thread_id COLLATE BINARY)")
        else:
            # Every key, each found by one seek past the previous one.
            threads = (
                "t(tid) AS (SELECT (SELECT min(thread_id) FROM checkpoints) UNION ALL "
                "SELECT (SELECT min(thread_id) FROM checkpoints WHERE thread_id > t.tid) FROM t WHERE t.tid IS NOT NULL)"
            )
        rows = self.conn.cursor().execute(
            f"WITH RECURSIVE {threads} "
            "SELECT t.tid, c.checkpoint_id, c.rowid, c.type, length(c.checkpoint), substr(c.checkpoint, 1, 4), "
            f"substr(c.checkpoint, -?), (SELECT count(*) FROM writes w WHERE {self._key_is('w.thread_id', 't.tid')} "
            "AND w.checkpoint_ns = '' AND w.checkpoint_id = c.checkpoint_id) "
            "FROM t LEFT JOIN checkpoints c ON c.rowid = (SELECT rowid FROM checkpoints x "
            f"WHERE {self._key_is('x.thread_id', 't.tid')} AND x.checkpoint_ns = '' ORDER BY x.checkpoint_id DESC LIMIT 1) "
            "WHERE t.tid IS NOT NULL",
            [*params, self._TAIL_BYTES],
        )
        # A thread's totals, its ids joined (clock.joined_ordered: activity from its min and max ids
        # only when every id is in the ordered form; else None, decided checkpoint by checkpoint).
        totals_sql = (
            "SELECT count(*), min(checkpoint_id), max(checkpoint_id), group_concat(checkpoint_id, ',')"
            + (", sum(length(checkpoint) + coalesce(length(metadata), 0)), "
               f"(SELECT coalesce(sum(length(value)), 0) FROM writes WHERE {self._key_is(value='?1')}) " if with_size else " ")
            + f"FROM checkpoints WHERE {self._key_is(value='?1')}"
        )
        from symfonic_cli.model.thread_row import ThreadRunState

        page = not (totals or with_size)  # a listing's page: its count and ids are the listing's
        for key, cid, rowid, type_, length, head, tail, n_writes in rows:
            status = None
            if rowid is not None:
                # No pending writes and a msgpack blob: the tail alone decides, in the common case.
                if n_writes or type_ != "msgpack" or (status := status_without_writes(head, tail, length)) is None:
                    status = self._root_status(key, cid, rowid, type_, length, head, tail, n_writes)
            if statuses is not None and status not in statuses:
                continue
            if page:  # _run_state's row of no ids (one per listed thread: built here)
                yield ThreadRunState(str(key), 0, None, None, status, None, None, None, False, True)
                continue
            n, first, last, joined, *size = self.conn.execute(totals_sql, (key,)).fetchone()
            yield _run_state(key, n, first, last, joined, status, (size[0] or 0) + size[1] if with_size else None)

    def _root_status(self, key, cid, rowid, type_, length, head, tail, n_writes) -> str:
        from symfonic_cli.model.run_status import status_from_tail

        task_flags = {}
        if n_writes:
            flags_sql = self._FLAGS.format(path="max(task_path)" if self.has_task_path else "NULL", key=self._key_is())
            for tid, path, itr, err, out in self.conn.execute(flags_sql, (*self._key_args(key), cid)):
                task_flags[tid] = (path, bool(itr), bool(err), bool(out))
        return status_from_tail(
            cid,
            # read only when task ids are needed (writes to match to tasks)
            lambda: self.conn.execute(
                "SELECT json_extract(CAST(metadata AS TEXT), '$.step') FROM checkpoints WHERE rowid = ?", (rowid,)
            ).fetchone()[0],
            type_, head, tail, length, task_flags,
            whole=lambda: self.conn.execute(
                "SELECT type, checkpoint, metadata FROM checkpoints WHERE rowid = ?", (rowid,)
            ).fetchone(),
            more=lambda n: self.conn.execute(
                "SELECT substr(checkpoint, -?) FROM checkpoints WHERE rowid = ?", (n, rowid)
            ).fetchone()[0],
        )


def _run_state(key: object, n: int, first: object, last: object, joined: object, status: str | None,
               size: int | None) -> "ThreadRunState":
    from symfonic_cli.model.thread_row import told_run_state

    return told_run_state(str(key), n, first, last, not joined_ordered(joined, n), status, size)

