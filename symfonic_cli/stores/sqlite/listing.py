"""SQLite stores: the listing's rows, a sweep's pages and counts (stores/activity.py makes them exact by instant)."""

from __future__ import annotations

from collections.abc import Iterator

from symfonic_cli.clock import (
    ORDERED_ID_GLOB, checkpoint_id_time, checkpoint_time, joined_ordered, joined_ordered_bytes, ordered_id_time, ts_time,
)
from symfonic_cli.model.listing import ThreadSummary
from symfonic_cli.stores.activity import in_window, odd_having
from symfonic_cli.stores.sqlite._common import SqliteSection, _translate_errors, _translate_iter
from symfonic_cli.stores.sqlite.blobkeys import _key_bytes, _merged_by_key, _utf8
from symfonic_cli.threadkey import tenant_prefix

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class SqliteListing(SqliteSection):
    """The listing's rows by last activity, a page in one pass; a sweep's pages and counts."""

    # Listing rows, pages and counts by last activity; stores/activity.py makes them exact by instant.
    _ODD = f"max(NOT (checkpoint_id GLOB '{ORDERED_ID_GLOB}'))"
    # The same test on a UTF-8 file, a fifth of its cost: the group's ids joined and tested once
    # (a GLOB per row cost more than the GROUP BY); NULL ids are left out as max() leaves them.
    _ODD_JOINED = ("CASE WHEN count(checkpoint_id) THEN NOT symfonic_ordered_bytes("
                   "CAST(group_concat(checkpoint_id, ',') AS BLOB), count(checkpoint_id)) END")

    def _odd_test(self) -> str:
        """The aggregate that is true when a group holds an id not in the ordered form."""
        if not self.utf8:
            return self._ODD
        self.conn.create_function("symfonic_ordered_bytes", 2, _ordered_bytes, deterministic=True)
        return self._ODD_JOINED

    @_translate_iter
    def _thread_rows(self, tenant: str | None, sub_tenant: str | None, limit: int | None, last_before: str | None, last_from: str | None) -> Iterator[ThreadSummary]:
        where = ""
        params: list[Any] = []
        if tenant is not None:
            cond, params = self._prefix_where(tenant_prefix(tenant, sub_tenant))
            where = "WHERE " + cond
        if self._has_blob_keys():
            # A key's text and BLOB groups merge first; the window applies to the merged thread.
            sql = "SELECT thread_id, count(*), min(checkpoint_id), max(checkpoint_id), {} FROM checkpoints " + where + " GROUP BY thread_id COLLATE BINARY"
            merged = _merged_by_key(self.conn.execute(sql.format(self._ODD), params), None)
            kept = [t for t in merged if t.odd or in_window(t.last_at, False, last_before, last_from)]
            odd = sum(t.odd for t in kept)
            yield from (kept if limit is None else kept[:odd + limit])
            return
        # One pass, ordered and bounded by SQLite (a top-N sort with a limit; else its sorter,
        # which spills to disk): the odd threads first, then the others newest max(id) first.
        # Each group's ids are tested once: a one-checkpoint thread's id by GLOB, another's ids
        # joined by a subquery on its key (clock.joined_ordered, a function of the connection):
        # a GLOB per row cost more than the whole GROUP BY, and a group_concat in the pass a
        # fourth of it for every thread. Only text ids give a text min and max (SQLite orders
        # NULL, numbers, text, BLOBs).
        self.conn.create_function("symfonic_ordered", 2, _ordered, deterministic=True)
        if limit is None:
            first, text_ids = "min(checkpoint_id)", "typeof(min(checkpoint_id)) = 'text' AND typeof(max(checkpoint_id)) = 'text'"
        else:
            # A page reads no min() (a fifth of the pass): its rows' least ids are read after, by
            # key. Text ids only: a BLOB sorts after text (the max), a number or NULL fails the
            # GLOB or the joined ids' length and shape (clock.joined_ordered), NULL the coalesce.
            first, text_ids = "NULL", "max(checkpoint_id) < x''"
        odd = (f"NOT coalesce({text_ids} AND CASE WHEN count(*) = 1 THEN max(checkpoint_id) GLOB '{ORDERED_ID_GLOB}' "
               f"ELSE (SELECT symfonic_ordered({_JOINED}, count(*)) FROM checkpoints AS j WHERE {self._key_is('j.thread_id', 'c.thread_id')}) END, 0)")
        having, bounds = odd_having("odd", "last", "?", last_before, last_from, "rows")
        if limit is None:
            groups = (f"(SELECT thread_id, count(*) AS n, {first} AS first, max(checkpoint_id) AS last, {odd} AS odd "
                      f"FROM checkpoints AS c {where} GROUP BY thread_id COLLATE BINARY)")
            sql = f"SELECT thread_id, n, first, last, odd FROM {groups} {having.replace('HAVING', 'WHERE', 1)} ORDER BY odd DESC, last DESC, thread_id COLLATE BINARY"
            for key, n, first, last, odd in self.conn.execute(sql, [*params, *bounds]):
                yield ThreadSummary(str(key), n, first, last, bool(odd))
            return
        # A page: one pass. The odd threads are handed over as the pass meets them (a function
        # called for them only) and the plain ones inside the bounds go to SQLite's top-N sort:
        # no second pass and no sort of every thread, however many threads are odd. The tests
        # sit in HAVING: a subquery handing each group on to a WHERE cost a tenth of the pass.
        # A one-checkpoint odd thread whose id holds no time comes with its row's rowid (a
        # one-row group's is its row's, from the index the pass scans): its head is read in the
        # pass. Only the odd threads that can be on the page are held (_PageOdd): memory the
        # page's, not the store's (issue #45).
        odd_page = _PageOdd(self, limit, last_before, last_from)
        self.conn.create_function("symfonic_odd_seen", 4, odd_page.met)
        latest = "max(checkpoint_id)"
        rowid = f"CASE WHEN count(*) = 1 AND NOT (length({latest}) = 36 AND substr({latest}, 15, 1) = '6') THEN c.rowid END"
        inside = "".join(f" AND {latest} {op} ?" for op, bound in (("<", last_before), (">=", last_from)) if bound is not None)
        sql = (f"SELECT thread_id, count(*), {latest} FROM checkpoints AS c {where} GROUP BY thread_id COLLATE BINARY "
               f"HAVING CASE WHEN {odd} THEN symfonic_odd_seen(thread_id, count(*), {latest}, {rowid}) ELSE 1{inside} END "
               "ORDER BY 3 DESC, thread_id COLLATE BINARY LIMIT ?")
        page = self.conn.execute(sql, [*params, *bounds, limit]).fetchall()
        # A full page's last plain row is dated by its id; an odd thread dated before it, or
        # undatable, comes after it: left out.
        floor = ordered_id_time(page[-1][2]) if page and len(page) == limit else None
        shown = odd_page.shown(floor)
        shown.sort(key=lambda t: _key_bytes(t.key))  # the shown ones only: a floor leaves out most
        for t in shown:
            if t.last_at is None and not t.undatable:  # dated after, by key
                t = t._replace(first_checkpoint_id=t.last_checkpoint_id if t.checkpoints == 1 else self._least_id(t.key))
            yield t
        for key, n, last in page:
            yield ThreadSummary(str(key), n, last if n == 1 else self._least_id(key), last, False)

    def _least_id(self, key: str) -> Any:
        row = self.conn.execute(f"SELECT min(checkpoint_id) FROM checkpoints WHERE {self._key_is()}", self._key_args(key)).fetchone()
        return row[0] if row is not None else None

    @_translate_errors
    def _window_page(self, tenant: str | None, sub_tenant: str | None, last_before: str | None, last_from: str | None, after: str | None, limit: int, odd: bool, upto: str | None = None) -> list[str]:
        """Keyset pagination: the primary key's order serves the GROUP BY and the LIMIT stops the scan."""
        if self._has_blob_keys():
            # Keys stored as BLOBs sort apart from text: the merged listing, sliced (not streamed).
            rows = self._thread_rows(tenant, sub_tenant, None, last_before, last_from)
            keys = sorted((t.key for t in rows if t.odd == odd), key=_utf8)
            return [k for k in keys if (after is None or _utf8(k) > _utf8(after)) and (upto is None or _utf8(k) <= _utf8(upto))][:limit]
        where, params = self._window_where(tenant, sub_tenant, after, upto)
        having, bounds = odd_having(self._odd_test(), "max(checkpoint_id)", "?", last_before, last_from, "odd" if odd else "plain")
        # Byte order, named: a column declared with another collation (NOCASE) must not fold keys.
        sql = f"SELECT thread_id FROM checkpoints {where} GROUP BY thread_id COLLATE BINARY {having} ORDER BY thread_id COLLATE BINARY LIMIT ?"
        return [k for (k,) in self.conn.execute(sql, [*params, *bounds, limit])]

    @_translate_errors
    def _window_tally(self, tenant: str | None, sub_tenant: str | None, last_before: str | None, last_from: str | None) -> int:
        if self._has_blob_keys():
            return sum(1 for t in self._thread_rows(tenant, sub_tenant, None, last_before, last_from) if not t.odd)
        where, params = self._window_where(tenant, sub_tenant, None)
        having, bounds = odd_having(self._odd_test(), "max(checkpoint_id)", "?", last_before, last_from, "plain")
        sql = f"SELECT count(*) FROM (SELECT 1 FROM checkpoints {where} GROUP BY thread_id COLLATE BINARY {having})"
        return self.conn.execute(sql, [*params, *bounds]).fetchone()[0]

    def _window_where(self, tenant: str | None, sub_tenant: str | None, after: str | None, upto: str | None = None) -> tuple[str, list]:
        conds: list[str] = []
        params: list[Any] = []
        if tenant is not None:
            cond, params = self._prefix_where(tenant_prefix(tenant, sub_tenant))
            conds.append(cond)
        if after is not None:
            conds.append("thread_id COLLATE BINARY > ?")
            params = [*params, after]
        if upto is not None:
            conds.append("thread_id COLLATE BINARY <= ?")
            params = [*params, upto]
        return ("WHERE " + " AND ".join(conds) if conds else ""), list(params)


