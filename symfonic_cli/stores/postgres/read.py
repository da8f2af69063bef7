"""PostgreSQL stores: what is in the store, one thread, and the transcript reads (timestamps from blob heads)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from symfonic_cli.errors import StoreError
from symfonic_cli.model.listing import StoreInfo, ThreadSummary
from symfonic_cli.clock import joined_ordered
from symfonic_cli.stores.activity import odd_having
from symfonic_cli.stores.postgres.page import merge_parts, page_sql, part_cuts
from symfonic_cli.stores.postgres._common import (
    PostgresSection,
    TABLES,
    _translate_errors,
    _conninfo,
    _translate_iter,
    is_ordered_id,
    on_one_snapshot,
)
from symfonic_cli.threadkey import tenant_prefix

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.model.checkpoint import (
        CheckpointHead,
        CheckpointRecord,
        MessageState,
        MessageWrite,
    )


class PostgresRead(PostgresSection):
    """What is in the store, one thread, and the transcript reads (timestamps from blob heads)."""

    # -- what is in the store

    # Listing rows, pages and counts by last activity; stores/activity.py makes them exact by instant.
    _ODD = f"NOT bool_and({is_ordered_id('checkpoint_id')})"
    _LATEST = 'max(checkpoint_id) COLLATE "C"'

    @_translate_iter
    def _thread_rows(self, tenant: str | None, sub_tenant: str | None, limit: int | None, last_before: str | None, last_from: str | None) -> Iterator[ThreadSummary]:
        where = ""
        params: list[Any] = []
        if tenant is not None:
            where, params = self._prefix_where(tenant_prefix(tenant, sub_tenant))
        key = self._key_grouped()
        if limit is not None:
            yield from self._page_rows(key, where, params, limit, last_before, last_from)
            return
        # No test per row in the server (a regex per row cost five times the whole GROUP BY: 2,000
        # threads, 68,000 checkpoints, 0.79 s against 0.15 s): each thread's ids joined and
        # tested here (clock.joined_ordered) in one streamed pass, keeping only the odd threads;
        # the whole listing then takes the others newest first, sorted by the server, in a second
        # streamed pass, the odd ones skipped.
        joined = (
            f'SELECT {key}, count(*), min(checkpoint_id COLLATE "C"), max(checkpoint_id COLLATE "C"), '
            f"string_agg(checkpoint_id, ',') FROM checkpoints {where} GROUP BY {key}"
        )
        odd = []
        for k, n, first, last, ids in self._stream(joined, params, itersize=LISTING_ITERSIZE):
            if not (type(first) is str and type(last) is str and joined_ordered(ids, n)):
                odd.append(ThreadSummary(str(k), n, first, last, True))
        odd.sort(key=lambda t: t.key.encode("utf-8", "surrogateescape"))
        yield from odd
        having, bounds = odd_having("false", self._LATEST, "%s", last_before, last_from, "plain")
        sql = (
            f'SELECT {key}, count(*), min(checkpoint_id COLLATE "C"), max(checkpoint_id COLLATE "C") '
            f"FROM checkpoints {where} GROUP BY {key} {having} "
            f'ORDER BY {self._LATEST} DESC, thread_id COLLATE "C"'
        )
        skip = {t.key for t in odd}
        for key, n, first, last in self._stream(sql, [*params, *bounds]):
            if str(key) not in skip:
                yield ThreadSummary(str(key), n, first, last, False)

    def _page_rows(self, key: str, where: str, params: list, limit: int, last_before: str | None, last_from: str | None) -> Iterator[ThreadSummary]:
        """A page, decided in the server in one pass and one top-N sort (stores/postgres/page.py):
        the ``limit`` newest plain threads inside the bounds, and the odd ones ranked where they
        could be among them; no id crosses the wire but theirs. Ranks above the page taken by
        more odd threads than the rows asked for beyond it: asked again for more rows. Over a
        large table the pass is split by key range across sessions on one snapshot (_key_cuts)."""
        bounds = [b for b in (last_before, last_from) if b is not None]
        inside = "".join(f" AND max(checkpoint_id COLLATE \"C\") {op} %s" for op, b in (("<", last_before), (">=", last_from)) if b is not None)
        cuts = self._key_cuts(where, params)
        asked = 2 * limit + 64
        while True:
            rows = self._page_parted(key, where, params, inside, bounds, cuts, asked) if cuts else None
            if rows is None:
                cuts = []
                # jit off: compiling this statement's expressions cost more than the whole scan.
                sql = page_sql(key, where, inside, self._keys_exact)
                rows = list(self._stream(sql, [*params, *bounds, asked], jit=False, itersize=asked))
            if len(rows) < asked or sum(not row[4] for row in rows) >= limit:
                break
            asked *= 16
        odd = sorted((ThreadSummary(str(k), n, first, last, True) for k, n, first, last, is_odd, _ in rows if is_odd),
                     key=lambda t: t.key.encode("utf-8", "surrogateescape"))
        page = [ThreadSummary(str(k), n, first, last, False) for k, n, first, last, is_odd, _ in rows if not is_odd][:limit]
        page.sort(key=lambda t: t.key.encode("utf-8", "surrogateescape"))
        page.sort(key=lambda t: t.last_checkpoint_id, reverse=True)
        yield from odd
        yield from page

    # Checkpoints (the planner's estimate, under the page's prefix) from which a read is split
    # across sessions: below it, a session's start costs more than its share of the pass saves.
    _split_rows = 100_000

    def _key_cuts(self, where: str, params: list) -> list[str]:
        """Keys cutting a pass (the page's, the reclaimable bytes') into key ranges of about as many
        checkpoints, one session each: as many sessions as the server lets one query use processes
        (max_parallel_workers_per_gather workers and itself; a read through a cursor, or one the
        planner cannot parallelize, gets no workers). From the column's statistics (none before an
        ANALYZE: no split); only from an idle session (the parts share a new transaction's
        snapshot); under a prefix only where the key range is the prefix (a collation in byte order)."""
        from psycopg.pq import TransactionStatus

        if self.conn.info.transaction_status != TransactionStatus.IDLE or (where and not self._c_collation):
            return []
        row = self.conn.execute(
            "SELECT current_setting('max_parallel_workers_per_gather')::int, k.reltuples, s.histogram_bounds::text::text[] "
            "FROM pg_class k JOIN pg_namespace n ON n.oid = k.relnamespace LEFT JOIN pg_stats s ON s.schemaname = n.nspname "
            "AND s.tablename = k.relname AND s.attname = 'thread_id' WHERE k.oid = 'checkpoints'::regclass").fetchone()
        workers, rows, hist = row if row else (0, 0, None)
        if workers < 1 or not hist or len(hist) < 3:
            return []
        hist = [str(b) for b in hist]
        share = 1.0
        if where:  # a prefix's range [params[0], params[1]) in byte order: the bounds inside it
            lo = params[0].encode("utf-8", "surrogateescape")
            hi = params[1].encode("utf-8", "surrogateescape") if len(params) > 1 else None
            inner = [b for b in hist if lo <= b.encode("utf-8", "surrogateescape") and (hi is None or b.encode("utf-8", "surrogateescape") < hi)]
            share = len(inner) / (len(hist) - 1)
            hist = inner
        if float(rows) * share < self._split_rows or len(hist) < 2:
            return []
        return part_cuts(hist, workers + 1)

    def _page_parted(self, key: str, where: str, params: list, inside: str, bounds: list, cuts: list[str], asked: int) -> list[tuple] | None:
        """The page's statement over each key range between ``cuts`` (the column's own order: its
        index serves the range), run at once in sessions on one snapshot and merged (merge_parts);
        None when the sessions cannot be had."""
        edges: list[str | None] = [None, *cuts, None]
        sessions = []
        for lo, hi in zip(edges, edges[1:]):
            conds = ([] if lo is None else ["thread_id >= %s"]) + ([] if hi is None else ["thread_id < %s"])
            part = (where + " AND " if where else "WHERE ") + " AND ".join(conds)
            args = [*params, *(b for b in (lo, hi) if b is not None), *bounds, asked]
            sessions.append([(page_sql(key, part, inside, self._keys_exact), args)])
        conninfo = _conninfo(self.location, writable=False, connect_timeout=self.connect_timeout)
        parts = on_one_snapshot(self.conn, conninfo, sessions)
        return None if parts is None else merge_parts([rows for (rows,) in parts], asked)

    @_translate_errors
    def _window_page(self, tenant: str | None, sub_tenant: str | None, last_before: str | None, last_from: str | None, after: str | None, limit: int, odd: bool, upto: str | None = None) -> list[str]:
        """Keyset pagination, bytewise order."""
        where, params = self._window_where(tenant, sub_tenant, after, upto)
        having, bounds = odd_having(self._ODD, self._LATEST, "%s", last_before, last_from, "odd" if odd else "plain")
        # Under a byte-order collation the primary key's order is the key order: the index serves
        # the GROUP BY and the LIMIT ends the scan. Under any other, byte order is asked for.
        order = "thread_id" if self._c_collation else 'thread_id COLLATE "C"'
        key = self._key_grouped()
        sql = f"SELECT {key} FROM checkpoints {where} GROUP BY {key} {having} ORDER BY {order} LIMIT %s"
        if not self._c_collation:
            return [str(k) for (k,) in self.conn.execute(sql, [*params, *bounds, limit]).fetchall()]
        with self.conn.transaction():
            # The planner's estimate favours a hash aggregate of every row after ``after`` (the
            # whole table for each page); the index-ordered aggregate stops at the LIMIT.
            self.conn.execute("SET LOCAL enable_hashagg = off")
            return [str(k) for (k,) in self.conn.execute(sql, [*params, *bounds, limit]).fetchall()]

    @_translate_errors
    def _window_tally(self, tenant: str | None, sub_tenant: str | None, last_before: str | None, last_from: str | None) -> int:
        where, params = self._window_where(tenant, sub_tenant, None)
        having, bounds = odd_having(self._ODD, self._LATEST, "%s", last_before, last_from, "plain")
        sql = f"SELECT count(*) FROM (SELECT 1 FROM checkpoints {where} GROUP BY {self._key_grouped()} {having}) AS idle"
        return int(self.conn.execute(sql, [*params, *bounds]).fetchone()[0])

    def _window_where(self, tenant: str | None, sub_tenant: str | None, after: str | None, upto: str | None = None) -> tuple[str, list]:
        where = ""
        params: list[Any] = []
        if tenant is not None:
            where, params = self._prefix_where(tenant_prefix(tenant, sub_tenant))
        column = "thread_id" if self._c_collation else 'thread_id COLLATE "C"'
        if after is not None:
            where = (where + " AND " if where else "WHERE ") + f"{column} > %s"
            params = [*params, after]
        if upto is not None:
            where = (where + " AND " if where else "WHERE ") + f"{column} <= %s"
            params = [*params, upto]
        return where, list(params)

    @_translate_errors
    def thread_summary(self, key: str) -> ThreadSummary | None:
        row = self.conn.execute(
            "SELECT count(*), min(checkpoint_id), max(checkpoint_id), string_agg(checkpoint_id, ',') FROM checkpoints WHERE " + self._key_is(),
            self._key_args(key),
        ).fetchone()
        if not row or not row[0]:
            return None
        return ThreadSummary(key, row[0], row[1], row[2], not joined_ordered(row[3], row[0]))

    @_translate_errors
    def info(self) -> StoreInfo:
        row = self.conn.execute(
            f"SELECT (SELECT count(DISTINCT {self._key_grouped()}) FROM checkpoints), "
            "(SELECT count(*) FROM checkpoints), "
            "(SELECT count(*) FROM checkpoint_writes), "
            "(SELECT count(*) FROM checkpoint_blobs), "
            "(SELECT count(DISTINCT checkpoint_ns) FROM checkpoints), "
            "(SELECT max(v) FROM checkpoint_migrations), "
            "pg_total_relation_size('checkpoints'::regclass), "
            "pg_total_relation_size('checkpoint_blobs'::regclass), "
            "pg_total_relation_size('checkpoint_writes'::regclass), "
            "pg_total_relation_size('checkpoint_migrations'::regclass), "
            "current_database(), current_setting('server_version'), current_setting('transaction_read_only')"
        ).fetchone()
        threads, checkpoints, writes, blobs, namespaces, version, *sizes, database, server, read_only = row
        details: dict[str, Any] = {
            "database": database,
            "schema": self.schema,
            "tables": list(TABLES),
            "migration version": version,
            "schema variant": "checkpoint_writes.task_path present" if self.has_task_path else "checkpoint_writes without task_path",
            "blobs": blobs,
            "namespaces": namespaces,
        }
        for table, size in zip(TABLES, sizes):
            details[f"{table} size"] = size
        details["server version"] = server
        details["read-only session"] = read_only
        census = self.encryption_census()
        details["encryption"] = census.describe()
        if census.finding():
            details["finding: plaintext values"] = census.finding()
        return StoreInfo("postgres", self.location.display, threads, checkpoints, writes, details)

    @_translate_errors
    def encryption_census(self):
        """Serialized values by encryption (``model/encryption.py``): blobs (the saver's ``empty``
        marker is not serialized) and writes; the checkpoint JSONB is never encrypted."""
        from symfonic_cli.model.encryption import EncryptionCensus

        values = ("SELECT b.type, (SELECT min(c.checkpoint_id COLLATE \"C\") FROM checkpoints c WHERE " + self._key_is("c.thread_id", "b.thread_id") + " "
                  "AND c.checkpoint_ns = b.checkpoint_ns AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version) AS cid "
                  "FROM checkpoint_blobs b WHERE b.type <> 'empty' "
                  "UNION ALL SELECT type, checkpoint_id FROM checkpoint_writes")
        enc, plain = self.conn.execute(
            "SELECT count(*) FILTER (WHERE position('+' in type) > 0), count(*) FILTER (WHERE position('+' in type) = 0) "
            "FROM (SELECT type FROM checkpoint_blobs WHERE type <> 'empty' UNION ALL SELECT type FROM checkpoint_writes) v"
        ).fetchone()
        first: tuple[str, ...] = ()
        if enc and plain:
            first = tuple(r[0] for r in self.conn.execute(
                f"SELECT DISTINCT cid COLLATE \"C\" FROM ({values}) v WHERE position('+' in type) = 0 AND cid IS NOT NULL "
                "ORDER BY 1 LIMIT 5"))
        return EncryptionCensus(enc, plain, first)

    # -- one thread

    @_translate_errors
    def read_checkpoint(
        self,
        key: str,
        *,
        checkpoint_ns: str = "",
        checkpoint_id: str | None = None,
        channels: tuple[str, ...] = ("messages",),
    ) -> CheckpointRecord | None:
        from symfonic_cli.codec.strict import collect_blocked, loads
        from symfonic_cli.model.checkpoint import CheckpointRecord

        select = (
            "SELECT checkpoint_id, parent_checkpoint_id, checkpoint ->> 'ts', checkpoint -> 'channel_values', "
            f"checkpoint -> 'channel_versions', metadata FROM checkpoints WHERE {self._key_is()} AND checkpoint_ns = %s "
        )
        where, params = ("ORDER BY checkpoint_id DESC LIMIT 1", (*self._key_args(key), checkpoint_ns)) if checkpoint_id is None else (
            "AND checkpoint_id = %s", (*self._key_args(key), checkpoint_ns, checkpoint_id))
        try:
            row = self.conn.execute(select.replace(", metadata FROM", ", metadata::text FROM") + where, params).fetchone()
        except (ValueError, RecursionError) as exc:
            # psycopg decodes the JSONB with Python's json: a long integer, deep nesting.
            found = self.conn.execute(
                f"SELECT checkpoint_id FROM checkpoints WHERE {self._key_is()} AND checkpoint_ns = %s " + where, params
            ).fetchone()
            raise StoreError(
                f"checkpoint {found[0] if found else '?'} cannot be decoded ({type(exc).__name__}: {str(exc)[:120]})"
            ) from None
        if row is None:
            return None
        cid, parent, ts, inline, versions, metadata_text = row
        from symfonic_cli.codec.metadata_json import MetadataError
        from symfonic_cli.codec.metadata_json import loads as metadata_loads

        try:
            metadata = metadata_loads(metadata_text) if metadata_text is not None else {}
        except MetadataError as exc:
            raise StoreError(f"checkpoint {cid}: {exc.reason}") from None
        inline = inline if isinstance(inline, dict) else {}
        versions = versions if isinstance(versions, dict) else {}
        wanted = [ch for ch in channels if ch in versions]
        values: dict[str, Any] = {ch: inline[ch] for ch in channels if ch in inline}
        blocked: set[str] = set()
        if wanted:
            blobs = self.conn.execute(
                "SELECT b.channel, b.type, b.blob FROM checkpoint_blobs b "
                "JOIN unnest(%s::text[], %s::text[]) AS w(channel, version) "
                "ON b.channel = w.channel AND b.version = w.version "
                f"WHERE {self._key_is('b.thread_id')} AND b.checkpoint_ns = %s",
                ([str(ch) for ch in wanted], [str(versions[ch]) for ch in wanted], *self._key_args(key), checkpoint_ns),
            ).fetchall()
            with collect_blocked() as blocked:
                for ch, type_, blob in blobs:
                    if type_ == "empty":
                        values.pop(ch, None)
                        continue
                    # A blob wins over an inline value (a delta snapshot leaves a `true` marker inline).
                    values[ch] = loads(type_, blob, what=f"channel '{ch}' of checkpoint {cid}")
        return CheckpointRecord(
            thread_id=key,
            checkpoint_ns=checkpoint_ns,
            checkpoint_id=cid,
            parent_checkpoint_id=parent,
            ts=ts,
            metadata=metadata if isinstance(metadata, dict) else {},
            channel_values=values,
            channel_versions=dict(versions),
            blocked=frozenset(blocked),
        )

    @_translate_iter
    def iter_message_states(self, key: str) -> Iterator[MessageState]:
        # Each distinct (namespace, version) of `messages` ships its blob once, on its newest
        # checkpoint (the first the reader sees); the reader caches by version for the rest.
        from symfonic_cli.model.checkpoint import MessageState

        sql = (
            "SELECT c.checkpoint_ns, c.checkpoint_id, c.ts, c.ver, c.parent_checkpoint_id, "
            "CASE WHEN b.type = 'empty' THEN NULL ELSE b.type END, "
            "CASE WHEN b.type = 'empty' THEN NULL ELSE b.blob END "
            "FROM (SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint ->> 'ts' AS ts, "
            "checkpoint -> 'channel_versions' ->> 'messages' AS ver, "
            "row_number() OVER (PARTITION BY checkpoint_ns, checkpoint -> 'channel_versions' ->> 'messages' "
            "ORDER BY checkpoint_id DESC) AS rn "
            f"FROM checkpoints WHERE {self._key_is()}) AS c "
            f"LEFT JOIN checkpoint_blobs b ON c.rn = 1 AND {self._key_is('b.thread_id')} AND b.checkpoint_ns = c.checkpoint_ns "
            "AND b.channel = 'messages' AND b.version = c.ver "
            "ORDER BY c.checkpoint_id DESC"
        )
        for ns, cid, ts, ver, parent, type_, blob in self._stream(sql, self._key_args(key) * 2):
            yield MessageState(ns, cid, ts, ver, "channel", type_, bytes(blob) if blob is not None else None, parent)

    # -- timestamps (protocol docstrings in stores/protocol.py): no message decoded

    @_translate_errors
    def read_message_state(self, key: str, *, checkpoint_id: str | None = None) -> MessageState | None:
        # The messages blob named by the checkpoint's channel_versions; anything unusual (an inline
        # value, an "empty" blob, no blob) gives payload None and the strict path decides.
        from symfonic_cli.model.checkpoint import MessageState

        sql = (
            "SELECT c.checkpoint_id, c.checkpoint ->> 'ts', c.checkpoint -> 'channel_versions' ->> 'messages', "
            "c.checkpoint -> 'channel_values' ? 'messages', b.type, b.blob "
            f"FROM checkpoints c LEFT JOIN checkpoint_blobs b ON {self._key_is('b.thread_id', 'c.thread_id')} "
            "AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = 'messages' "
            "AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages' "
            f"WHERE {self._key_is('c.thread_id')} AND c.checkpoint_ns = ''"
        )
        if checkpoint_id is None:
            row = self.conn.execute(sql + " ORDER BY c.checkpoint_id DESC LIMIT 1", self._key_args(key)).fetchone()
        else:
            row = self.conn.execute(sql + " AND c.checkpoint_id = %s", (*self._key_args(key), checkpoint_id)).fetchone()
        if row is None:
            return None
        cid, ts, version, inline, type_, blob = row
        if inline or type_ != "msgpack" or blob is None:
            return MessageState("", cid, ts, version, "channel", None, None)
        return MessageState("", cid, ts, version, "channel", type_, bytes(blob))

    @_translate_errors  # a list or None, not a generator (activity.py tests for None)
    def _keys_heads(self, keys: list[str]) -> list[tuple] | None:
        """(key, id, ts) of every checkpoint of ``keys`` in one query (stores/activity.py), the
        ``ts`` as iter_checkpoint_heads reads it; None under a collation that folds keys."""
        if not self._keys_exact:
            return None
        from symfonic_cli.stores.postgres._common import _psycopg_errors

        sql = "SELECT thread_id, checkpoint_id, checkpoint ->> 'ts' FROM checkpoints WHERE thread_id = ANY(%s)"
        try:  # any error: thread by thread, where thread_activity tells it as it does
            return [(str(k), cid, ts) for k, cid, ts in self.conn.execute(sql, (list(keys),)).fetchall()]
        except _psycopg_errors():
            return None

    def iter_checkpoint_heads(self, key: str) -> Iterator["CheckpointHead"]:
        from symfonic_cli.codec.msgpack_head import NeedMore, channel_blob_count
        from symfonic_cli.model.checkpoint import CheckpointHead

        sql = (
            "SELECT c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint ->> 'ts', "
            "CASE WHEN jsonb_typeof(c.metadata -> 'source') = 'string' THEN c.metadata ->> 'source' END, "
            "jsonb_typeof(c.checkpoint -> 'channel_values' -> 'messages'), "
            "b.type, substring(b.blob from 1 for 9) "
            f"FROM checkpoints c LEFT JOIN checkpoint_blobs b ON {self._key_is('b.thread_id', 'c.thread_id')} "
            "AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = 'messages' "
            "AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages' "
            f"WHERE {self._key_is('c.thread_id')} ORDER BY c.checkpoint_id, c.checkpoint_ns"
        )
        for ns, cid, parent, ts, source, inline, type_, head in self._stream(sql, self._key_args(key)):
            count: int | None
            if type_ == "msgpack" and head is not None:
                try:
                    count = channel_blob_count(bytes(head))
                except (NeedMore, ValueError):
                    count = None
            elif type_ is not None and type_ != "empty":
                count = None  # another encoding: the resolver takes the exact walk
            elif inline is not None and inline != "null":
                count = None  # an inline value where a list belongs
            else:
                count = 0
            yield CheckpointHead(ns, cid, parent, ts, source, count)

    @_translate_iter
    def iter_message_writes(self, key: str) -> Iterator["MessageWrite"]:
        from symfonic_cli.model.checkpoint import MessageWrite

        sql = (
            "SELECT checkpoint_ns, checkpoint_id, task_id, idx, type, blob, task_path FROM checkpoint_writes "
            f"WHERE {self._key_is()} AND channel = 'messages'"
        )
        for ns, cid, task_id, idx, type_, blob, task_path in self._stream(sql, self._key_args(key)):
            yield MessageWrite(ns, cid, task_id, idx, type_, bytes(blob) if blob is not None else None, task_path or "")


# Rows a round trip of the listing's pass over every thread (a key, a count and its ids: small).
LISTING_ITERSIZE = 5000
