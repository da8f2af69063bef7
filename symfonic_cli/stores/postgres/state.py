"""PostgreSQL stores: run state (thread show, threads list --status/--with-size): latest checkpoints, pending writes, sizes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from symfonic_cli.clock import joined_ordered
from symfonic_cli.errors import StoreError
from symfonic_cli.stores.postgres._common import (
    ITERSIZE,
    PostgresSection,
    _bytes,
    _translate_errors,
    _translate_iter,
    byte_order,
)

# A thread's ids in one text, tested here by clock.joined_ordered (no regex per row in the server).
_JOINED_IDS = "string_agg(checkpoint_id, ',')"

# status_from_maps's answer when the version maps cannot decide: the thread waits for a batch.
class _Undecided:
    """The version maps cannot decide a thread's status: its root checkpoint is read."""


_UNDECIDED = _Undecided()


def _undecided() -> _Undecided:
    return _UNDECIDED


# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.model.run_state import ThreadRunState
    from symfonic_cli.model.run_state import ThreadRunRows


class PostgresState(PostgresSection):
    """Run state (thread show, threads list --status/--with-size): latest checkpoints, pending writes, sizes."""

    # -- run state (``thread show``; see stores/protocol.py): channel presence from the JSONB and
    # the blobs of the versions the checkpoint names; only Sends and join sets are decoded

    @_translate_errors
    def read_run_rows(self, key: str) -> "ThreadRunRows | None":
        from symfonic_cli.codec.msgpack_head import NeedMore, channel_blob_count
        from symfonic_cli.codec.strict import lean_loads
        from symfonic_cli.model.run_state import (
            RawWrite,
            ThreadRunRows,
            lean_from_mapping,
        )

        c = self.conn
        n, namespaces, first, last, size = c.execute(
            "SELECT count(*), count(DISTINCT checkpoint_ns), min(checkpoint_id COLLATE \"C\"), max(checkpoint_id COLLATE \"C\"), "
            "coalesce(sum(pg_column_size(checkpoint) + coalesce(pg_column_size(metadata), 0)), 0) FROM checkpoints WHERE " + self._key_is(),
            self._key_args(key),
        ).fetchone()
        if not n:
            return None
        size += c.execute(
            "SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_blobs WHERE " + self._key_is(), self._key_args(key)
        ).fetchone()[0]
        size += c.execute(
            "SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_writes WHERE " + self._key_is(), self._key_args(key)
        ).fetchone()[0]
        latest_sql = (
            'SELECT DISTINCT ON (checkpoint_ns COLLATE "C") checkpoint_ns, checkpoint_id, checkpoint, metadata '
            f'FROM checkpoints WHERE {self._key_is()} ORDER BY checkpoint_ns COLLATE "C", checkpoint_id COLLATE "C" DESC'
        )
        try:
            latest_rows = c.execute(latest_sql, self._key_args(key)).fetchall()
        except (ValueError, RecursionError) as exc:
            # psycopg decodes JSONB with Python's json: an integer too long, nesting too deep.
            ids = [r[0] for r in c.execute(latest_sql.replace("checkpoint_ns, checkpoint_id, checkpoint, metadata", "checkpoint_id"), self._key_args(key))]
            raise StoreError(
                f"checkpoint {' or '.join(ids)} of thread '{key}' cannot be decoded ({type(exc).__name__}: {str(exc)[:100]})"
            ) from None
        wanted = [
            (ns, ch, str(ver))
            for ns, _cid, cp, _meta in latest_rows if isinstance(cp, dict) and isinstance(cp.get("channel_versions"), dict)
            for ch, ver in cp["channel_versions"].items()
        ]
        blobs: dict[tuple[str, str], Any] = {}
        message_counts: dict[str, int | None] = {}
        if wanted:
            for ns, ch, type_, blob, head in c.execute(
                "SELECT b.checkpoint_ns, b.channel, b.type, "
                "CASE WHEN b.channel = '__pregel_tasks' OR b.channel LIKE 'join:%%' THEN b.blob END, "
                "CASE WHEN b.channel = 'messages' THEN CASE WHEN b.type LIKE '%%+%%' THEN b.blob "
                "ELSE substring(b.blob from 1 for 9) END END "
                "FROM checkpoint_blobs b JOIN unnest(%s::text[], %s::text[], %s::text[]) AS w(ns, ch, ver) "
                "ON b.checkpoint_ns = w.ns AND b.channel = w.ch AND b.version = w.ver WHERE " + self._key_is("b.thread_id"),
                ([w[0] for w in wanted], [w[1] for w in wanted], [w[2] for w in wanted], *self._key_args(key)),
            ):
                if type_ == "empty":
                    continue
                value = lean_loads(type_, bytes(blob)) if blob is not None else None
                blobs[(ns, ch)] = value
                if ch == "messages":
                    if head is not None and "+" in type_:  # encrypted: the whole blob, decrypted
                        from symfonic_cli.codec.cipher import decrypt

                        try:
                            type_, head = decrypt(type_, bytes(head), what=f"channel 'messages' of checkpoint in ns '{ns}'")
                        except StoreError:
                            type_, head = None, None
                    try:
                        message_counts[ns] = channel_blob_count(bytes(head)) if head is not None and type_ == "msgpack" else None
                    except (NeedMore, ValueError):
                        message_counts[ns] = None
        latest = []
        for ns, cid, cp, meta in latest_rows:
            extra = {ch: v for (bns, ch), v in blobs.items() if bns == ns}
            lean = lean_from_mapping(ns, cid, cp, meta, extra_values=extra)
            if ns in message_counts:
                lean.messages = message_counts[ns]
            latest.append(lean)
        latest.sort(key=lambda lean: (lean.checkpoint_ns != "", lean.checkpoint_ns))
        keep = {(lean.checkpoint_ns, lean.checkpoint_id) for lean in latest}
        writes = [
            RawWrite(ns, cid, task_id, task_path, idx, channel, type_, _bytes(blob))
            for ns, cid, task_id, idx, task_path, channel, type_, blob in c.execute(
                "SELECT checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, "
                "CASE WHEN channel IN ('__interrupt__', '__error__') THEN blob END FROM checkpoint_writes "
                f'WHERE {self._key_is()} ORDER BY checkpoint_ns COLLATE "C", checkpoint_id COLLATE "C", task_id COLLATE "C", idx',
                self._key_args(key),
            )
            if (ns, cid) in keep
        ]
        return ThreadRunRows(latest, writes, n, namespaces, size, first, last)

    @_translate_iter
    def iter_run_states(
        self,
        *,
        prefix: str | None = None,
        with_size: bool = False,
        with_status: bool = True,
        statuses: "set[str] | None" = None,
    ) -> Iterator["ThreadRunState"]:
        """Aggregates in the server, streamed and merged here; the version maps are read as JSONB,
        never a blob (``model.run_status``)."""
        exact, ids_in_byte_order = self._run_state_collations()
        if with_status and exact:
            yield from self._indexed_run_states(prefix, with_size, statuses, ids_in_byte_order)
            return
        yield from self._merged_run_states(prefix, with_size, with_status)

    def _run_state_collations(self) -> tuple[bool, bool]:
        """Whether the key columns compare exactly (deterministic collations: "=" and GROUP BY
        tell every key apart), and whether the checkpoint ids sort in byte order (the primary
        key then serves "the latest id of a thread")."""
        rows = self.conn.execute(
            "SELECT a.attrelid = 'checkpoints'::regclass AND a.attname = 'checkpoint_id', to_jsonb(k), "
            "(SELECT to_jsonb(d) FROM pg_database d WHERE d.datname = current_database()) "
            "FROM pg_attribute a JOIN pg_collation k ON k.oid = a.attcollation "
            "WHERE a.attrelid IN ('checkpoints'::regclass, 'checkpoint_writes'::regclass, 'checkpoint_blobs'::regclass) "
            "AND a.attname IN ('thread_id', 'checkpoint_ns', 'checkpoint_id') AND NOT a.attisdropped"
        ).fetchall()
        exact = all(str(coll.get("collisdeterministic", True)).lower() != "false" for _, coll, _ in rows)
        ids = [(coll, db) for is_id, coll, db in rows if is_id]
        return exact, bool(ids) and byte_order(*ids[0])

    # Thread by thread by index probes, never a sort of every checkpoint: each key found by one
    # seek past the previous one, its latest root checkpoint (the primary key read backwards,
    # or the thread's few root ids sorted bytewise when the id column's collation is not byte
    # order), the flags of that checkpoint's pending writes per task (none for most threads).
    # The version maps come as one JSON text decoded here (psycopg's JSONB loader costs three
    # times as much for three columns). Counts, first and last ids and sizes are read
    # afterwards, in batches, only for the threads kept.
    _LATEST_ROOT = (
        "WITH RECURSIVE t(thread_id) AS (SELECT min(thread_id) FROM checkpoints WHERE {cond} UNION ALL "
        "SELECT (SELECT min(thread_id) FROM checkpoints WHERE thread_id > t.thread_id AND {cond}) FROM t WHERE t.thread_id IS NOT NULL) "
        "SELECT t.thread_id, l.checkpoint_id, jsonb_build_array(l.metadata -> 'step', l.checkpoint -> 'v', "
        "l.checkpoint -> 'channel_versions', l.checkpoint -> 'versions_seen', l.checkpoint -> 'updated_channels')::text, "
        "f.tasks, f.paths, f.interrupts, f.errors, f.outputs FROM t "
        "LEFT JOIN LATERAL (SELECT x.checkpoint_id, x.checkpoint, x.metadata FROM checkpoints x "
        "WHERE x.thread_id = t.thread_id AND x.checkpoint_ns = '' ORDER BY x.checkpoint_id{collate} DESC LIMIT 1) AS l ON true "
        "LEFT JOIN LATERAL (SELECT array_agg(s.task_id) AS tasks, array_agg(s.path) AS paths, array_agg(s.i) AS interrupts, "
        "array_agg(s.e) AS errors, array_agg(s.o) AS outputs FROM (SELECT w.task_id, max(w.task_path) AS path, "
        "bool_or(w.channel = '__interrupt__') AS i, bool_or(w.channel = '__error__') AS e, "
        "bool_or(w.channel NOT IN ('__interrupt__', '__error__', '__resume__', '__error_source_node__')) AS o "
        "FROM checkpoint_writes w WHERE w.thread_id = t.thread_id AND w.checkpoint_ns = '' AND w.checkpoint_id = l.checkpoint_id "
        "GROUP BY w.task_id) AS s) AS f ON l.checkpoint_id IS NOT NULL "
        "WHERE t.thread_id IS NOT NULL"
    )

    def _indexed_run_states(self, prefix: str | None, with_size: bool, statuses: set[str] | None,
                            ids_in_byte_order: bool) -> Iterator["ThreadRunState"]:
        import json

        from symfonic_cli.model.run_status import status_from_maps

        cond = "true"

        params: list[Any] = []
        if prefix:
            where, params = self._prefix_where(prefix)
            cond = where.removeprefix("WHERE ")
        sql = self._LATEST_ROOT.format(cond=cond, collate="" if ids_in_byte_order else ' COLLATE "C"')
        with self.conn.transaction():
            # The estimated cost of the probes (one per thread) would compile them to machine
            # code, which takes longer than running them.
            self.conn.execute("SET LOCAL jit = off")
            self._cursors += 1
            with self.conn.cursor(name=f"symfonic_{self._cursors}") as cur:
                cur.itersize = ITERSIZE
                cur.execute(sql, [*params, *params])
                kept: list[tuple[str, str | None]] = []
                # Threads whose version maps cannot decide (pending Sends): their root checkpoints
                # are read a batch at a time (a fan-out store has thousands).
                undecided: list[tuple[str, str, dict]] = []
                for key, cid, maps, tasks, paths, interrupts, errors, outputs in cur:
                    key = str(key)
                    status: str | None = None
                    if cid is not None:
                        task_flags = {}
                        for i, tid in enumerate(tasks or ()):
                            task_flags[str(tid)] = (paths[i], bool(interrupts[i]), bool(errors[i]), bool(outputs[i]))
                        try:
                            step, v, versions, seen, updated = json.loads(maps)
                        except (ValueError, RecursionError):
                            found: str | _Undecided = _UNDECIDED  # too deep for Python's json: read_run_rows says which checkpoint
                        else:
                            found = status_from_maps(cid, step, v, versions, seen, updated, task_flags, whole=_undecided)
                        if isinstance(found, _Undecided):
                            undecided.append((key, cid, task_flags))
                            if len(undecided) >= ITERSIZE:
                                kept.extend(self._decide(undecided, statuses))
                                undecided = []
                            continue
                        status = found
                    if statuses is not None and status not in statuses:
                        continue
                    kept.append((key, status))
                    if len(kept) >= ITERSIZE:
                        yield from self._with_totals(kept, with_size)
                        kept = []
                kept.extend(self._decide(undecided, statuses))
                yield from self._with_totals(kept, with_size)

    def _decide(self, undecided: list[tuple[str, str, dict]], statuses: set[str] | None) -> list[tuple[str, str | None]]:
        from symfonic_cli.model.run_status import root_status

        rows = self._root_run_rows(undecided)
        out = []
        for key, _cid, task_flags in undecided:
            run_rows = rows.get(key) or self.read_run_rows(key)
            status = root_status(run_rows, task_flags) if run_rows is not None else None  # erased meanwhile
            if statuses is None or status in statuses:
                out.append((key, status))
        return out

    def _root_run_rows(self, threads: list[tuple[str, str, dict]]) -> "dict[str, ThreadRunRows]":
        """What ``root_status`` reads of ``read_run_rows`` (the root checkpoint, with the channels
        whose blobs exist and its Sends and join sets decoded), for (key, checkpoint id) pairs,
        in two queries; a key missing from the answer is read by ``read_run_rows``."""
        from symfonic_cli.codec.strict import lean_loads
        from symfonic_cli.model.run_state import ThreadRunRows, lean_from_mapping

        if not threads:
            return {}
        c = self.conn
        try:
            found = c.execute(
                "SELECT c.thread_id, c.checkpoint_id, c.checkpoint, c.metadata FROM checkpoints c "
                "JOIN unnest(%s::text[], %s::text[]) AS w(k, id) ON c.thread_id = w.k AND c.checkpoint_ns = '' AND c.checkpoint_id = w.id",
                ([t[0] for t in threads], [t[1] for t in threads]),
            ).fetchall()
        except (ValueError, RecursionError):
            return {}  # JSONB Python cannot decode: read_run_rows says which checkpoint
        wanted = [
            (str(k), ch, str(ver))
            for k, _cid, cp, _meta in found if isinstance(cp, dict) and isinstance(cp.get("channel_versions"), dict)
            for ch, ver in cp["channel_versions"].items()
        ]
        extra: dict[str, dict[str, Any]] = {}
        if wanted:
            for k, ch, type_, blob in c.execute(
                "SELECT b.thread_id, b.channel, b.type, CASE WHEN b.channel = '__pregel_tasks' OR b.channel LIKE 'join:%%' THEN b.blob END "
                "FROM checkpoint_blobs b JOIN unnest(%s::text[], %s::text[], %s::text[]) AS w(k, ch, ver) "
                "ON b.thread_id = w.k AND b.checkpoint_ns = '' AND b.channel = w.ch AND b.version = w.ver",
                ([w[0] for w in wanted], [w[1] for w in wanted], [w[2] for w in wanted]),
            ):
                if type_ != "empty":
                    extra.setdefault(str(k), {})[ch] = lean_loads(type_, bytes(blob)) if blob is not None else None
        return {
            str(k): ThreadRunRows([lean_from_mapping("", cid, cp, meta, extra_values=extra.get(str(k)))], [], 1, 1, 0, cid, cid)
            for k, cid, cp, meta in found
        }

    def _with_totals(self, kept: list[tuple[str, str | None]], with_size: bool) -> Iterator["ThreadRunState"]:
        """The kept threads with their counts, first and last ids (and sizes), a batch at a time."""
        from symfonic_cli.model.thread_row import told_run_state

        if not kept:
            return
        keys = [k for k, _ in kept]
        size_sql = "sum(pg_column_size(checkpoint) + coalesce(pg_column_size(metadata), 0))" if with_size else "0"
        totals = {
            str(k): (n, first, last, int(size or 0), not joined_ordered(ids, n))
            for k, n, first, last, size, ids in self.conn.execute(
                f'SELECT thread_id, count(*), min(checkpoint_id COLLATE "C"), max(checkpoint_id COLLATE "C"), {size_sql}, {_JOINED_IDS} '
                "FROM checkpoints WHERE thread_id = ANY(%s) GROUP BY thread_id",
                (keys,),
            )
        }
        extra: dict[str, int] = {}
        if with_size:
            for table in ("checkpoint_blobs", "checkpoint_writes"):
                for k, size in self.conn.execute(
                    f"SELECT thread_id, sum(octet_length(blob)) FROM {table} WHERE thread_id = ANY(%s) GROUP BY thread_id", (keys,)
                ):
                    extra[str(k)] = extra.get(str(k), 0) + int(size or 0)
        for key, status in kept:
            if key not in totals:
                continue  # erased since the listing's query read it
            n, first, last, size, odd = totals[key]
            yield told_run_state(key, n, first, last, odd, status, size + extra.get(key, 0) if with_size else None)

    def _merged_run_states(self, prefix: str | None, with_size: bool, with_status: bool) -> Iterator["ThreadRunState"]:
        """Per-thread aggregates of each table, streamed in one key order and merged here (also the
        status when a nondeterministic collation makes "=" match other keys: compared bytewise)."""
        from symfonic_cli.model.run_state import ThreadRunState
        from symfonic_cli.model.run_status import root_status, status_from_maps

        where = ""

        params: list[Any] = []
        if prefix:
            cond, params = self._prefix_where(prefix)
            where = "AND " + cond.removeprefix("WHERE ")
        # Under a byte-order collation the primary key's order is the merge order (no sort of
        # every checkpoint); under any other, bytes are asked for, as Python compares keys.
        # (Grouped in bytes too: a nondeterministic collation's GROUP BY folds keys together.)
        bytewise = "" if self._c_collation else ' COLLATE "C"'
        order = "GROUP BY 1 ORDER BY 1"
        size_sql = "sum(pg_column_size(checkpoint) + coalesce(pg_column_size(metadata), 0))" if with_size else "0"
        queries = [(
            f'SELECT thread_id{bytewise}, count(*), min(checkpoint_id COLLATE "C"), max(checkpoint_id COLLATE "C"), {size_sql}, {_JOINED_IDS} '
            f"FROM checkpoints WHERE true {where} {order}", params,
        )]
        if with_size:
            for table in ("checkpoint_blobs", "checkpoint_writes"):
                queries.append((
                    f"SELECT thread_id{bytewise}, sum(octet_length(blob)) FROM {table} WHERE true {where} {order}", params,
                ))
        latest_sql = (
            'SELECT DISTINCT ON (thread_id COLLATE "C") thread_id, checkpoint_id FROM checkpoints '
            f"WHERE checkpoint_ns = '' {where} ORDER BY thread_id COLLATE \"C\", checkpoint_id COLLATE \"C\" DESC"
        )
        if with_status:
            queries.append((
                f"SELECT c.thread_id, c.checkpoint_id, c.metadata -> 'step', c.checkpoint -> 'v', c.checkpoint -> 'channel_versions', "
                f"c.checkpoint -> 'versions_seen', c.checkpoint -> 'updated_channels' FROM ({latest_sql}) AS l "
                f"JOIN checkpoints c ON c.thread_id{bytewise} = l.thread_id AND c.checkpoint_ns = '' AND c.checkpoint_id = l.checkpoint_id "
                'ORDER BY c.thread_id COLLATE "C"', params,
            ))
            queries.append((
                'SELECT w.thread_id COLLATE "C", w.task_id, max(w.task_path), '
                "bool_or(w.channel = '__interrupt__'), bool_or(w.channel = '__error__'), "
                "bool_or(w.channel NOT IN ('__interrupt__', '__error__', '__resume__', '__error_source_node__')) "
                f"FROM ({latest_sql}) AS l JOIN checkpoint_writes w ON w.thread_id{bytewise} = l.thread_id AND w.checkpoint_ns = '' "
                'AND w.checkpoint_id = l.checkpoint_id GROUP BY 1, w.task_id ORDER BY 1', params,
            ))
        # One read-only transaction; its server-side cursors are drained in step, a thread at a time.
        with self.conn.transaction():
            opened = []
            try:
                for sql, args in queries:
                    self._cursors += 1
                    cur = self.conn.cursor(name=f"symfonic_{self._cursors}")
                    cur.itersize = ITERSIZE
                    cur.execute(sql, args)
                    opened.append(cur)
                yield from self._merge_run_states([iter(c) for c in opened], with_size, with_status, ThreadRunState, root_status, status_from_maps)
            finally:
                for cur in opened:
                    cur.close()

    def _merge_run_states(self, cursors, with_size, with_status, ThreadRunState, root_status, status_from_maps):
        summary = cursors[0]
        sizes = cursors[1:3] if with_size else []
        rest = cursors[3:] if with_size else cursors[1:]
        heads = [next(c, None) for c in sizes]
        # Without --status no cursor is read: an empty one stands for each.
        latest: Iterator[Any] = rest[0] if with_status else iter(())
        flags: Iterator[Any] = rest[1] if with_status else iter(())
        nxt_latest = next(latest, None)
        nxt_flag = next(flags, None)
        from symfonic_cli.model.thread_row import told_run_state

        for key, n, first, last, size, ids in summary:
            size = int(size or 0)
            odd = not joined_ordered(ids, n)
            for i, c in enumerate(sizes):
                head = heads[i]
                while head is not None and head[0] < key:
                    head = next(c, None)
                if head is not None and head[0] == key:
                    size += int(head[1] or 0)
                    head = next(c, None)
                heads[i] = head
            status = None
            if with_status:
                while nxt_latest is not None and nxt_latest[0] < key:
                    nxt_latest = next(latest, None)
                row = None
                if nxt_latest is not None and nxt_latest[0] == key:
                    row, nxt_latest = nxt_latest, next(latest, None)
                task_flags = {}
                while nxt_flag is not None and nxt_flag[0] <= key:
                    if nxt_flag[0] == key:
                        task_flags[str(nxt_flag[1])] = (nxt_flag[2], bool(nxt_flag[3]), bool(nxt_flag[4]), bool(nxt_flag[5]))
                    nxt_flag = next(flags, None)
                if row is not None:
                    _, cid, step, v, versions, seen, updated = row
                    status = status_from_maps(
                        cid, step, v, versions, seen, updated, task_flags,
                        whole=lambda key=key, task_flags=task_flags: root_status(self.read_run_rows(key), task_flags),
                    )
            yield told_run_state(str(key), n, first, last, odd, status, size if with_size else None)