# Bytes of a blob read with its id when the id holds no time (``_keys_heads``): _blob_head's first read.
_HEAD = 512

# The head the listing's pass reads of a one-checkpoint odd thread: as ``_keys_heads`` reads it,
# for a plain msgpack blob only (NULL: the thread is dated after, as before).
_PASS_HEAD = (f"CASE WHEN type = 'msgpack' AND typeof(checkpoint) = 'blob' AND length(checkpoint) > 0 THEN CASE WHEN "
              f"instr(checkpoint, x'7473') = 0 THEN x'' ELSE substr(checkpoint, 1, {_HEAD}) END END")
_UNDECIDED = object()


class _PageOdd:
    """The odd threads a page's pass meets (``met``, called by SQLite in the pass), held to those
    that can be on the page whatever their number: the ``limit`` newest dated inside the bounds
    (then by key: ``list_threads``' order), the undatable ones (shown after every dated row) only
    while fewer are dated, the first ``limit`` by key; and every one that is dated after, by key.
    Heads are read 500 rowids to a query, in the pass (its snapshot) but for the last batch."""

    def __init__(self, listing: SqliteListing, limit: int, last_before: str | None, last_from: str | None) -> None:
        self.conn, self.limit, self.last_before, self.last_from = listing.conn, limit, last_before, last_from
        self.dated: list[ThreadSummary] = []
        self.undatable: list[ThreadSummary] = []
        self.after: list[ThreadSummary] = []  # dated after, by key
        self.wanted: dict[Any, tuple] = {}  # rowid -> (key, id): heads to read
        self.least: Any = None  # the limit-th dated row's time: an odd thread dated before it cannot be on the page
        self.room = limit + max(limit, 256)  # rows held before they are cut to the page

    def met(self, key: Any, n: int, last: Any, rowid: Any) -> int:
        # thread_activity's rule for its one checkpoint: the id's time, else its ts
        at = checkpoint_id_time(last) if n == 1 else None
        if at is not None:
            self._dated(key, n, last, at)
        elif rowid is not None:
            self.wanted[rowid] = (key, last)
            if len(self.wanted) >= 500:
                self._read_heads(self.least)
        else:
            self.after.append(ThreadSummary(str(key), n, None, last, True))
        return 0

    def _dated(self, key: Any, n: int, last: Any, at: Any) -> None:
        if self.least is not None and at < self.least or not in_window(at, False, self.last_before, self.last_from):
            return
        self.dated.append(ThreadSummary(str(key), n, last, last, True, at, at, False))
        if len(self.dated) >= self.room:
            self._cut()

    def _cut(self) -> None:
        self.dated.sort(key=lambda t: _key_bytes(t.key))
        self.dated.sort(key=lambda t: t.last_at, reverse=True)
        del self.dated[self.limit:]
        if len(self.dated) == self.limit > 0:
            self.least = self.dated[-1].last_at
            self.undatable.clear()  # after the page's last dated row

    def _undatable(self, key: Any, last: Any) -> None:
        if self.least is not None:
            return
        self.undatable.append(ThreadSummary(str(key), 1, last, last, True, None, None, True))
        if len(self.undatable) >= self.room:
            self.undatable.sort(key=lambda t: _key_bytes(t.key))
            del self.undatable[self.limit:]

    def _read_heads(self, bound: Any) -> None:
        """The ts (``_pass_ts``) of the wanted rows, from their heads read by rowid; a head that
        proves its thread undatable or dated before ``bound`` leaves it out, unparsed. A row
        another thread or id holds now (rewritten since the pass) is dated after, by key."""
        from symfonic_cli.codec.msgpack_head import _STANDARD_HEAD

        wanted, self.wanted = self.wanted, {}
        sql = f"SELECT thread_id, checkpoint_id, rowid, {_PASS_HEAD} FROM checkpoints WHERE rowid IN ({', '.join('?' * len(wanted))})"
        for key, cid, rowid, head in self.conn.execute(sql, list(wanted)):
            if type(head) is not bytes or wanted.get(rowid) != (key, cid):
                continue
            del wanted[rowid]
            if bound is not None:
                # No bytes "ts": undatable. LangGraph's layout: checkpoint_blob_head's ts is
                # this one or none (the rest unreadable): either way the bound decides.
                fast = _STANDARD_HEAD.match(head) if head else None
                at = ts_time(fast.group(1).decode("ascii")) if fast is not None else None
                if not head or fast is not None and (at is None or at < bound):
                    continue
            ts = _pass_ts(head)
            at = None if ts is _UNDECIDED else checkpoint_time(cid, ts)
            if at is not None:
                self._dated(key, 1, cid, at)
            elif ts is _UNDECIDED:
                self.after.append(ThreadSummary(str(key), 1, cid, cid, True))
            else:
                self._undatable(key, cid)
        self.after += [ThreadSummary(str(key), 1, cid, cid, True) for key, cid in wanted.values()]

    def shown(self, floor: Any) -> list[ThreadSummary]:
        """After the pass: the odd rows that can be on a page whose last plain row is dated
        ``floor`` (None: the page is not full of plain rows)."""
        if self.wanted:
            self._read_heads(self.least if floor is None else floor if self.least is None else max(floor, self.least))
        self._cut()
        rows = [t for t in self.dated if floor is None or not t.last_at < floor]
        if floor is None:
            self.undatable.sort(key=lambda t: _key_bytes(t.key))
            rows += self.undatable[:self.limit]
        return rows + self.after


def _pass_ts(head: bytes) -> Any:
    """A checkpoint's ts from the head the pass read (``_head_ts``'s reading of it), or
    ``_UNDECIDED`` when the head is cut short of it (the blob is read after)."""
    from symfonic_cli.codec.msgpack_head import NeedMore, checkpoint_blob_head

    if not head:  # no bytes "ts": no key "ts"
        return None
    try:
        return checkpoint_blob_head(head)[0]
    except NeedMore:
        return None if len(head) < _HEAD else _UNDECIDED
    except ValueError:
        return None


# The listing's one pass: each thread's ids joined, tested by ``symfonic_ordered`` (clock.joined_ordered).
_JOINED = "group_concat(checkpoint_id, ',')"


def _ordered(joined: Any, n: int) -> int:
    return 1 if joined_ordered(joined, n) else 0


def _ordered_bytes(joined: Any, n: int) -> int:
    return 1 if joined_ordered_bytes(joined, n) else 0
