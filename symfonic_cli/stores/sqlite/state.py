"""SQLite stores: run state (thread show, threads list --status/--with-size): latest checkpoints, pending writes, sizes."""

from __future__ import annotations

from collections.abc import Iterator

from symfonic_cli.stores.sqlite._common import (
    _json_metadata,
    _plain,
    _translate_errors,
    _translate_iter,
)

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.model.run_state import ThreadRunState
    from symfonic_cli.model.run_state import ThreadRunRows


class SqliteState:
    """Run state (thread show, threads list --status/--with-size): latest checkpoints, pending writes, sizes."""

    # -- run state (``thread show``, ``threads list --status/--with-size``; see stores/protocol.py)

    _RUN_LATEST = (
        "SELECT c.checkpoint_ns, c.checkpoint_id, c.type, c.checkpoint, c.metadata FROM checkpoints c "
        "WHERE c.thread_id = ? AND c.checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints "
        "WHERE thread_id = c.thread_id AND checkpoint_ns = c.checkpoint_ns) ORDER BY c.checkpoint_ns"
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
            "coalesce(sum(length(checkpoint) + coalesce(length(metadata), 0)), 0) FROM checkpoints WHERE thread_id = ?",
            (key,),
        ).fetchone()
        if not n:
            return None
        size += self.conn.execute(
            "SELECT coalesce(sum(length(value)), 0) FROM writes WHERE thread_id = ?", (key,)
        ).fetchone()[0]
        latest = [
            lean_from_blob(ns, cid, type_, blob, _json_metadata(meta, cid))
            for ns, cid, type_, blob, meta in self.conn.execute(self._RUN_LATEST, (key,))
        ]
        latest.sort(key=lambda c: (c.checkpoint_ns != "", c.checkpoint_ns))
        wanted = {(c.checkpoint_ns, c.checkpoint_id) for c in latest}
        writes = [
            RawWrite(ns, cid, task_id, task_path, idx, channel, type_, _plain(value))
            for ns, cid, task_id, idx, task_path, channel, type_, value in self.conn.execute(
                f"SELECT checkpoint_ns, checkpoint_id, task_id, idx, {self._writes_columns()} FROM writes "
                "WHERE thread_id = ? ORDER BY checkpoint_ns, checkpoint_id, task_id, idx",
                (key,),
            )
            if (ns, cid) in wanted
        ]
        return ThreadRunRows(latest, writes, n, namespaces, size, first, last)

    # One pass over the primary key gives every thread's count, first/last id and latest root id;
    # its latest root checkpoint is then looked up by key with only the END of its blob (the
    # version maps are the blob's last fields), and its pending writes only when it has any.
    _TAIL_BYTES = 1024

    @_translate_iter
    def iter_run_states(
        self, *, prefix: str | None = None, with_size: bool = False, with_status: bool = True
    ) -> Iterator["ThreadRunState"]:
        from symfonic_cli.model.run_state import ThreadRunState
        from symfonic_cli.model.run_status import status_from_tail

        where, params = "", []
        if prefix:
            cond, params = self._prefix_where(prefix)
            where = f"AND {cond}"
        if not with_status:
            summary = self.conn.execute(
                "SELECT thread_id, count(*), min(checkpoint_id), max(checkpoint_id), "
                + ("sum(length(checkpoint) + coalesce(length(metadata), 0)) " if with_size else "0 ")
                + f"FROM checkpoints WHERE 1 {where} GROUP BY thread_id ORDER BY thread_id",
                params,
            )
            write_sizes = None
            if with_size:
                write_sizes = self.conn.cursor().execute(
                    f"SELECT thread_id, sum(length(value)) FROM writes WHERE 1 {where} GROUP BY thread_id ORDER BY thread_id", params
                )
            nxt_size = next(write_sizes, None) if write_sizes is not None else None
            for key, n, first, last, size in summary:
                if write_sizes is not None:
                    while nxt_size is not None and nxt_size[0] < key:
                        nxt_size = next(write_sizes, None)
                    if nxt_size is not None and nxt_size[0] == key:
                        size += nxt_size[1] or 0
                        nxt_size = next(write_sizes, None)
                yield ThreadRunState(str(key), n, first, last, None, size if with_size else None)
            return
        flags_sql = (
            "SELECT task_id, max(task_path), max(channel = '__interrupt__'), max(channel = '__error__'), "
            "max(channel NOT IN ('__interrupt__', '__error__', '__resume__', '__error_source_node__')) "
            "FROM writes WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ? GROUP BY task_id"
            if self.has_task_path else
            "SELECT task_id, NULL, max(channel = '__interrupt__'), max(channel = '__error__'), "
            "max(channel NOT IN ('__interrupt__', '__error__', '__resume__', '__error_source_node__')) "
            "FROM writes WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ? GROUP BY task_id"
        )
        rows = self.conn.cursor().execute(
            "SELECT s.thread_id, s.n, s.first, s.last, s.size, s.rcid, c.rowid, c.type, "
            "json_extract(CAST(c.metadata AS TEXT), '$.step'), length(c.checkpoint), substr(c.checkpoint, 1, 4), "
            "substr(c.checkpoint, -?), "
            "(SELECT count(*) FROM writes w WHERE w.thread_id = s.thread_id AND w.checkpoint_ns = '' AND w.checkpoint_id = s.rcid)"
            + (", (SELECT sum(length(value)) FROM writes w WHERE w.thread_id = s.thread_id) " if with_size else ", 0 ")
            + "FROM (SELECT thread_id, count(*) AS n, min(checkpoint_id) AS first, max(checkpoint_id) AS last, "
            + ("sum(length(checkpoint) + coalesce(length(metadata), 0)) AS size, " if with_size else "0 AS size, ")
            + "max(CASE WHEN checkpoint_ns = '' THEN checkpoint_id END) AS rcid "
            f"FROM checkpoints WHERE 1 {where} GROUP BY thread_id) AS s "
            "LEFT JOIN checkpoints c ON c.thread_id = s.thread_id AND c.checkpoint_ns = '' AND c.checkpoint_id = s.rcid",
            [self._TAIL_BYTES, *params],
        )
        for key, n, first, last, size, cid, rowid, type_, step, length, head, tail, n_writes, write_size in rows:
            status = None
            if rowid is not None:
                task_flags = {}
                if n_writes:
                    for tid, path, itr, err, out in self.conn.execute(flags_sql, (key, cid)):
                        task_flags[tid] = (path, bool(itr), bool(err), bool(out))
                status = status_from_tail(
                    cid, step, type_, head, tail, length, task_flags,
                    whole=lambda rowid=rowid: self.conn.execute(
                        "SELECT type, checkpoint, metadata FROM checkpoints WHERE rowid = ?", (rowid,)
                    ).fetchone(),
                    more=lambda n, rowid=rowid: self.conn.execute(
                        "SELECT substr(checkpoint, -?) FROM checkpoints WHERE rowid = ?", (n, rowid)
                    ).fetchone()[0],
                )
            if with_size:
                size += write_size or 0
            yield ThreadRunState(str(key), n, first, last, status, size if with_size else None)
