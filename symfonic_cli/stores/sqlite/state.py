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

    # The latest root checkpoint of every thread with the end of its blob from the channel_versions
    # key on (``instr`` finds it without leaving SQLite), and the version maps decoded from there.
    _VERSIONS_KEY = b"\xb0channel_versions"

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
        summary = self.conn.execute(
            "SELECT thread_id, count(*), min(checkpoint_id), max(checkpoint_id), "
            + ("sum(length(checkpoint) + coalesce(length(metadata), 0)) " if with_size else "0 ")
            + f"FROM checkpoints WHERE 1 {where} GROUP BY thread_id ORDER BY thread_id",
            params,
        )
        if not with_status:
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
        latest = self.conn.cursor().execute(
            "SELECT c.thread_id, c.checkpoint_id, json_extract(CAST(c.metadata AS TEXT), '$.step'), c.type, substr(c.checkpoint, 1, 4), "
            "substr(c.checkpoint, instr(c.checkpoint, ?)), length(c.checkpoint), c.rowid "
            "FROM (SELECT thread_id, max(checkpoint_id) AS cid FROM checkpoints "
            f"WHERE checkpoint_ns = '' {where} GROUP BY thread_id) AS l "
            "JOIN checkpoints c ON c.thread_id = l.thread_id AND c.checkpoint_ns = '' AND c.checkpoint_id = l.cid "
            "ORDER BY c.thread_id",
            [self._VERSIONS_KEY, *params],
        )
        flags = self.conn.cursor().execute(
            "SELECT w.thread_id, w.task_id, max(w.task_path), max(w.channel = '__interrupt__'), max(w.channel = '__error__'), "
            "max(w.channel NOT IN ('__interrupt__', '__error__', '__resume__', '__error_source_node__')) "
            "FROM (SELECT thread_id, max(checkpoint_id) AS cid FROM checkpoints "
            f"WHERE checkpoint_ns = '' {where} GROUP BY thread_id) AS l "
            "JOIN writes w ON w.thread_id = l.thread_id AND w.checkpoint_ns = '' AND w.checkpoint_id = l.cid "
            "GROUP BY w.thread_id, w.task_id ORDER BY w.thread_id"
            if self.has_task_path else
            "SELECT w.thread_id, w.task_id, NULL, max(w.channel = '__interrupt__'), max(w.channel = '__error__'), "
            "max(w.channel NOT IN ('__interrupt__', '__error__', '__resume__', '__error_source_node__')) "
            "FROM (SELECT thread_id, max(checkpoint_id) AS cid FROM checkpoints "
            f"WHERE checkpoint_ns = '' {where} GROUP BY thread_id) AS l "
            "JOIN writes w ON w.thread_id = l.thread_id AND w.checkpoint_ns = '' AND w.checkpoint_id = l.cid "
            "GROUP BY w.thread_id, w.task_id ORDER BY w.thread_id",
            params,
        )
        write_sizes = None
        if with_size:
            write_sizes = self.conn.cursor().execute(
                f"SELECT thread_id, sum(length(value)) FROM writes WHERE 1 {where} GROUP BY thread_id ORDER BY thread_id", params
            )
        # Four cursors in thread_id order, merged: one thread in memory at a time.
        nxt_latest = next(latest, None)
        nxt_flag = next(flags, None)
        nxt_size = next(write_sizes, None) if write_sizes is not None else None
        for key, n, first, last, size in summary:
            while nxt_latest is not None and nxt_latest[0] < key:
                nxt_latest = next(latest, None)
            row = None
            if nxt_latest is not None and nxt_latest[0] == key:
                row, nxt_latest = nxt_latest, next(latest, None)
            task_flags = {}
            while nxt_flag is not None and nxt_flag[0] <= key:
                if nxt_flag[0] == key:
                    task_flags[nxt_flag[1]] = (nxt_flag[2], bool(nxt_flag[3]), bool(nxt_flag[4]), bool(nxt_flag[5]))
                nxt_flag = next(flags, None)
            if write_sizes is not None:
                while nxt_size is not None and nxt_size[0] < key:
                    nxt_size = next(write_sizes, None)
                if nxt_size is not None and nxt_size[0] == key:
                    size += nxt_size[1] or 0
                    nxt_size = next(write_sizes, None)
            status = None
            if row is not None:
                _, cid, step, type_, head, tail, length, rowid = row
                status = status_from_tail(
                    cid, step, type_, head, tail, length, task_flags,
                    whole=lambda rowid=rowid: self.conn.execute(
                        "SELECT type, checkpoint, metadata FROM checkpoints WHERE rowid = ?", (rowid,)
                    ).fetchone(),
                )
            yield ThreadRunState(str(key), n, first, last, status, size if with_size else None)
