"""SQLite stores: thread prune's primitives (stores/_prune.py runs the rules on them)."""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager

from symfonic_cli.errors import StoreError
from symfonic_cli.stores._prune import RulePrune
from symfonic_cli.stores.sqlite._common import SqliteSection, _journal_mode, _store_error, _translate_errors, _try_write_lock
from symfonic_cli.stores.sqlite.erase import _key_match

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from symfonic_cli.model.prune import PruneDecision

# Metadata is JSON text (a BLOB of it, as SqliteSaver writes it); read in SQL, nothing decoded.
# The root a call started from is read for a subgraph's namespace only (model/prune.py reads no other).
_FACTS = (
    "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
    "CASE WHEN checkpoint_ns != '' THEN json_extract(m, '$.parents.\"\"') END, "
    "CASE WHEN instr(m, 'counters_since_delta_snapshot') THEN json_extract(m, '$.counters_since_delta_snapshot') END, "
    "CASE WHEN instr(m, 'delta_writes_versioned') THEN json_type(m, '$.delta_writes_versioned') END "
    "FROM (SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, CAST(metadata AS TEXT) AS m "
    "FROM checkpoints WHERE {key})"
)

# The same facts and, in the same read, each checkpoint's bytes and stored size: a dry run's plan
# and its lost-message count's quick pass read every blob once. Each namespace newest first, the
# primary key read backwards (no sort: one blob in memory at a time).
_FACTS_AND_BYTES = (
    "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
    "CASE WHEN checkpoint_ns != '' THEN json_extract(m, '$.parents.\"\"') END, "
    "CASE WHEN instr(m, 'counters_since_delta_snapshot') THEN json_extract(m, '$.counters_since_delta_snapshot') END, "
    "CASE WHEN instr(m, 'delta_writes_versioned') THEN json_type(m, '$.delta_writes_versioned') END, "
    "type, checkpoint, length(checkpoint) + coalesce(length(metadata), 0) "
    "FROM (SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata, CAST(metadata AS TEXT) AS m "
    "FROM checkpoints WHERE {key}) ORDER BY checkpoint_ns DESC, checkpoint_id DESC"
)
# Per checkpoint: its writes, their stored bytes, and whether one is a pending send (model/prune.py TASKS).
_WRITES_BY_CHECKPOINT = (
    "SELECT checkpoint_ns, checkpoint_id, count(*), coalesce(sum(length(value)), 0), max(channel = ?) "
    "FROM writes WHERE {key} GROUP BY checkpoint_ns, checkpoint_id"
)


_NO_DELTA: frozenset[str] = frozenset()


def _fact(ns, cid, parent, root, counters, js):
    from symfonic_cli.model.prune import PruneCheckpoint

    delta: frozenset[str] = frozenset()
    if counters is not None:
        value = json.loads(counters) if isinstance(counters, str) else None
        delta = frozenset(value) if isinstance(value, dict) else frozenset()
    return PruneCheckpoint(ns, cid, parent, root if isinstance(root, str) else None, delta, js is not None)


