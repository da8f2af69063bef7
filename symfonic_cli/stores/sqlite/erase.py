"""SQLite stores: thread erase: plan, cascade, delete and verify."""

from __future__ import annotations

import errno
import os

from symfonic_cli.clock import joined_ordered
from symfonic_cli.errors import StoreError
from symfonic_cli.stores._common import PerThreadErase, quoted_identifier, refuse_stored_code
from symfonic_cli.stores.sqlite._common import SqliteSection, _journal_mode, _translate_errors, _try_write_lock

# typing.TYPE_CHECKING without importing typing (quick commands load this module).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from symfonic_cli.model.erase import ExtraTable, ThreadErasePlan


IDENTITY_LOCK_BYTE = 1 << 62  # one byte far beyond every byte SQLite locks (its lock bytes start at 0x40000000)


def _identity_lock(kind: int) -> bytes:
    """A ``struct flock`` for F_OFD_SETLK: ``kind`` (F_WRLCK, F_UNLCK) of IDENTITY_LOCK_BYTE, l_pid 0."""
    import struct

    return struct.pack("hhqqii", kind, os.SEEK_SET, IDENTITY_LOCK_BYTE, 1, 0, 0)


class SqliteErase(PerThreadErase, SqliteSection):
    """Thread erase: plan, cascade, delete and verify."""

    # -- erase (protocol docstrings in stores/protocol.py)

    _ERASE_CORE = ("writes", "checkpoints")  # delete order: checkpoints last

    def _cascade(self, key: str, extra: tuple[ExtraTable, ...]) -> list[tuple[str, str, tuple[Any, ...]]]:
        """(name, WHERE clause, params) per cascade table; an extra table that cannot hold ``key`` is ''."""
        out: list[tuple[str, str, tuple[Any, ...]]] = []
        for table in extra:
            filters = table.filters(key)
            if filters is None:
                out.append((table.name, "", ()))
                continue
            conds: list[str] = []
            values: list[Any] = []
            for col, value in filters:
                if value is None:
                    conds.append(f"{quoted_identifier(col)} IS NULL")
                else:
                    # as in the saver's tables: the value as text, or as a BLOB of its UTF-8 bytes
                    conds.append(f"{quoted_identifier(col)} COLLATE BINARY IN (?, ?)")
                    values += [value, value.encode("utf-8", "surrogatepass")]
            out.append((table.name, " AND ".join(conds), tuple(values)))
        where, params = _key_match(key)
        for name in self._ERASE_CORE:
            out.append((name, where, params))
        return out

    _run_lock_fd: int | None = None
    _file_lock_fd: int | None = None  # the database file itself, for the lock on its identity

    def take_run_lock(self, operation: str) -> str | None:
        """A lock file beside the store (``<file>.symfonic-lock``), locked with flock for the run: SQLite's
        own locks last a transaction, not a run of many. It stays after the run, empty. And, as SQLite's
        own locks are, a lock on the file's identity (device and inode): a hard link is another name of
        the same store, whose lock file sits beside that name (``_lock_file_identity``)."""
        import fcntl
        import json

        from symfonic_cli.stores.runlock import LOCK_SUFFIX, describe, holder_record

        from symfonic_cli.output_paths import NotRegularFile, open_regular

        path = self.file + LOCK_SUFFIX
        try:
            fd = open_regular(path, os.O_RDWR | os.O_CREAT)
        except NotRegularFile:
            raise StoreError(f"the run lock file {self.location.path}{LOCK_SUFFIX} is not a regular file",
                             hint="remove it: symfonic creates it") from None
        except OSError as exc:
            raise StoreError(f"cannot create the run lock file {self.location.path}{LOCK_SUFFIX}: {exc.strerror}",
                             hint="erase and prune need a writable folder beside the store") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                raw = os.read(fd, 4096)
                record = json.loads(raw.decode("utf-8", "replace")) if raw else None
            except ValueError:
                record = None
            os.close(fd)
            return describe(record)
        if not self._lock_file_identity():
            os.close(fd)
            return "another symfonic run changing the same file through another of its names (a hard link)"
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(holder_record(operation)).encode())  # data: the run lock file's holder
        self._run_lock_fd = fd
        self._refuse_other_names()  # a name made since the checks (the store's close lets go of the locks)
        return None

    def _refuse_other_names(self) -> None:
        """A store with more than one name (hard links) is not changed: SQLite keeps a -wal and a -shm
        beside each name, so two connections through two names do not see each other's log, and a
        writer through one (the application) can write back what was erased or pruned through the
        other. Exit 4, before anything is changed (also on a dry run: the real run's checks)."""
        links = os.stat(self.file).st_nlink
        if links > 1:
            raise StoreError(f"{self.location.path} has {links} names (hard links): SQLite keeps a -wal beside each name, so a "
                             "change made through one name can be undone by a writer through another; nothing was changed",
                             hint="remove the other names (find / -xdev -samefile FILE lists them) and use the one the application uses")

    def _lock_file_identity(self) -> bool:
        """An open-file-description lock (Linux) on one byte of the database file: held per open file,
        keyed by the file's device and inode whatever name it was opened by, and apart from SQLite's
        own (process-wide) locks. The descriptor stays open until the store's connection is closed
        (``close_file_lock``): closing a descriptor of the file would drop the locks SQLite holds on it
        in this process. False when another run holds it; True where the system has no such lock."""
        import fcntl

        setlk = getattr(fcntl, "F_OFD_SETLK", None)
        if setlk is None:
            return True
        if self._file_lock_fd is None:
            self._file_lock_fd = os.open(self.file, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
        try:
            fcntl.fcntl(self._file_lock_fd, setlk, _identity_lock(fcntl.F_WRLCK))
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                return False
            raise
        return True

    def release_run_lock(self) -> None:
        fd, self._run_lock_fd = self._run_lock_fd, None
        if fd is not None:
            os.ftruncate(fd, 0)
            os.close(fd)  # closing the descriptor lets go of the flock
        if self._file_lock_fd is not None:
            import fcntl

            fcntl.fcntl(self._file_lock_fd, fcntl.F_OFD_SETLK, _identity_lock(fcntl.F_UNLCK))

    def close_file_lock(self) -> None:
        """After the connection is closed: the identity lock's descriptor (see ``_lock_file_identity``)."""
        fd, self._file_lock_fd = self._file_lock_fd, None
        if fd is not None:
            os.close(fd)

    def set_lock_timeout(self, seconds: float) -> None:
        # SQLite has one write lock for the file: a thread's BEGIN IMMEDIATE waits this long for it.
        self.conn.execute(f"PRAGMA busy_timeout = {max(1, round(seconds * 1000))}")

    def replica_lag(self) -> tuple[float, str] | None:
        return None  # a file: no standbys

    def store_identity(self) -> dict[str, Any]:
        import os

        return {"kind": "sqlite", "path": os.path.realpath(self.location.path or "")}

    @_translate_errors
    def erase_prepare(self, extra: tuple[ExtraTable, ...], *, dry_run: bool = False) -> list[str]:
        shown: str = self.location.path
        path: str = self.file
        if not self.writable and not dry_run:
            raise StoreError(f"{shown} was opened read-only; erasing needs a writable store")
        if not os.access(path, os.W_OK):
            raise StoreError(f"{shown} is read-only for this user: nothing was deleted")
        self._refuse_other_names()
        # SQLite creates its -wal (WAL mode) or -journal (rollback modes) beside the file.
        folder = os.path.dirname(path)
        mode = _journal_mode(path, self.conn)
        side = f"{path}-wal" if mode == "wal" else f"{path}-journal"
        needs_side = mode in ("wal", "delete", "truncate", "persist")
        if needs_side and (mode == "delete" or not os.path.exists(side)) and not os.access(folder, os.W_OK | os.X_OK):
            raise StoreError(f"{folder} is not writable, so SQLite cannot create {os.path.basename(side)}: nothing was deleted")
        for table in extra:
            cols = {r[1] for r in self.conn.execute(f"PRAGMA table_info({quoted_identifier(table.name)})")}
            if not cols:
                raise StoreError(f"declared erase_extra table '{table.name}' does not exist in {shown}")
            for col, _ in table.match:
                if col not in cols:
                    raise StoreError(f"declared erase_extra column '{col}' does not exist in table '{table.name}'")
        self._refuse_triggers([*self._ERASE_CORE, *(t.name for t in extra)], shown)
        if dry_run:
            return []  # the checks above are the real run's; nothing below may change a thing
        self.conn.execute("PRAGMA secure_delete = ON")
        # Take and release the write lock: a read-only file or mount fails here, before any delete.
        _try_write_lock(self.conn)
        return []

    def _refuse_triggers(self, tables: list[str], shown: str) -> None:
        """A trigger on a table the erase deletes from would run the store's own code inside each
        thread's transaction (it could delete another thread's rows, unseen by the plan check, which
        counts only the statement's own rows): refused before anything is deleted. SQLite cannot turn
        triggers off for one connection on every Python this runs on. SqliteSaver creates none."""
        names = {t.lower() for t in tables}  # SQLite table names match without ASCII case
        found = [
            (str(name), str(table)) for name, table in self.conn.execute(
                "SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
            if isinstance(table, str) and table.lower() in names
        ]
        refuse_stored_code(shown, found, "triggers", "drop the triggers (the LangGraph saver creates none), or erase with the application's own tooling")

    @_translate_errors
    def thread_keys_with_prefix(self, prefix: str, *, limit: int | None = None) -> list[str]:
        if prefix:
            cond, params = self._prefix_where(prefix)
        else:
            cond, params = "1", []
        # Both tables in key order, merged: with a limit the scan stops after that many keys.
        bound = " ORDER BY 1 LIMIT ?" if limit is not None else ""
        rows = self.conn.execute(
            f"SELECT thread_id FROM checkpoints WHERE {cond} UNION SELECT thread_id FROM writes WHERE {cond}{bound}",
            [*params, *params] + ([limit] if limit is not None else []),
        )
        keys = set()
        for (raw,) in rows:
            if isinstance(raw, bytes):
                try:
                    raw = raw.decode("utf-8")
                except UnicodeDecodeError:
                    continue  # not the UTF-8 bytes of any key
            if isinstance(raw, str) and raw.startswith(prefix):
                keys.add(raw)
        return sorted(keys)  # code point order, the UTF-8 byte order

    def _counts(self, key: str, extra: tuple[ExtraTable, ...]) -> dict[str, int]:
        counts = {}
        for name, where, params in self._cascade(key, extra):
            if not where:
                counts[name] = 0
                continue
            counts[name] = self.conn.execute(f"SELECT count(*) FROM {quoted_identifier(name)} WHERE {where}", params).fetchone()[0]
        return counts

    @_translate_errors
    def erase_plan(self, key: str, extra: tuple[ExtraTable, ...]) -> ThreadErasePlan:
        from symfonic_cli.model.erase import ThreadErasePlan

        counts = self._counts(key, extra)
        where, params = _key_match(key)
        # Every id tested, not the least and greatest alone (stores/activity.py reads the times).
        n, first, last, joined = self.conn.execute(
            f"SELECT count(*), min(checkpoint_id), max(checkpoint_id), group_concat(checkpoint_id, ',') FROM checkpoints WHERE {where}", params
        ).fetchone()
        return ThreadErasePlan(key, counts, first, last, odd=bool(n) and not joined_ordered(joined, n))

    def _recheck_activity(self, key: str) -> tuple:
        """Inside the transaction: the greatest ordered id, and ``(id, ts)`` of every other checkpoint
        (its ``ts`` from the blob's head), for model/erase.py's check_still_idle."""
        from symfonic_cli.clock import ORDERED_ID_GLOB

        where, params = _key_match(key)
        ordered = f"checkpoint_id GLOB '{ORDERED_ID_GLOB}'"
        last, has_odd = self.conn.execute(
            f"SELECT max(CASE WHEN {ordered} THEN checkpoint_id END), max(NOT {ordered}) FROM checkpoints WHERE {where}", params
        ).fetchone()
        odd = []
        if has_odd:
            rows = self.conn.execute(
                f"SELECT rowid, checkpoint_id, type, length(checkpoint) FROM checkpoints WHERE ({where}) AND NOT {ordered}", params
            ).fetchall()
            odd = [(cid, self._blob_head(rowid, type_, size)[0]) for rowid, cid, type_, size in rows]
        return last, odd

    @_translate_errors
    def erase_thread(self, key: str, extra: tuple[ExtraTable, ...], *, between: Callable[[str], None] | None = None,
                     expected: dict[str, int] | None = None, idle_before: str | None = None) -> dict[str, int]:
        from symfonic_cli.model.erase import check_against_plan, check_still_idle

        deleted: dict[str, int] = {}
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            if idle_before is not None:
                last, odd = self._recheck_activity(key)
                check_still_idle(key, last, idle_before, odd)
            for name, where, params in self._cascade(key, extra):
                deleted[name] = self.conn.execute(f"DELETE FROM {quoted_identifier(name)} WHERE {where}", params).rowcount if where else 0
                if between is not None:
                    between(name)
            check_against_plan(expected, deleted, extra)
            self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        return deleted

    @_translate_errors
    def remaining_rows(self, key: str, extra: tuple[ExtraTable, ...]) -> dict[str, int]:
        return self._counts(key, extra)

    _vacuumed = False

    @_translate_errors
    def erase_finish(self, *, vacuum: bool) -> list[str]:
        """VACUUM (once, however often it is called) and the write-ahead log truncated; while a reader
        holds a snapshot it cannot be, and the -wal keeps erased text: WalKept (exit 12)."""
        from symfonic_cli.errors import WalKept

        notes = []
        if vacuum and not self._vacuumed:
            self.conn.execute("VACUUM")
            self._vacuumed = True
            notes.append("VACUUM rewrote the database file")
        busy, log, done = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy:
            raise WalKept(f"the {os.path.basename(self.location.path)}-wal file still holds erased text: a reader holds a "
                          "snapshot, so the write-ahead log could not be truncated; the text stays until it is (the same "
                          "command again with --wait waits for the readers; the application's last connection closing "
                          "truncates it too)", notes=notes)
        if log >= 0:  # -1: not in WAL mode, no -wal file
            notes.append("the write-ahead log was truncated: no erased text remains in the -wal file")
        return notes



def _key_match(key: str) -> tuple[str, tuple[Any, ...]]:
    """The WHERE clause and parameters selecting every row of ``key``: thread_id stored as text
    (what the saver writes) or as a BLOB of the key's UTF-8 bytes. Under the saver's TEXT column
    a number is stored as its text, so that form is the text one. COLLATE BINARY: a column
    declared NOCASE (a crafted file) must not fold keys; the primary key still serves it."""
    return "thread_id COLLATE BINARY IN (?, ?)", (key, key.encode("utf-8", "surrogatepass"))