class SqlitePrune(RulePrune, SqliteSection):
    """Thread prune: facts, outline, measure, kept state, apply; compact."""

    # While a plan's one read is made: the newest root checkpoints' rows, whose heads the plan's
    # transcript times read (``_pr_head``) without reading them again.
    _pr_held: dict | None = None

    def _pr_tables(self) -> tuple[str, ...]:
        return ("writes", "checkpoints")

    @_translate_errors
    def prune_prepare(self, *, dry_run: bool = False) -> list[str]:
        """The checks erase makes (writable file and folder, no triggers), without secure_delete:
        pruning is not erasure and need not zero the freed pages."""
        self.erase_prepare((), dry_run=True)  # type: ignore[attr-defined]
        if not dry_run:
            if not self.writable:
                raise StoreError(f"{self.location.path} was opened read-only; pruning needs a writable store")
            _try_write_lock(self.conn)
        return []

    @contextmanager
    def _pr_transaction(self):
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")  # the write lock first: the snapshot read is the one deleted from
        except sqlite3.Error as exc:  # busy past the lock timeout: ThreadBusy
            raise _store_error(self.location, exc) from None
        try:
            yield
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise _store_error(self.location, exc) from None
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    @_translate_errors
    def _pr_facts(self, key: str):
        from symfonic_cli.model.prune import TASKS

        where, params = _key_match(key)
        cps = [_fact(*row) for row in self.conn.execute(_FACTS.format(key=where), params)]
        sends = {(ns, cid) for ns, cid in self.conn.execute(
            f"SELECT DISTINCT checkpoint_ns, checkpoint_id FROM writes WHERE {where} AND channel = ?", (*params, TASKS))}
        return cps, sends

    def prune_plans(self, keys: list[str], *, keep: int = 1, newer_than=None, keep_branches: bool = False, times: bool = True,
                    reader=None):
        """With a ``reader`` (a dry run's lost-message count), each thread's plan and its message
        states from one read of its rows; a store with BLOB keys (read in both forms) as before."""
        if reader is None or self._has_blob_keys():
            return super().prune_plans(keys, keep=keep, newer_than=newer_than, keep_branches=keep_branches, times=times)
        return [self._pr_plan_read(k, keep, newer_than, keep_branches, times, reader) for k in keys]

    @_translate_errors
    def _pr_plan_read(self, key: str, keep: int, newer_than, keep_branches: bool, times: bool, reader):
        from symfonic_cli.model.checkpoint import MessageState
        from symfonic_cli.model.prune import TASKS, PruneCheckpoint

        where, params = self._key_is(), self._key_args(key)
        cps: list = []
        sizes: dict[tuple[str, str], int] = {}
        held: dict[str, tuple] = {}
        hold = min(keep, 6) + 2  # the newest kept and deleted roots, as a plain keep-latest decides them
        failed: list[Exception] = []

        new = tuple.__new__  # the row's tuples without NamedTuple's own __new__ (a Python call a row)

        def states():
            try:
                for ns, cid, parent, root, counters, js, type_, blob, size in self.conn.execute(_FACTS_AND_BYTES.format(key=where), params):
                    if counters is None and js is None:  # most rows: no DeltaChannel (as _fact reads it)
                        cps.append(new(PruneCheckpoint, (ns, cid, parent, root if isinstance(root, str) else None, _NO_DELTA, False, None)))
                    else:
                        cps.append(_fact(ns, cid, parent, root, counters, js))
                    sizes[(ns, cid)] = size or 0
                    if ns == "" and len(held) < hold:  # the root namespace's rows come last, newest first
                        held[cid] = (type_, blob)
                    yield new(MessageState, (ns, cid, None, cid, "checkpoint", type_, blob, parent))
            except Exception as exc:  # the read's own error: raised below, even where the reader swallowed it
                failed.append(exc)
                raise

        rows = states()
        read = reader(key, rows)
        for _ in rows:  # what the reader left: the facts still need every row
            pass
        if failed:
            raise failed[0]
        writes: dict[tuple[str, str], tuple[int, int]] = {}
        sends = set()
        for ns, cid, n, b, send in self.conn.execute(_WRITES_BY_CHECKPOINT.format(key=where), (TASKS, *params)):
            writes[(ns, cid)] = (n, b)
            if send == 1:
                sends.add((ns, cid))
        d = self._pr_decide_on(key, cps, sends, keep, newer_than, keep_branches)
        self._pr_held = held
        try:
            plan = self._pr_plan(key, d, ({}, 0) if d.skipped else _measured(d, sizes, writes), times)
        finally:
            self._pr_held = None
        plan.read = read
        return plan

    @_translate_errors
    def _pr_outline(self, key: str, ns: str, cid: str):
        from symfonic_cli.codec.outline import checkpoint_outline

        where, params = _key_match(key)
        row = self.conn.execute(
            f"SELECT type, checkpoint FROM checkpoints WHERE {where} AND checkpoint_ns = ? AND checkpoint_id = ?", (*params, ns, cid)
        ).fetchone()
        return checkpoint_outline(row[0], row[1]) if row else None

    @_translate_errors
    def _pr_head(self, key: str, cid: str):
        held = self._pr_held
        if held is not None and cid in held:
            return _head_of(held[cid])
        where, params = _key_match(key)
        return _head_of(self.conn.execute(
            f"SELECT type, checkpoint FROM checkpoints WHERE {where} AND checkpoint_ns = '' AND checkpoint_id = ?", (*params, cid)
        ).fetchone())


    def _pr_groups(self, d: PruneDecision):
        """(WHERE clause over one namespace's ids or a whole namespace, params), per group."""
        for ns, ids in d.delete.items():
            for i in range(0, len(ids), 500):
                part = ids[i:i + 500]
                yield f"checkpoint_ns = ? AND checkpoint_id IN ({','.join('?' * len(part))})", (ns, *part)
        for ns in d.drop:
            yield "checkpoint_ns = ?", (ns,)

    @_translate_errors
    def _pr_measure(self, key: str, d: PruneDecision):
        where, params = _key_match(key)
        writes = cps = size = 0
        for cond, extra in self._pr_groups(d):
            n, b = self.conn.execute(
                f"SELECT count(*), coalesce(sum(length(value)), 0) FROM writes WHERE {where} AND {cond}", (*params, *extra)).fetchone()
            m, c = self.conn.execute(
                f"SELECT count(*), coalesce(sum(length(checkpoint) + coalesce(length(metadata), 0)), 0) FROM checkpoints "
                f"WHERE {where} AND {cond}", (*params, *extra)).fetchone()
            writes, cps, size = writes + n, cps + m, size + b + c
        return {"writes": writes, "checkpoints": cps}, size

    @_translate_errors
    def _pr_kept_state(self, key: str, d: PruneDecision):
        where, params = _key_match(key)
        state = []
        for ns, ids in sorted(d.keep.items()):
            if ns in d.drop:
                continue
            for cid in sorted(ids):
                row = self.conn.execute(
                    f"SELECT type, checkpoint, metadata FROM checkpoints WHERE {where} AND checkpoint_ns = ? AND checkpoint_id = ?",
                    (*params, ns, cid)).fetchone()
                writes = self.conn.execute(
                    f"SELECT task_id, idx, channel, type, value FROM writes WHERE {where} AND checkpoint_ns = ? AND checkpoint_id = ? "
                    "ORDER BY task_id, idx", (*params, ns, cid)).fetchall()
                state.append((ns, cid, row, writes))
        return state

    @_translate_errors
    def _pr_apply(self, key: str, d: PruneDecision) -> dict[str, int]:
        c = self.conn
        where, params = _key_match(key)
        writes = cps = 0
        for cond, extra in self._pr_groups(d):
            writes += c.execute(f"DELETE FROM writes WHERE {where} AND {cond}", (*params, *extra)).rowcount
            cps += c.execute(f"DELETE FROM checkpoints WHERE {where} AND {cond}", (*params, *extra)).rowcount
        for ns, ids in d.detach.items():
            for i in range(0, len(ids), 500):
                part = ids[i:i + 500]
                c.execute(f"UPDATE checkpoints SET parent_checkpoint_id = NULL WHERE {where} AND checkpoint_ns = ? "
                          f"AND checkpoint_id IN ({','.join('?' * len(part))})", (*params, ns, *part))
        return {"writes": writes, "checkpoints": cps}

    # -- --compact

    def file_bytes(self) -> dict[str, int]:
        import os

        path: str = self.file
        out = {}
        for suffix in ("", "-wal"):
            try:
                out["file" + suffix.replace("-", "_")] = os.path.getsize(path + suffix)
            except OSError:
                out["file" + suffix.replace("-", "_")] = 0
        return out

    @_translate_errors
    def compact_check(self) -> list[str]:
        """Before anything is deleted: VACUUM writes a copy of the database, so the disk must hold one."""
        import os
        import shutil

        path: str = self.file
        size = os.path.getsize(path) + (os.path.getsize(path + "-wal") if os.path.exists(path + "-wal") else 0)
        free = shutil.disk_usage(os.path.dirname(os.path.abspath(path))).free
        if free < size:
            from symfonic_cli.render import human_size

            raise StoreError(
                f"--compact needs free disk for a copy of {self.location.path} ({human_size(size)}), only {human_size(free)} free: "
                "refused, nothing was deleted", hint="free disk space, or prune without --compact")
        return ["--compact: VACUUM rewrites the file after the last thread and holds an exclusive lock meanwhile (writers wait)"]

    @_translate_errors
    def compact(self) -> tuple[dict[str, int], dict[str, int], list[str]]:
        before = self.file_bytes()
        notes = []
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.conn.execute("VACUUM")
        if _journal_mode(self.file, self.conn) == "wal":
            busy = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            if busy:
                notes.append("the write-ahead log could not be truncated (another connection was reading)")
        return before, self.file_bytes(), notes


def _measured(d: PruneDecision, sizes: dict[tuple[str, str], int], writes: dict[tuple[str, str], tuple[int, int]]):
    """``_pr_measure`` from the rows already read: what the decision's deletes take (rows, stored bytes)."""
    gone = {(ns, i) for ns, ids in d.delete.items() for i in ids}
    drop = d.drop
    n_writes = n_cps = size = 0
    for where, (n, b) in writes.items():
        if where[0] in drop or where in gone:
            n_writes, size = n_writes + n, size + b
    for where, b in sizes.items():
        if where[0] in drop or where in gone:
            n_cps, size = n_cps + 1, size + b
    return {"writes": n_writes, "checkpoints": n_cps}, size


def _head_of(row):
    """A root checkpoint's ``(ts, message count)`` from its ``(type, bytes)`` row (None: no such row)."""
    from symfonic_cli.codec.msgpack_head import checkpoint_blob_head, encrypted_blob_head

    if row and row[0] == "msgpack+aes":
        return encrypted_blob_head(row[0], bytes(row[1]))
    if not row or row[0] != "msgpack":
        return None, None
    try:
        return checkpoint_blob_head(bytes(row[1]))
    except Exception:  # not a plain checkpoint map: no count to report
        return None, None
